"""The referee's state machine: setup → playing → game over, fed one steady `Reading` at a
time. It validates every move through the rules before it is recorded and never records a
move it cannot explain clearly."""

from __future__ import annotations

import enum
from dataclasses import replace
from typing import Any

import numpy as np

from referee.app.events import Event, EventKind
from referee.errors import RefereeError
from referee.rules.core import Match
from referee.tracking.decoding import Decoder, Inference, Verdict
from referee.tracking.reading import ColorModel, Reading

MIN_COLOR_SEPARATION = 3.0  # two players' colours closer than this (in spreads) cannot be told apart


class Phase(enum.Enum):
    SETUP = "setup"
    PLAYING = "playing"
    CORRECTING = "waiting for the last position or a legal move"
    RESTORING = "waiting for the position before the move taken back"
    OVER = "game over"


class Referee:
    def __init__(self, decoder: Decoder, *, match: Match[Any, Any] | None = None) -> None:
        self.game: Any = decoder.game
        self.inferer = decoder
        self.match: Match[Any, Any] = match if match is not None else Match(self.game)
        self.phase = Phase.SETUP
        self.colors: ColorModel | None = None
        self._asked_to_set_up = False
        self._unreadable = ""  # the squares of the last "unreadable", until anything else
        self._under_way: Any = None  # the ply last seen under way, until one is accepted
        self._glimpse: Reading | None = None  # the last reading since then that told nothing
        self.last_verdict: Verdict | None = None  # what the last reading in play was read as

    def on_reading(self, reading: Reading) -> list[Event]:
        """Judge one steady reading; returns the events it causes (often none)."""
        if self.phase is Phase.OVER:
            return []
        if self.phase is Phase.SETUP:
            return self._setup(reading)
        inference = self.inspect(reading)
        self.last_verdict = inference.verdict
        events = self._judge(inference, reading)
        if inference.verdict in (Verdict.UNREADABLE, Verdict.ILLEGAL):
            self._glimpse = reading
        return self._once(events)

    def _once(self, events: list[Event]) -> list[Event]:
        """The same "unreadable" (or "move incomplete") twice in a row is said once: the board
        is read again after every stir, and the players have been told."""
        if len(events) == 1 and events[0].kind in (EventKind.UNREADABLE, EventKind.INCOMPLETE):
            said = f"{events[0].kind.name} {events[0].detail}"
            if said == self._unreadable:
                return []
            self._unreadable = said
        elif events:
            self._unreadable = ""
        return events

    def inspect(self, reading: Reading) -> Inference:
        """What the reading would mean now, without acting on it."""
        previous = self.match.positions[-2] if len(self.match.positions) > 1 else None
        return self.inferer.infer(reading, self.match.position, self.colors, previous)

    def take_back(self, frame_index: int, time_s: float) -> list[Event]:
        """Take the last move back by hand (the button); the board must then show the
        position before it."""
        if not self.match.moves or self.phase is Phase.SETUP:
            return []
        move = self._undo_last()
        self.phase = Phase.RESTORING
        return [Event(EventKind.TAKE_BACK, frame_index, round(time_s, 3), len(self.match.moves),
                      move, "by the button")]

    def confirm(self, frame_index: int, time_s: float) -> list[Event]:
        """The players vouch for the board (the button's short press) where the referee could
        not read a ply off it: unreadable, or illegal (plies made while it looked away, a
        square in doubt). The plies, up to three, whose board the last such reading clearly
        shows are recorded; else the players are told why, and the last position must come
        back."""
        reading = self._glimpse
        if reading is None or self.phase not in (Phase.PLAYING, Phase.CORRECTING) \
                or self.last_verdict not in (Verdict.UNREADABLE, Verdict.ILLEGAL):
            return []
        now = replace(reading, frame_index=frame_index, time_s=time_s)
        shown = self.inferer.plies_shown(reading, self.match.position, self.colors)
        if isinstance(shown, str):  # the last position must come back, as after an illegal move
            self.phase = Phase.CORRECTING
            return [self._event(EventKind.ILLEGAL, now, detail=f"{shown}: put back the last position")]
        plies, margin = shown
        events: list[Event] = []
        for ply in plies:
            events += self._accept(Inference(Verdict.MOVE, ply, margin), now)
            if self.match.is_over():
                break
        return [replace(e, detail=e.detail or "confirmed by the button") for e in events]

    # --- setup ----------------------------------------------------------------------------

    def shows_setup(self, reading: Reading, *, clearly: bool = True) -> bool:
        """Whether the board shows the position to start from (`clearly`: every square
        read with confidence)."""
        expected, _ = self.inferer.appearance(self.match.position)
        seen = np.argmax(reading.probabilities, axis=1)
        confident = reading.confidence() >= self.inferer.settings.min_square_confidence
        return bool((np.array_equal(seen, expected) and (confident.all() or not clearly))
                    or self._resumed_a_ply_on(reading))

    def _resumed_a_ply_on(self, reading: Reading) -> bool:
        """A resumed game whose board is a ply past the logged position, or part way through
        one (the players went on while the referee was down: a reboot mid-acquisition), in a
        game whose owners need no colours learnt from the board: the board clearly shows
        that ply."""
        if not self.match.moves or self.inferer.uses_colours:
            return False
        return self.inspect(reading).verdict in (Verdict.MOVE, Verdict.INCOMPLETE)

    def _setup(self, reading: Reading) -> list[Event]:
        """Wait until the board shows the position to start from (the start, or the logged
        position of a resumed game), then learn each player's piece colour from it. A square
        read unsurely does not hold the game up: every square read as the start has it."""
        position = self.match.position
        if not self.shows_setup(reading, clearly=False):
            if self._asked_to_set_up:
                return []
            self._asked_to_set_up = True
            what = "the start position" if not self.match.moves else "the logged position"
            return [self._event(EventKind.SET_UP, reading, detail=f"set up {what}")]
        if self.inferer.uses_colours:
            _, owners = self.inferer.appearance(position)
            colors = ColorModel.learn(reading, {sq: int(o) for sq, o in enumerate(owners)
                                                if o >= 0})
            if colors.separation < MIN_COLOR_SEPARATION:
                self._asked_to_set_up = False
                return [self._event(EventKind.UNREADABLE, reading,
                                    detail="the two players' pieces look alike: use two colours")]
            self.colors = colors
        self.phase = Phase.PLAYING
        turn = self.game.player_names[position.turn]
        started = [self._event(EventKind.STARTED, reading, detail=f"{turn} to move")]
        if self._resumed_a_ply_on(reading):
            return started + self._once(self._judge(self.inspect(reading), reading))
        return started

    # --- playing --------------------------------------------------------------------------

    def _judge(self, inference: Inference, reading: Reading) -> list[Event]:
        verdict = inference.verdict
        if self.phase is Phase.RESTORING:  # only the restored position ends it
            if verdict is not Verdict.NO_CHANGE:
                return []
            self.phase = Phase.PLAYING
            return [self._event(EventKind.RESTORED, reading)]
        if verdict is Verdict.MOVE:
            return self._accept(self._as_seen_under_way(inference), reading)
        if verdict is Verdict.TWO_MOVES:
            inference = self._in_the_order_glimpsed(inference)
            assert inference.second is not None
            events = self._accept(inference, reading)
            if self.phase is Phase.OVER:
                return events
            if inference.second_pending:  # the reply is on the board, its roll to come
                move = self.game.move_text(self.match.position, inference.second)
                return [*events, self._event(EventKind.ROLL_PENDING, reading, move=move)]
            second = Inference(Verdict.MOVE, inference.second, inference.margin)
            return events + self._accept(second, reading)
        if verdict is Verdict.INCOMPLETE:  # a ply under way: say what is still to change
            if not self._same_after(self._under_way, inference.move):
                self._under_way = inference.move  # (the first look tells most: kept)
            if not inference.squares:
                return []
            position = self.match.position
            return [self._event(EventKind.INCOMPLETE, reading, move=self.game.move_text(
                position, inference.move), detail=self.inferer.incomplete_detail(
                    position, inference.move, self._squares(inference)))]
        if verdict is Verdict.NO_CHANGE:
            if self.phase is Phase.CORRECTING:
                self.phase = Phase.PLAYING
                return [self._event(EventKind.RESTORED, reading)]
            return []
        if verdict is Verdict.TAKE_BACK:
            undone = self._undo_last()
            self.phase = Phase.PLAYING
            events = [self._event(EventKind.TAKE_BACK, reading, move=undone)]
            if inference.move is None:
                return events
            return events + self._accept(inference, reading)
        if verdict is Verdict.ILLEGAL:
            first = self.phase is not Phase.CORRECTING
            self.phase = Phase.CORRECTING
            if not first:
                return []
            return [self._event(EventKind.ILLEGAL, reading, detail=self._squares(inference))]
        if verdict in (Verdict.PROMOTE, Verdict.ROLL_PENDING):
            assert inference.move is not None
            kind = EventKind.PROMOTE if verdict is Verdict.PROMOTE else EventKind.ROLL_PENDING
            move = self.game.move_text(self.match.position, inference.move)
            return [self._event(kind, reading, move=move)]
        return [self._event(EventKind.UNREADABLE, reading, detail=self._squares(inference))]

    def _as_seen_under_way(self, inference: Inference) -> Inference:
        """Two plies that leave the same board look the same once made (Renaissance: a
        push-in, and a marker placed where the push leaves one; or any ply that ends phase 1,
        the board cleared, whoever it gave the last polyomino to); where the board was seen
        part way through one of them, that one was made."""
        seen, self._under_way = self._under_way, None
        if seen is None or not self._same_after(seen, inference.move):
            return inference
        return replace(inference, move=seen)

    def _in_the_order_glimpsed(self, inference: Inference) -> Inference:
        """Two plies read at once that leave the same board in either order (Renaissance: two
        tiles laid before the board was still): where a reading between them, unclear as it
        was, shows the second alone clearly better than the first, the second came first."""
        glimpse, position, game = self._glimpse, self.match.position, self.game
        if glimpse is None or inference.second_pending:
            return inference
        middle = game.play(position, inference.move)
        after = game.play(middle, inference.second)
        try:  # (as told, each ply names what it lays: the same text, another order)
            first = game.parse_move(position, game.move_text(middle, inference.second))
            swapped = game.play(position, first)
            second = game.parse_move(swapped, game.move_text(position, inference.move))
        except RefereeError:
            return inference
        if game.play(swapped, second) != after:
            return inference
        fit = self.inferer.fit
        lead = fit(glimpse, swapped, self.colors) - fit(glimpse, middle, self.colors)
        if lead < self.inferer.settings.min_margin:
            return inference
        return replace(inference, move=first, second=second)

    def _same_after(self, a: Any, b: Any) -> bool:
        """Whether plies `a` and `b` (either may be None) leave the same board to be seen
        (the positions may differ where the board does not show it: the hands)."""
        if a is None or b is None:
            return False
        if a == b:
            return True
        position, appearance = self.match.position, self.inferer.appearance
        after_a = appearance(self.game.play(position, a))
        after_b = appearance(self.game.play(position, b))
        return all(np.array_equal(x, y) for x, y in zip(after_a, after_b, strict=True))

    def _accept(self, inference: Inference, reading: Reading) -> list[Event]:
        assert inference.move is not None
        before = self.match.position
        self.match.push(inference.move)  # validated again by the rules
        self._glimpse = None
        self.phase = Phase.PLAYING
        events = [self._event(EventKind.ACCEPTED, reading, move=self.game.move_text(
            before, inference.move), confidence=inference.margin)]
        if self.match.outcome is None and (forced := self.inferer.forced_move(
                self.match.position)) is not None:
            player = self.game.player_names[self.match.position.turn]
            text = self.game.move_text(self.match.position, forced)
            self.match.push(forced)
            events.append(self._event(EventKind.ACCEPTED, reading, move=text,
                                      detail=f"{player} cannot move"))
        outcome = self.match.outcome
        if outcome is not None:
            self.phase = Phase.OVER
            result = outcome.result(self.game.player_names)
            events.append(self._event(EventKind.GAME_OVER, reading,
                                      detail=f"{result} ({outcome.termination.value})"))
        return events

    def _undo_last(self) -> str:
        """Take the last move off the match; returns it in the designer's notation."""
        self._under_way = self._glimpse = None  # (of the position left)
        before = self.match.positions[-2]
        return str(self.game.move_text(before, self.match.pop()))

    def _squares(self, inference: Inference) -> str:
        names = [self.game.geometry.square_name(s) for s in inference.squares]
        return "squares " + " ".join(names) if names else ""

    def _event(self, kind: EventKind, reading: Reading, *, move: str | None = None,
               detail: str = "", confidence: float = 0.0) -> Event:
        return Event(kind, reading.frame_index, round(reading.time_s, 3), len(self.match.moves),
                     move, detail, round(confidence, 2))
