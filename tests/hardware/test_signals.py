"""The LEDs and the buzzer on gpiozero's MockFactory: the exact pin states at exact times for
every cue, stepped with an injected clock (no sleeps)."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest
from gpiozero import LED
from gpiozero.pins.mock import MockFactory, MockPWMPin
from gpiozero.tones import Tone

from referee.errors import PinMapError, SignalsError
from referee.hardware import signals as signals_module
from referee.hardware.cues import TUNES, Cue
from referee.hardware.pinmap import DEFAULT_PINS, BuzzerPin, PinMap, TurnRgb
from referee.hardware.signals import GpioSignals, TerminalSignals, Ticker, open_signals
from referee.rules.core import Color

FIRST, SECOND = Color.FIRST, Color.SECOND
LEDS = {"g": 17, "r": 27, "a": 22, "1": 23, "2": 24}
BUZZER = 18

Step = tuple[float, str, str | None]  # time, lit LEDs ("g", "r", "a", "1", "2" or "-"), note


@pytest.fixture
def factory() -> MockFactory:
    return MockFactory(pin_class=MockPWMPin)  # TonalBuzzer needs PWM


@pytest.fixture
def board(factory: MockFactory) -> Iterator[GpioSignals]:
    with GpioSignals(DEFAULT_PINS, pin_factory=factory) as signals:
        signals.show(Cue.TURN, 0.0, player=FIRST)
        yield signals


def seen(factory: MockFactory) -> tuple[str, str | None]:
    lit = "".join(name if factory.pin(pin).state else "-" for name, pin in LEDS.items())
    buzzer = factory.pin(BUZZER)
    if buzzer.frequency is None:
        assert buzzer.state == 0
        return lit, None
    assert buzzer.state == 0.5  # a square wave while it sounds
    return lit, Tone.from_frequency(buzzer.frequency).note


def play(signals: GpioSignals, factory: MockFactory, cues: list[tuple[float, Cue, Color | None]],
         times: list[float]) -> list[Step]:
    """Show the cues at their times and tick at `times`; what the pins were after each tick."""
    steps: list[Step] = []
    events = sorted([(t, 0, cue, player) for t, cue, player in cues] +
                    [(t, 1, None, None) for t in times], key=lambda event: (event[0], event[1]))
    for t, kind, cue, player in events:
        if kind == 0 and cue is not None:
            signals.show(cue, t, player=player)
        else:
            signals.tick(t)
            steps.append((t, *seen(factory)))
    return steps


def check(signals: GpioSignals, factory: MockFactory, cues: list[tuple[float, Cue, Color | None]],
          expected: list[Step]) -> None:
    assert play(signals, factory, cues, [t for t, _, _ in expected]) == expected


def test_before_any_cue_only_the_turn_light_is_on(board: GpioSignals, factory: MockFactory):
    check(board, factory, [], [(0.0, "---1-", None), (50.0, "---1-", None)])


def test_accepted(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ACCEPTED, None)], [
        (10.0, "g--1-", "E6"), (10.079, "g--1-", "E6"), (10.08, "g--1-", None),
        (10.999, "g--1-", None), (11.0, "---1-", None), (30.0, "---1-", None)])


def test_illegal_blinks_red_until_cleared(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ILLEGAL, None)], [
        (10.0, "-r-1-", "A3"), (10.199, "-r-1-", "A3"), (10.2, "---1-", "A3"), (10.4, "-r-1-", None),
        (10.5, "-r-1-", "A3"), (10.6, "---1-", "A3"), (10.899, "-r-1-", "A3"), (10.9, "-r-1-", None),
        (60.0, "-r-1-", None), (60.2, "---1-", None)])


def test_illegal_pin_history_has_no_glitch(board: GpioSignals, factory: MockFactory):
    factory.pin(27).clear_states()
    factory.pin(BUZZER).clear_states()
    play(board, factory, [(10.0, Cue.ILLEGAL, None)], [10 + n / 100 for n in range(101)])
    assert [state.state for state in factory.pin(27).states] == [False, 1, 0, 1, 0, 1, 0]
    assert [state.state for state in factory.pin(BUZZER).states] == [0, 0.5, 0, 0.5, 0]


def test_unreadable_winks_red(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.UNREADABLE, None)], [
        (10.0, "-r-1-", "C5"), (10.1, "---1-", "C5"), (10.25, "---1-", None),
        (11.0, "-r-1-", None), (11.1, "---1-", None)])


def test_no_picture_blinks_red_slowly(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.NO_PICTURE, None)], [
        (10.0, "-r-1-", "C5"), (10.25, "-r-1-", None), (10.5, "---1-", None), (11.0, "-r-1-", None)])


def test_camera_lost_holds_red_and_sounds_the_alarm(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.CAMERA_LOST, None)], [
        (10.0, "-r-1-", "A5"), (10.15, "-r-1-", "A4"), (10.3, "-r-1-", "A5"), (10.45, "-r-1-", "A4"),
        (10.6, "-r-1-", "A5"), (10.75, "-r-1-", "A4"), (10.9, "-r-1-", None), (99.0, "-r-1-", None)])


ATTENTION_TUNE = [(0.0, "A5"), (0.06, None), (0.12, "C#6"), (0.18, None), (0.24, "E6"), (0.3, None)]


def test_promote_blinks_amber(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.PROMOTE, None)],
          [(10 + t, "--a1-", note) for t, note in ATTENTION_TUNE]
          + [(10.5, "---1-", None), (11.0, "--a1-", None), (11.5, "---1-", None)])


def test_roll_pending_double_blinks_amber(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ROLL_PENDING, None)], [
        (10.0, "--a1-", "A5"), (10.15, "---1-", "C#6"), (10.3, "--a1-", None), (10.45, "---1-", None),
        (10.999, "---1-", None), (11.0, "--a1-", None), (11.15, "---1-", None), (11.3, "--a1-", None)])


def test_set_up_holds_amber(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.SET_UP, None)],
          [(10.0, "--a1-", "A5"), (10.3, "--a1-", None), (500.0, "--a1-", None)])


def test_restored_clears_red_and_amber_silently(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ILLEGAL, None), (10.0, Cue.PROMOTE, None),
                           (12.0, Cue.RESTORED, None)],
          [(10.1, "-ra1-", None), (12.0, "---1-", None), (13.0, "---1-", None)])


def test_an_accepted_move_clears_an_illegal_one(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ILLEGAL, None), (11.0, Cue.ACCEPTED, None),
                           (11.0, Cue.TURN, SECOND)],
          [(11.0, "g---2", "E6"), (11.2, "g---2", None), (12.0, "----2", None)])


def test_turn(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.TURN, SECOND), (20.0, Cue.TURN, FIRST)],
          [(10.0, "----2", None), (19.9, "----2", None), (20.0, "---1-", None)])


def test_win_blinks_the_winners_light(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ILLEGAL, None), (11.0, Cue.WIN, SECOND)], [
        (11.0, "g---2", "C6"), (11.1, "g---2", None), (11.14, "g---2", "E6"), (11.25, "g----", None),
        (11.28, "g----", "G6"), (11.38, "g----", None), (11.42, "g----", "C7"), (11.5, "g---2", "C7"),
        (11.92, "g----", None), (100.0, "g---2", None), (100.25, "g----", None)])


def test_draw_alternates_the_turn_lights(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.DRAW, None)], [
        (10.0, "g--1-", "G5"), (10.25, "g--1-", None), (10.5, "g---2", "G5"), (10.75, "g---2", None),
        (11.0, "g--1-", None), (11.5, "g---2", None)])


def test_taken_back_ends_the_game_over_lights(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.WIN, FIRST), (12.0, Cue.TAKEN_BACK, None)], [
        (11.6, "g--1-", None), (12.0, "---1-", "E6"), (12.1, "---1-", None), (12.15, "---1-", "A5"),
        (12.25, "---1-", None)])


def test_new_game_lights_everything_then_starts_dark(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.ILLEGAL, None), (10.0, Cue.PROMOTE, None),
                           (12.0, Cue.NEW_GAME, None), (13.0, Cue.TURN, FIRST)], [
        (12.0, "gra12", "E6"), (12.08, "gra12", None), (12.499, "gra12", None), (12.5, "-----", None),
        (13.0, "---1-", None)])


def test_pins_change_only_when_told(board: GpioSignals, factory: MockFactory):
    board.show(Cue.ACCEPTED, 10.0)
    assert seen(factory) == ("g--1-", "E6")
    assert seen(factory) == ("g--1-", "E6")  # no background thread turned anything off


def test_turn_and_win_need_a_player_and_others_take_none(board: GpioSignals):
    with pytest.raises(ValueError, match="TURN needs player"):
        board.show(Cue.TURN, 1.0)
    with pytest.raises(ValueError, match="ACCEPTED takes no player"):
        board.show(Cue.ACCEPTED, 1.0, player=FIRST)


def rhythm(tune: str) -> list[tuple[bool, float]]:
    """Run-lengths of an active buzzer playing `tune`, sampled every millisecond."""
    factory = MockFactory()  # an active buzzer needs no PWM
    pins = PinMap(17, 27, 22, buzzer=BuzzerPin(18, tonal=False))
    cue = {"accepted": Cue.ACCEPTED, "illegal": Cue.ILLEGAL, "unreadable": Cue.UNREADABLE,
           "attention": Cue.PROMOTE, "win": Cue.WIN, "draw": Cue.DRAW, "alarm": Cue.CAMERA_LOST,
           "undo": Cue.TAKEN_BACK}[tune]
    runs: list[tuple[bool, float]] = []
    with GpioSignals(pins, pin_factory=factory) as signals:
        signals.show(cue, 0.0, player=FIRST if cue is Cue.WIN else None)
        for ms in range(1200):
            signals.tick(ms / 1000)
            on = bool(factory.pin(18).state)
            if runs and runs[-1][0] == on:
                runs[-1] = (on, runs[-1][1] + 0.001)
            else:
                runs.append((on, 0.001))
    return [(on, round(seconds, 3)) for on, seconds in runs[:-1]]  # the last run is the silence after


def test_an_active_buzzer_keeps_each_tune_s_rhythm_and_they_differ():
    rhythms = {name: rhythm(name) for name in TUNES}
    assert rhythms["accepted"] == [(True, 0.08)]
    assert rhythms["illegal"] == [(True, 0.4), (False, 0.1), (True, 0.4)]
    assert rhythms["attention"] == [(True, 0.06), (False, 0.06)] * 2 + [(True, 0.06)]
    assert rhythms["alarm"] == [(True, 0.9)]
    assert len({tuple(runs) for runs in rhythms.values()}) == len(TUNES)


def test_an_rgb_turn_led_shows_the_players_colours():
    factory = MockFactory()
    pins = PinMap(17, 27, 22, turn=TurnRgb(5, 6, 13, first_colour="yellow", second_colour="blue"))

    def rgb() -> tuple[int, int, int]:
        return (int(factory.pin(5).state), int(factory.pin(6).state), int(factory.pin(13).state))

    with GpioSignals(pins, pin_factory=factory) as signals:
        assert rgb() == (0, 0, 0)
        signals.show(Cue.TURN, 1.0, player=FIRST)
        assert rgb() == (1, 1, 0)
        signals.show(Cue.TURN, 2.0, player=SECOND)
        assert rgb() == (0, 0, 1)
        signals.show(Cue.DRAW, 3.0)
        assert rgb() == (1, 1, 0)
        signals.tick(3.5)
        assert rgb() == (0, 0, 1)
        signals.show(Cue.NEW_GAME, 4.0)
        assert rgb() == (1, 1, 1)  # the lamp test lights every colour
        signals.tick(4.5)
        assert rgb() == (0, 0, 0)


def test_a_pin_in_use_fails_cleanly_and_releases_the_others(factory: MockFactory):
    squatter = LED(24, pin_factory=factory)
    with pytest.raises(SignalsError, match=r"^cannot drive the second player's LED on GPIO24: "):
        GpioSignals(DEFAULT_PINS, pin_factory=factory)
    squatter.close()
    # every pin it had claimed was given back: they can all be used again
    again = [LED(pin, pin_factory=factory) for pin in (17, 27, 22, 23, 24)]
    for led in again:
        led.close()
    with GpioSignals(DEFAULT_PINS, pin_factory=factory):
        pass


def test_a_tonal_buzzer_on_a_pin_without_pwm_beeps_on_and_off_instead(
        caplog: pytest.LogCaptureFixture):
    """gpiozero's MockFactory with its plain pins (GPIOZERO_PIN_FACTORY=mock) has no PWM: the
    buzzer still sounds each tune's rhythm, on one pitch, and the log says why."""
    factory = MockFactory()  # plain MockPin: no PWM
    with GpioSignals(DEFAULT_PINS, pin_factory=factory) as signals:
        signals.show(Cue.ILLEGAL, 0.0)
        signals.tick(0.05)
        assert factory.pin(BUZZER).state == 1
        signals.tick(5.0)
        assert factory.pin(BUZZER).state == 0
    assert "the buzzer on GPIO18: this pin factory (MockFactory) has no PWM" in caplog.text
    LED(18, pin_factory=factory).close()  # released


def test_a_device_that_fails_without_a_message_is_still_explained(monkeypatch: pytest.MonkeyPatch):
    """gpiozero raises some errors bare (PinPWMUnsupported()): the line never ends at a colon."""
    from gpiozero.exc import PinPWMUnsupported

    def no_led(*args: object, **kwargs: object) -> None:
        raise PinPWMUnsupported()

    monkeypatch.setattr("gpiozero.LED", no_led)
    with pytest.raises(SignalsError) as error:
        GpioSignals(DEFAULT_PINS, pin_factory=MockFactory(pin_class=MockPWMPin))
    assert str(error.value) == ("cannot drive the green LED on GPIO17: this pin factory has no "
                                "PWM on it (PinPWMUnsupported)")


def test_close_switches_everything_off(factory: MockFactory):
    signals = GpioSignals(DEFAULT_PINS, pin_factory=factory)
    signals.show(Cue.NEW_GAME, 0.0)
    assert seen(factory) == ("gra12", "E6")
    signals.close()
    assert all(factory.pin(pin).function == "input" for pin in (*LEDS.values(), BUZZER))
    assert factory.pin(BUZZER).frequency is None
    signals.close()  # twice is fine


def test_without_gpio_the_cues_go_to_the_terminal(monkeypatch: pytest.MonkeyPatch):
    def no_gpio() -> None:
        raise ImportError("Unable to load any default pin factory!")

    monkeypatch.setattr(signals_module, "_default_factory", no_gpio)
    out = io.StringIO()
    with open_signals(None, stream=out, names=("Gold", "Silver")) as signals:
        assert isinstance(signals, TerminalSignals)
        signals.show(Cue.TURN, 0.0, player=FIRST)
        signals.show(Cue.ACCEPTED, 1.0)
        signals.show(Cue.ILLEGAL, 2.0)
        signals.show(Cue.PROMOTE, 3.0)
        signals.show(Cue.WIN, 4.0, player=SECOND)
        signals.tick(5.0)
        assert signals.take_actions() == []
    assert out.getvalue().splitlines() == [
        "[turn] Gold to move", "[green] move accepted", "[red] illegal move: put the pieces back",
        "[amber] promote the piece", "[win] Silver wins"]
    with pytest.raises(SignalsError, match=r"no GPIO here .*python3-lgpio.*gpio group"):
        open_signals(None, require_gpio=True)
    said: list[str] = []
    with open_signals(None, stream=out, say=said.append):
        pass
    assert said == ["no GPIO here (Unable to load any default pin factory!): the cues are shown "
                    "in this terminal"]


def test_a_bad_pin_map_is_refused_even_without_gpio(tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(signals_module, "_default_factory", lambda: (_ for _ in ()).throw(ImportError()))
    path = tmp_path / "pins.toml"
    path.write_text("[leds]\ngreen = 17\nred = 17\namber = 22\n")
    with pytest.raises(PinMapError, match=r"leds\.red: GPIO17 is already used by leds\.green"):
        open_signals(path)


def test_open_signals_with_a_factory_drives_gpio(factory: MockFactory):
    with open_signals(None, pin_factory=factory) as signals:
        assert isinstance(signals, GpioSignals)
        signals.show(Cue.SET_UP, 0.0)
        assert seen(factory) == ("--a--", "A5")


def test_the_ticker_ticks_until_closed(factory: MockFactory):
    ticked = threading.Event()

    class Recorder:
        def __init__(self) -> None:
            self.times: list[float] = []

        def tick(self, now: float) -> None:
            self.times.append(now)
            ticked.set()

    recorder = Recorder()
    ticker = Ticker(recorder, clock=lambda: 7.0, period_s=0.001)  # type: ignore[arg-type]
    assert ticked.wait(5.0)
    ticker.close()
    count = len(recorder.times)
    assert count >= 1 and set(recorder.times) == {7.0}
    ticker.close()
    assert len(recorder.times) == count  # stopped


@pytest.mark.hardware
def test_every_cue_on_the_real_board():
    """On the Pi: look and listen. Each cue plays for two seconds in real time."""
    import time

    with open_signals(None, require_gpio=True) as signals, Ticker(signals):
        for cue in Cue:
            signals.show(cue, time.monotonic(), player=FIRST if cue in (Cue.TURN, Cue.WIN) else None)
            time.sleep(2.0)


def test_camera_back_clears_only_camera_trouble(board: GpioSignals, factory: MockFactory):
    check(board, factory, [(10.0, Cue.CAMERA_LOST, None), (12.0, Cue.CAMERA_BACK, None),
                           (20.0, Cue.ILLEGAL, None), (21.0, Cue.CAMERA_BACK, None)], [
        (11.0, "-r-1-", None), (12.0, "---1-", "E6"), (12.08, "---1-", None),
        (20.0, "-r-1-", "A3"), (21.0, "---1-", None), (21.2, "-r-1-", None)])  # silent; still red
