"""The director of footage: turns a list of acts (a hand's trips over the board) into one
`FrameState` per frame: the hand reaching in from its player's side, lifting a piece,
carrying it (turning it to its new face on the way), setting it down, withdrawing; laying
flat things (Renaissance tiles, monominoes, markers) from beside the board, lifting them
off, sliding a marker to another square, pushing one in from beyond the rim; pauses of
varied length; slow light drift, flicker and a slightly shaking camera."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth.camera import Camera
from referee_lab.synth.hands import HandLook, HandPose, sample_hand_look
from referee_lab.synth.mesh import Placed, rot_z
from referee_lab.synth.placement import (
    TILE_HEIGHT,
    BoardPose,
    PiecePose,
    flat_placed,
    piece_height,
    piece_placed,
    place,
    with_face,
)
from referee_lab.synth.scene import FrameState, Scene
from referee_lab.synth.sensor import Exposure
from referee_lab.synth.truth import EMPTY, Contents, SquareContent

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Step:
    """One thing a hand does during a trip: `move` a piece from `a` to `b` showing
    `content`; `take` the piece on `a` off the board; `turn` the piece on `a` to `content`;
    `put` a piece showing `content` from beside the board onto `b` (setting up); `hover`
    the hand over `a` for `seconds`, touching nothing; `knock` the die on `a` over onto a
    side (a `turn` to its old face sets it right again).

    Flat things (tiles, monominoes, markers) change squares by `changes` (square, new
    content), the hand carrying what appears or goes on the squares `carry`: `lay` brings
    them in from beside the board, `lift` takes them off it, `shift` slides a marker from
    `a` to `b`, `slide` slides the tile on `carry` whole (those squares left empty) onto the
    squares of `changes`, and `push` pushes a marker in from beyond the rim onto the outer
    square `a`, the markers of its line `carry` (`a`, `b` and on) sliding one square on."""

    action: str  # move, take, turn, put, lay, lift, shift, slide, push
    a: str
    b: str = ""
    content: SquareContent | None = None
    changes: tuple[tuple[str, SquareContent], ...] = ()
    carry: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class Act:
    """A trip of the hand: a ply, or part of one, or a fault."""

    text: str
    kind: str  # move, illegal, takeback, forgotten, promotion, roll
    mover: int
    steps: tuple[Step, ...]
    ply: int  # the index of the ply this act belongs to
    note: str = ""  # what the steady moment after it is
    hold: float = 0.0  # the least seconds the board then stays still (a fault left a while)


@dataclass
class Hand:
    """The hand during a trip: where its fingertips are, how closed, whose it is."""

    grip: FloatArray
    pinch: float
    mover: int
    last: FloatArray | None = None  # the grip in the previous frame (for motion blur)


@dataclass
class Marks:
    """What the director records besides the frames."""

    acts: list[tuple[Act, int, int]] = field(default_factory=list)  # act, first, last frame
    steady: list[tuple[int, int, Contents, str]] = field(default_factory=list)
    events: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Flat:
    """Flat things in the hand: placed where they lie when the grip is at `anchor`."""

    things: tuple[Placed, ...]
    anchor: FloatArray


def carried_part(stays: SquareContent, whole: SquareContent) -> SquareContent:
    """What a hand brings to or takes from a square that holds `whole` with it and `stays`
    without it: only the marker when the tile or monomino under it stays."""
    if (stays.kind, stays.value) == (whole.kind, whole.value):
        return SquareContent("empty", marker=whole.marker)
    return whole


def ease(u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    return u * u * (3 - 2 * u)


class Director:
    def __init__(self, scene: Scene, contents: Contents, rng: np.random.Generator, *,
                 fps: float = 30.0, shake: float = 1.0, flicker: float = 1.0,
                 noise: float = 1.0) -> None:
        self.scene, self.rng, self.fps = scene, rng, fps
        self.contents = dict(contents)
        self.poses: dict[str, PiecePose] = {
            sq: place(c, sq, rng, scene.style, scene.layout) for sq, c in contents.items()
            if c.is_piece}
        self.frames: list[FrameState] = []
        self.marks = Marks()
        self.board = BoardPose()
        self.looks: tuple[HandLook, HandLook] = (sample_hand_look(rng), sample_hand_look(rng))
        self.right_handed = (bool(rng.random() < 0.85), bool(rng.random() < 0.85))
        self.shake_amp = math.radians(0.03) * shake
        self.flicker_amp = float(rng.uniform(0.0, 0.025)) * flicker
        self.flicker_hz = float(rng.uniform(2.0, 12.0))
        self.drift = (float(rng.uniform(-0.06, 0.06)), float(rng.uniform(20, 60)))
        self.light_step: tuple[int, float, tuple[float, float, float]] | None = None
        self._shake = np.zeros(3)
        self.shutter = float(rng.uniform(0.3, 0.8))  # exposure time as a share of a frame
        self.noise = noise
        self.graveyard: list[Placed] = []
        self._grave_slots = [0, 0]

    # --- per-frame state ---------------------------------------------------------------

    def _camera(self) -> Camera:
        """A slightly trembling camera: a smoothed random walk of tiny rotations."""
        base = self.scene.camera
        if self.shake_amp <= 0:
            return base
        self._shake = 0.85 * self._shake + self.rng.normal(0, self.shake_amp * 0.5, 3)
        delta, _ = cv2.Rodrigues(self._shake)
        rotation = delta @ base.R
        rvec, _ = cv2.Rodrigues(rotation)
        tvec = delta @ np.array(base.tvec)
        return base.with_pose(np.asarray(rvec, dtype=np.float64).ravel(),
                              np.asarray(tvec, dtype=np.float64))

    def _exposure(self) -> Exposure:
        t = len(self.frames) / self.fps
        amount, period = self.drift
        gain = 1 + amount * math.sin(2 * math.pi * t / period)
        gain *= 1 + self.flicker_amp * math.sin(2 * math.pi * self.flicker_hz * t)
        tint = (1.0, 1.0, 1.0)
        if self.light_step is not None and len(self.frames) >= self.light_step[0]:
            gain *= self.light_step[1]
            tint = self.light_step[2]
        return Exposure(gain=gain, tint=tint, noise=self.noise)

    def emit(self, hand: HandPose | None = None, carried: PiecePose | None = None,
             *, steady: bool = False, flat: tuple[Placed, ...] = ()) -> None:
        self.frames.append(FrameState(
            dict(self.contents), dict(self.poses), carried, hand, self.board, self._camera(),
            self._exposure(), steady, (*self.graveyard, *flat)))

    def pause(self, seconds: float, note: str) -> None:
        first = len(self.frames)
        for _ in range(max(1, round(seconds * self.fps))):
            self.emit(steady=True)
        self.marks.steady.append((first, len(self.frames) - 1, dict(self.contents), note))

    # --- geometry of a trip --------------------------------------------------------------

    def _world(self, name: str, z: float) -> FloatArray:
        layout = self.scene.layout
        point = layout.centre(name)
        pose = self.poses.get(name)
        if pose is not None:
            point = point + np.array([*pose.offset, 0.0])
        point[2] = z
        return np.asarray(self.board.apply(layout, point[None])[0], dtype=np.float64)

    def _shoulder(self, mover: int) -> FloatArray:
        layout = self.scene.layout
        side = 1 if self.right_handed[mover] else -1
        y = -layout.margin_mm - 330 if mover == 0 else layout.height_mm + layout.margin_mm + 330
        x = layout.width_mm / 2 + side * (150 if mover == 0 else -150)
        return np.array([x, y, 380.0])

    def _rest(self, mover: int) -> FloatArray:
        """Where the hand waits, out of the picture on its player's side."""
        shoulder = self._shoulder(mover)
        layout = self.scene.layout
        y = -layout.margin_mm - 260 if mover == 0 else layout.height_mm + layout.margin_mm + 260
        return np.array([shoulder[0], y, 260.0])

    def _path(self, hand: Hand, target: FloatArray, seconds: float, *,
              arc: float = 0.0, pinch: tuple[float, float] | None = None,
              carried: PiecePose | None = None, turn_to: SquareContent | None = None,
              flat: Flat | None = None) -> PiecePose | None:
        """Move the hand's grip to `target`; a carried piece follows (and is turned to
        `turn_to` halfway), or carried flat things (placed as they lie when the grip is at
        the flat's anchor)."""
        start = hand.grip.copy()
        n = max(2, round(seconds * self.fps * float(self.rng.uniform(0.85, 1.2))))
        p0, p1 = pinch if pinch else (hand.pinch, hand.pinch)
        wobble = self.rng.normal(0, 1.2, 3)
        for i in range(1, n + 1):
            u = ease(i / n)
            grip = start + (target - start) * u
            grip[2] += arc * math.sin(math.pi * u)
            grip += wobble * math.sin(math.pi * u)
            hand.grip = grip
            hand.pinch = p0 + (p1 - p0) * u
            pose = self._hand_pose(hand)
            held = None
            if carried is not None:
                if turn_to is not None and i == n // 2:
                    carried = with_face(carried, turn_to, self.rng)
                height = piece_height(carried.content, self.scene.style)
                foot = (float(grip[0]), float(grip[1]), float(grip[2] - 0.75 * height))
                spin = carried.yaw + 0.25 * math.sin(math.pi * u)
                held = carried.carried(foot, spin, 0.12 * math.sin(math.pi * u))
            moved: tuple[Placed, ...] = ()
            if flat is not None:
                shift = grip - flat.anchor
                moved = tuple(replace(p, position=p.position + shift) for p in flat.things)
            self.emit(pose, held, flat=moved)
        return carried

    def _hand_pose(self, hand: Hand) -> HandPose:
        mover, grip = hand.mover, hand.grip
        s = self._shoulder(mover)
        last = grip if hand.last is None else hand.last
        hand.last = grip.copy()
        motion = (grip - last) * self.shutter
        return HandPose((float(grip[0]), float(grip[1]), float(grip[2])),
                        (float(s[0]), float(s[1]), float(s[2])), self.looks[mover],
                        hand.pinch,
                        (float(motion[0]), float(motion[1]), float(motion[2])))

    # --- acts ------------------------------------------------------------------------------

    def act(self, act: Act) -> None:
        """Perform one trip: reach in, do each step, withdraw."""
        first = len(self.frames)
        hand = Hand(self._rest(act.mover), 0.0, act.mover)
        for step in act.steps:
            if step.action == "move":
                assert step.content is not None
                self._carry(hand, step.a, step.content, to=step.b)
            elif step.action == "take":
                self._carry(hand, step.a, None, to=None, mover=act.mover)
            elif step.action == "turn":
                assert step.content is not None
                self._carry(hand, step.a, step.content, to=step.a)
            elif step.action == "put":
                assert step.content is not None
                self._put(hand, step.b, step.content)
            elif step.action in ("lay", "lift", "shift", "slide"):
                self._flat_step(hand, step, act.mover)
            elif step.action == "push":
                self._push(hand, step, act.mover)
            elif step.action == "hover":
                self._hover(hand, step.a, step.seconds)
            elif step.action == "knock":
                self._knock(hand, step.a)
        self._path(hand, self._rest(act.mover), float(self.rng.uniform(0.5, 0.8)), arc=20,
                   pinch=(0.0, 0.0))
        self.marks.acts.append((act, first, len(self.frames) - 1))

    def _carry(self, hand: Hand, square: str, content: SquareContent | None, *,
               to: str | None, mover: int = 0) -> None:
        style = self.scene.style
        pose = self.poses[square]
        height = piece_height(pose.content, style)
        above = self._world(square, height + 45)
        self._path(hand, above, float(self.rng.uniform(0.55, 0.9)), arc=30, pinch=(0.0, 0.2))
        grip = self._world(square, height * 0.75)
        self._path(hand, grip, 0.22, pinch=(0.2, 1.0))
        # Lift: the piece leaves its square.
        del self.poses[square]
        self.contents[square] = EMPTY
        carried: PiecePose | None = self._lifted(pose)
        lift = grip + np.array([0, 0, 35.0])
        carried = self._path(hand, lift, 0.2, carried=carried)
        assert carried is not None
        if to is None:  # a captured piece goes beside the board
            spot = self._grave_spot(mover)
            carried = self._path(hand, spot + np.array([0, 0, height + 30]), 0.6, arc=25,
                                 carried=carried)
            carried = self._path(hand, spot + np.array([0, 0, height * 0.75]), 0.2,
                                 carried=carried)
            assert carried is not None
            self.graveyard.append(self._grave_piece(carried, spot))
            self._path(hand, spot + np.array([0, 0, height + 40]), 0.2, pinch=(1.0, 0.0))
            return
        target = self._world(to, 0.0)
        distance = float(np.linalg.norm(target[:2] - lift[:2]))
        new_height = piece_height(content, style) if content else height
        carried = self._path(hand, target + np.array([0, 0, new_height + 30]),
                             0.25 + distance / 250, arc=min(30, distance / 4), carried=carried,
                             turn_to=content)
        carried = self._path(hand, target + np.array([0, 0, new_height * 0.75]), 0.22,
                             carried=carried)
        assert carried is not None
        placed = place(carried.content, to, self.rng, style, self.scene.layout)
        if carried.content.kind == "die":
            placed = replace(placed, orientation=carried.orientation)
        self.poses[to] = placed
        self.contents[to] = carried.content
        self._path(hand, target + np.array([0, 0, new_height + 40]), 0.22, pinch=(1.0, 0.0))

    def _hover(self, hand: Hand, square: str, seconds: float) -> None:
        """The hand stays over `square` (a player thinking, pointing), never quite still:
        a slow drift of a few millimetres and a faint tremor."""
        self._path(hand, self._world(square, 70.0), float(self.rng.uniform(0.6, 0.9)), arc=25)
        centre = hand.grip.copy()
        phase = self.rng.uniform(0, 2 * math.pi, 3)
        for i in range(max(1, round(seconds * self.fps))):
            t = i / self.fps
            drift = 4.0 * np.sin(2 * math.pi * t / np.array([3.1, 4.3, 5.7]) + phase)
            hand.grip = centre + drift + self.rng.normal(0, 0.4, 3)
            self.emit(self._hand_pose(hand))

    def _knock(self, hand: Hand, square: str) -> None:
        """The hand brushes the die on `square`: it rolls onto a side, showing another face,
        a little off its place."""
        pose = self.poses[square]
        height = piece_height(pose.content, self.scene.style)
        self._path(hand, self._world(square, height + 30), float(self.rng.uniform(0.6, 0.9)),
                   arc=30)
        self._path(hand, self._world(square, height * 0.6), 0.2, pinch=(0.0, 0.3))
        value = pose.content.value
        sides = [face for face in range(1, 7) if face not in (value, 7 - value)]
        content = replace(pose.content, value=sides[int(self.rng.integers(len(sides)))])
        shove = (pose.offset[0] + float(self.rng.uniform(-4, 4)),
                 pose.offset[1] + float(self.rng.uniform(-4, 4)))
        self.poses[square] = replace(with_face(pose, content, self.rng), offset=shove)
        self.contents[square] = content
        self._path(hand, self._world(square, height + 45), 0.25, pinch=(0.3, 0.0))

    def _put(self, hand: Hand, to: str, content: SquareContent) -> None:
        """Bring a piece in from beside the board and set it on `to` (setting up)."""
        pose = place(content, to, self.rng, self.scene.style, self.scene.layout)
        height = piece_height(content, self.scene.style)
        hand.pinch = 1.0
        target = self._world(to, 0.0)
        carried = self._path(hand, target + np.array([0, 0, height + 35]),
                             float(self.rng.uniform(0.6, 0.9)), arc=30,
                             carried=self._lifted(pose))
        self._path(hand, target + np.array([0, 0, height * 0.75]), 0.22, carried=carried)
        self.poses[to] = pose
        self.contents[to] = content
        self._path(hand, target + np.array([0, 0, height + 40]), 0.22, pinch=(1.0, 0.0))

    # --- flat things: tiles, monominoes, markers ------------------------------------------

    def _flat(self, squares: tuple[str, ...], contents: Contents, z: float) -> Flat:
        """The flat things of `contents` on `squares`, anchored at their middle, height z."""
        things = flat_placed({sq: contents[sq] for sq in squares}, self.scene.style,
                             self.scene.layout, self.board, self.scene.seed)
        anchor = np.mean([self._world(sq, z) for sq in squares], axis=0)
        return Flat(tuple(things[0] + things[1]), anchor)

    def _flat_step(self, hand: Hand, step: Step, mover: int) -> None:
        """Lay, lift, shift or slide flat things: grip at their middle, change the squares
        when the fingers close (lift) or open (lay)."""
        grip_z = TILE_HEIGHT + 2.0
        changes = dict(step.changes)
        carry = step.carry or (step.a,)
        if step.action == "lay":
            moving = {sq: carried_part(self.contents[sq], changes[sq]) for sq in carry}
            flat = self._flat(carry, moving, grip_z)
            self._fetch(hand, mover)
            self._path(hand, flat.anchor + np.array([0, 0, 35.0]),
                       float(self.rng.uniform(0.6, 0.9)), arc=30, flat=flat)
            self._path(hand, flat.anchor, 0.22, flat=flat)
            self.contents.update(changes)
            self._path(hand, flat.anchor + np.array([0, 0, 40.0]), 0.22, pinch=(1.0, 0.0))
            return
        source = (step.a,) if step.action == "shift" else carry
        if step.action == "slide":  # the tile whole; its squares left empty meanwhile
            moving = {sq: self.contents[sq] for sq in source}
            left = dict.fromkeys(source, EMPTY)
        else:
            moving = {sq: carried_part(changes[sq], self.contents[sq]) for sq in source}
            left = {sq: changes[sq] for sq in source}
        flat = self._flat(source, moving, grip_z)
        self._path(hand, flat.anchor + np.array([0, 0, 40.0]), float(self.rng.uniform(0.55, 0.9)),
                   arc=30, pinch=(0.0, 0.2))
        self._path(hand, flat.anchor, 0.22, pinch=(0.2, 1.0))
        self.contents.update(left)
        lift = flat.anchor + np.array([0, 0, 30.0])
        self._path(hand, lift, 0.2, flat=flat)
        if step.action in ("shift", "slide"):  # slide it to its new squares and let go
            self._land(hand, step, flat, lift)
            return
        # Taken off the board: carried back to the player's side, out of the picture (a
        # pile of tiles and monominoes beside the board would spill into it).
        self._path(hand, self._rest(mover), float(self.rng.uniform(0.6, 0.9)), arc=25,
                   flat=flat)

    def _fetch(self, hand: Hand, mover: int) -> None:
        """The hand takes what it lays from beside the board, on its player's side (where it
        waits between trips it has it already), and holds it."""
        rest = self._rest(mover)
        if float(np.linalg.norm(hand.grip - rest)) > 1.0:
            self._path(hand, rest, float(self.rng.uniform(0.5, 0.7)), arc=20,
                       pinch=(hand.pinch, 1.0))
        hand.pinch = 1.0

    def _push(self, hand: Hand, step: Step, mover: int) -> None:
        """Push a marker in as a player does: set it down beyond the rim, a square outside `a`
        (away from `b`), and slide it onto `a`, the markers on the line `carry` sliding on
        with it to where `changes` has them."""
        grip_z = TILE_HEIGHT + 2.0
        changes = dict(step.changes)
        bare = {sq: replace(changes[sq], marker=None) for sq in step.carry}
        at = self._world(step.a, grip_z)
        outside = at - (self._world(step.b, grip_z) - at)
        # Both flats lie where `changes` puts them when the grip is on `a`: a square short of
        # it, beyond the rim, the new marker lies outside and the line's on their old squares.
        new = Flat(self._flat((step.a,), {step.a: carried_part(bare[step.a], changes[step.a])},
                              grip_z).things, at)
        line = Flat(self._flat(step.carry, {sq: carried_part(bare[sq], changes[sq])
                                            for sq in step.carry}, grip_z).things, at)
        self._fetch(hand, mover)
        self._path(hand, outside + np.array([0, 0, 35.0]), float(self.rng.uniform(0.6, 0.9)),
                   arc=30, flat=new)
        self._path(hand, outside, 0.22, flat=new)
        self.contents.update(bare)  # the line's markers now move with the hand
        self._path(hand, at, float(self.rng.uniform(0.35, 0.5)), flat=line)
        self.contents.update(changes)
        self._path(hand, at + np.array([0, 0, 40.0]), 0.22, pinch=(1.0, 0.0))

    def _land(self, hand: Hand, step: Step, flat: Flat, lift: FloatArray) -> None:
        """Carry `flat` from `lift` to where `step` puts it (a marker onto `b`, a slid tile
        onto the squares of its changes), set it down there and let go."""
        grip_z = TILE_HEIGHT + 2.0
        changes = dict(step.changes)
        lands = changes
        if step.action == "shift":
            lands = {step.b: carried_part(self.contents[step.b], changes[step.b])}
        # where it will lie on its new squares (its spot there is seeded)
        landing = self._flat(tuple(lands), lands, grip_z)
        target = (self._world(step.b, grip_z) if step.action == "shift" else landing.anchor)
        distance = float(np.linalg.norm(target[:2] - lift[:2]))
        self._path(hand, target + np.array([0, 0, 30.0]), 0.25 + distance / 250,
                   arc=min(30, distance / 4), flat=flat)
        self._path(hand, landing.anchor, 0.22, flat=landing)
        self.contents.update({sq: changes[sq] for sq in lands})
        self._path(hand, target + np.array([0, 0, 40.0]), 0.22, pinch=(1.0, 0.0))

    def _lifted(self, pose: PiecePose) -> PiecePose:
        return replace(pose, lifted=(0.0, 0.0, 0.0), yaw=pose.yaw + self.board.angle)

    def _grave_spot(self, mover: int) -> FloatArray:
        layout = self.scene.layout
        slot = self._grave_slots[mover]
        self._grave_slots[mover] += 1
        x = layout.width_mm + layout.margin_mm + 45 + 40 * (slot // 3)
        along = layout.square_mm * (0.8 + slot % 3)
        y = along if mover == 0 else layout.height_mm - along
        floor = -layout.thickness_mm
        return np.array([x, y, floor])

    def _grave_piece(self, carried: PiecePose, spot: FloatArray) -> Placed:
        placed = piece_placed(carried, self.scene.style, self.scene.layout, self.board)
        position = spot.copy()
        if carried.content.kind == "die":
            position[2] += self.scene.style.dice[carried.content.owner or 0].size / 2
            rotation = rot_z(float(self.rng.uniform(0, 6.28))) @ carried.orientation
        else:
            rotation = placed.rotation
        return Placed(placed.mesh, rotation, position, base_z=float(spot[2]))

    def bump(self) -> None:
        """Someone knocks the board: it slides and turns a little over a few frames."""
        start = self.board
        dx, dy = self.rng.uniform(-12, 12, 2)
        angle = math.radians(float(self.rng.choice([-1, 1]) * self.rng.uniform(1.5, 4)))
        first = len(self.frames)
        for i in range(1, 5):
            u = ease(i / 4)
            self.board = BoardPose(start.dx + dx * u, start.dy + dy * u, start.angle + angle * u)
            self.emit()
        self.marks.events["bump"] = {"frames": [first, len(self.frames) - 1],
                                     "shift_mm": [float(dx), float(dy)],
                                     "turn_deg": math.degrees(angle)}
