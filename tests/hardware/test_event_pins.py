"""Every referee event, as `referee live` announces it (`cues_for` → `GpioSignals.show`), on
gpiozero's MockFactory: the exact LEDs and note just after the event and two seconds later,
stepped with an injected clock."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.app.announce import cues_for
from referee.app.events import Event, EventKind
from referee.hardware.cues import Cue
from referee.hardware.pinmap import DEFAULT_PINS
from referee.hardware.signals import GpioSignals
from referee.rules import Color, Match
from referee.rules.rinne import RINNE
from tests.hardware.test_signals import seen


def playing() -> Match[Any, Any]:
    return Match(RINNE)


def after_one_ply() -> Match[Any, Any]:
    match: Match[Any, Any] = Match(RINNE)
    match.push_text("Ke2-e3=N")
    return match


def won() -> Match[Any, Any]:
    match: Match[Any, Any] = Match(RINNE, RINNE.from_placement({"c5": "R", "a1": "k", "e1": "k"}))
    match.push_text("Rc5-c6=Q")
    return match


def drawn() -> Any:  # no short Rinne game ends in a draw: a match that says it did
    return SimpleNamespace(moves=[None] * 40, is_over=lambda: True,
                           outcome=SimpleNamespace(winner=None))


# (event kind, plies after it, the match after it, LEDs + note at +0.05 s, LEDs at +2.1 s);
# LEDs as green, red, amber, first player's, second player's ("-": off).
CASES = [
    (EventKind.SET_UP, 0, playing, ("--a1-", "A5"), "--a1-"),  # amber steady
    (EventKind.STARTED, 0, playing, ("---1-", None), "---1-"),
    (EventKind.ACCEPTED, 1, after_one_ply, ("g---2", "E6"), "----2"),  # green for 1 s
    (EventKind.ILLEGAL, 0, playing, ("-r-1-", "A3"), "-r-1-"),  # red blinks 0.2 s on/off
    (EventKind.RESTORED, 0, playing, ("---1-", None), "---1-"),
    (EventKind.UNREADABLE, 0, playing, ("-r-1-", "C5"), "---1-"),  # red winks 0.1 s a second
    (EventKind.NO_BOARD, 0, playing, ("-r-1-", "C5"), "---1-"),
    (EventKind.PROMOTE, 0, playing, ("--a1-", "A5"), "--a1-"),  # amber blinks 0.5 s
    (EventKind.INCOMPLETE, 0, playing, ("--a1-", "A5"), "--a1-"),  # amber blinks: finish the move
    (EventKind.ROLL_PENDING, 0, playing, ("--a1-", "A5"), "--a1-"),  # amber double-blinks
    (EventKind.TAKE_BACK, 0, playing, ("---1-", "E6"), "---1-"),  # a falling two-note
    (EventKind.GAME_OVER, 1, won, ("g--1-", "C6"), "g--1-"),  # the winner's light blinks
    (EventKind.GAME_OVER, 40, drawn, ("g--1-", "G5"), "g--1-"),  # the turn lights alternate
]


@pytest.fixture
def factory() -> MockFactory:
    return MockFactory(pin_class=MockPWMPin)


@pytest.fixture
def board(factory: MockFactory) -> Iterator[GpioSignals]:
    with GpioSignals(DEFAULT_PINS, pin_factory=factory) as signals:
        signals.show(Cue.TURN, 0.0, player=Color.FIRST)
        yield signals


def test_every_event_kind_is_covered():
    assert {kind for kind, *_ in CASES} == set(EventKind)


@pytest.mark.parametrize(("kind", "ply", "match", "at_once", "later"), CASES,
                         ids=[f"{c[0].name}-{c[2].__name__}" for c in CASES])
def test_each_event_on_the_pins(board: GpioSignals, factory: MockFactory, kind: EventKind,
                                ply: int, match: Any, at_once: tuple[str, str | None],
                                later: str):
    event = Event(kind, 30, 1.0, ply)
    for cue, player in cues_for(event, match()):
        board.show(cue, 1.0, player=player)
    board.tick(1.05)
    assert seen(factory) == at_once
    board.tick(3.1)
    assert seen(factory) == (later, None)
