"""The button: short press confirms, long press starts a new game, double press takes back.
Driven through gpiozero's MockFactory pins with an injected clock, and as a pure decoder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import given
from hypothesis import strategies as st

from referee.hardware.button import ButtonAction, ButtonDecoder
from referee.hardware.pinmap import DEFAULT_PINS
from referee.hardware.signals import GpioSignals

CONFIRM, NEW_GAME, TAKE_BACK = ButtonAction.CONFIRM, ButtonAction.NEW_GAME, ButtonAction.TAKE_BACK
BUTTON = 25


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Hand:
    """Presses the real (mock) pin at given times and asks the signals what they decoded."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.signals = GpioSignals(DEFAULT_PINS, pin_factory=self.factory, clock=self.clock)
        self.pin = self.factory.pin(BUTTON)

    def press(self, t: float) -> None:
        self.clock.now = t
        self.pin.drive_low()  # the button shorts the pulled-up pin to ground

    def release(self, t: float) -> None:
        self.clock.now = t
        self.pin.drive_high()

    def tick(self, t: float) -> list[ButtonAction]:
        self.clock.now = t
        self.signals.tick(t)
        return self.signals.take_actions()


@pytest.fixture
def hand() -> Iterator[Hand]:
    hand = Hand()
    yield hand
    hand.signals.close()


def test_the_button_idles_high_on_its_pull_up(hand: Hand):
    assert hand.pin.state is True and hand.pin.pull == "up"
    assert hand.tick(5.0) == []


def test_a_short_press_confirms_once_the_double_press_window_has_passed(hand: Hand):
    hand.press(1.0)
    hand.release(1.2)
    assert hand.tick(1.2) == []
    assert hand.tick(1.7) == []  # 0.5 s after release: a second press would still count
    assert hand.tick(1.71) == [CONFIRM]
    assert hand.tick(5.0) == []


def test_a_long_press_is_a_new_game_while_still_held(hand: Hand):
    hand.press(1.0)
    assert hand.tick(2.99) == []
    assert hand.tick(3.0) == [NEW_GAME]
    assert hand.tick(4.0) == []
    hand.release(6.0)
    assert hand.tick(9.0) == []  # letting go afterwards is not also a confirm


def test_a_long_press_released_between_ticks_is_still_a_new_game(hand: Hand):
    hand.press(1.0)
    hand.release(3.5)
    assert hand.tick(3.6) == [NEW_GAME]
    assert hand.tick(9.0) == []


def test_a_double_press_takes_back_at_the_second_press(hand: Hand):
    hand.press(1.0)
    hand.release(1.1)
    hand.press(1.5)
    assert hand.tick(1.55) == [TAKE_BACK]
    hand.release(1.6)
    assert hand.tick(9.0) == []  # neither press is also a confirm


def test_two_presses_further_apart_are_two_confirms(hand: Hand):
    hand.press(1.0)
    hand.release(1.1)
    hand.press(1.7)
    hand.release(1.8)
    assert hand.tick(1.8) == [CONFIRM]
    assert hand.tick(2.4) == [CONFIRM]


def test_contact_bounce_is_one_press(hand: Hand):
    hand.press(1.000)
    hand.release(1.004)
    hand.press(1.007)
    hand.release(1.011)
    hand.press(1.013)  # settles down here
    hand.release(1.300)
    hand.press(1.305)  # and bounces on release
    hand.release(1.309)
    assert hand.tick(1.5) == []
    assert hand.tick(1.81) == [CONFIRM]
    assert hand.tick(5.0) == []


def test_a_glitch_shorter_than_the_debounce_time_is_nothing(hand: Hand):
    hand.press(1.0)
    hand.release(1.01)
    assert hand.tick(9.0) == []


def test_edges_between_ticks_are_decoded_in_order(hand: Hand):
    # a slow frame: a whole short press, then a double press, all before the next tick
    hand.press(1.0)
    hand.release(1.1)
    hand.press(2.0)
    hand.release(2.1)
    hand.press(2.3)
    hand.release(2.4)
    assert hand.tick(3.0) == [CONFIRM, TAKE_BACK]


def test_the_times_come_from_the_pin_map():
    decoder = ButtonDecoder(hold_s=3.0, double_s=0.3)
    assert decoder.edge(True, 0.0) == []
    assert decoder.poll(2.9) == []
    assert decoder.poll(3.0) == [NEW_GAME]
    with pytest.raises(ValueError, match="double_s < hold_s"):
        ButtonDecoder(hold_s=0.5, double_s=0.5)


@given(st.lists(st.floats(min_value=0.001, max_value=3.0), min_size=0, max_size=30))
def test_never_more_actions_than_presses(gaps: list[float]):
    decoder = ButtonDecoder()
    t, actions, pressed = 0.0, [], False
    for gap in gaps:
        t += gap
        pressed = not pressed
        actions += decoder.edge(pressed, t)
    actions += decoder.poll(t + 10.0)
    presses = (len(gaps) + 1) // 2
    assert len(actions) <= presses
    if gaps and len(gaps) % 2 == 0 and min(gaps) >= 0.6 and max(gaps) < 2.0:  # clean short presses
        assert actions == [CONFIRM] * presses
