"""The `referee` command and its verbs. Errors a user can cause end with one line on stderr
and exit status 1, never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from referee import __version__
from referee.app.commands import VerbAdder, command_parser, run_command
from referee.errors import RefereeError
from referee.resources import DEMO_GAMES
from referee.rules import Game, game_names, game_with_ruleset, load_ruleset
from referee.rules.records import check_result, read_record, replay, result_text

DEMO_OUT = "referee-demo"
RULESET_HELP = "a ruleset file (Zensū, Renaissance) replacing the game's defaults"
PIECES_HELP = "the Rinne family: dice (default) or penta; Zensū and Renaissance have their own pieces"

if TYPE_CHECKING:
    from referee.app.events import Event
    from referee.app.spectate import Spectators
    from referee.rules.core import Match



def _game_for(args: argparse.Namespace) -> Game[Any, Any]:
    """`--game`, or the game of `--ruleset FILE` (which must be the same game)."""
    return game_with_ruleset(args.game, args.ruleset)


def _check(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    match, plies = replay(record, load_ruleset(args.ruleset) if args.ruleset else None)
    for ply in plies:
        print(f"{ply.number}. {ply.text}")
    print(result_text(match) + (f" ({match.outcome.termination.value})" if match.outcome else ""))
    check_result(record, match)
    return 0


def _perft(args: argparse.Namespace) -> int:
    if args.depth < 0:
        raise RefereeError("--depth must be 0 or more")
    game = _game_for(args)
    start = game.start()
    if args.divide:
        for move in game.legal_moves(start):
            child = game.play(start, move)
            count = 1 if args.depth <= 1 else game.perft(child, args.depth - 1)
            if args.depth > 1 and game.outcome(child, 1) is not None:
                count = 0
            print(f"{game.move_text(start, move, compact=True)}: {count}")
    print(game.perft(start, args.depth))
    return 0


def _play(args: argparse.Namespace) -> int:
    from referee.app.play import play_in_terminal

    return play_in_terminal(_game_for(args), input_fn=input, output_fn=print)


# ---- calibrate: camera intrinsics and printable patterns (board: later) ----------------


def _calibrate_camera(args: argparse.Namespace) -> int:
    from referee.app.calibrate_camera import run_calibrate_camera

    return run_calibrate_camera(args)


def _calibrate_pattern(args: argparse.Namespace) -> int:
    from referee.app.calibrate_camera import run_calibrate_pattern

    return run_calibrate_pattern(args)


def _calibrate_check(args: argparse.Namespace) -> int:
    from referee.app.calibrate_camera import run_calibrate_check

    return run_calibrate_check(args)


def _calibrate_board(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.app.calibrate_board import calibrate_board, save, write_overlay

    result = calibrate_board(args.game, args.camera, pieces=args.pieces, square_mm=args.square_mm,
                             camera_file=Path(args.camera_file) if args.camera_file else None)
    save(result, Path(args.out))
    if args.overlay:
        write_overlay(args.camera, result, Path(args.overlay))
    profile = result.profile
    print(f"board found in frame {result.frame_index}: rank 1 along the image's "
          f"{profile.first_player_edge} edge; pieces {profile.first.name} {profile.first.body}, "
          f"{profile.second.name} {profile.second.body}"
          + ("" if result.sides_confirmed else " (sides from the start position alone)"))
    print(f"wrote {args.out}")
    return 0


def _add_calibrate(verb: VerbAdder) -> None:
    from referee.app.calibrate_camera import add_camera_arguments, add_pattern_arguments

    calibrate = verb("calibrate", _no_subverb, "make and check calibration files")
    subs = calibrate.add_subparsers(dest="calibrate_verb", required=True, metavar="WHAT")
    camera = subs.add_parser(
        "camera",
        help="camera intrinsics and distortion from photos of a printed pattern",
        description="camera intrinsics and distortion from photos of a printed pattern",
    )
    camera.set_defaults(handler=_calibrate_camera)
    add_camera_arguments(camera)
    pattern = subs.add_parser(
        "pattern",
        help="write a printable calibration pattern at true size (.svg, .pdf, .png)",
        description="write a printable calibration pattern at true size (.svg, .pdf, .png)",
    )
    pattern.set_defaults(handler=_calibrate_pattern)
    add_pattern_arguments(pattern)
    check = subs.add_parser(
        "check",
        help="validate calibration files (camera or board) and summarise them",
        description="validate calibration files (camera or board) and summarise them",
    )
    board = subs.add_parser(
        "board",
        help="find the board, its first player's side and piece colours; write a board profile",
        description="find the board, its first player's side and piece colours; write a board "
                    "profile and an overlay image of the grid found",
    )
    board.set_defaults(handler=_calibrate_board)
    board.add_argument("--game", required=True)
    board.add_argument("--camera", default="pi", help="pi, a device number, a video file or folder")
    board.add_argument("--out", required=True, help="the board profile to write (.yaml)")
    board.add_argument("--overlay", help="also write the frame with the grid found (.png)")
    board.add_argument("--pieces", help=PIECES_HELP)
    board.add_argument("--square-mm", type=float, help="the side of a square, if measured")
    board.add_argument("--camera-file", "--calibration", dest="camera_file", metavar="FILE",
                       help="the camera file of this camera: frames are undistorted and the "
                       "profile names it (default for pi: the Pi Camera Module 3 defaults)")
    check.set_defaults(handler=_calibrate_check)
    check.add_argument("files", nargs="+", metavar="FILE", help="a .yaml or .toml file")
    _add_calibrate_pieces(subs)


def _no_subverb(args: argparse.Namespace) -> int:
    raise RefereeError("calibrate needs one of: camera, pattern, check, board, pieces")


def _calibrate_pieces(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.app.calibrate_pieces import calibrate_pieces, save
    from referee.app.pipeline import camera_game

    board = Path(args.board)
    result = calibrate_pieces(args.game, args.camera, board, pieces=args.pieces, model=args.model,
                              layout=args.layout, frames=args.frames,
                              camera_file=Path(args.camera_file) if args.camera_file else None)
    geometry = camera_game(args.game).geometry
    print(f"layout: {result.layout.described(geometry)}")
    print(f"{len(result.frames)} frames taken ({', '.join(map(str, result.frames))}), "
          f"{result.crops} squares in all; model {result.head.model} "
          f"{result.head.model_sha256[:12]}")
    size = ("as the model learnt them" if result.crop_scale == 1.0 else
            "larger than the model learnt: cut wider" if result.crop_scale > 1.0 else
            "smaller than the model learnt: cut tighter")
    print(f"crops scaled {result.crop_scale:g} (the pieces stand {size})")
    print("\n".join(result.separation.lines()))
    out = args.out or args.board
    save(result, board, Path(out))
    print(f"wrote the crop scale and the piece head into {out}")
    return 0


def _add_calibrate_pieces(subs: Any) -> None:
    pieces = subs.add_parser(
        "pieces",
        help="learn the players' own pieces on known squares; store the head in a board profile",
        description="learn the players' own pieces from the board standing still with them on "
                    "known squares (the start position unless --layout says otherwise); say how "
                    "well they are told apart and store the head in the board profile",
    )
    pieces.set_defaults(handler=_calibrate_pieces)
    pieces.add_argument("--game", required=True)
    pieces.add_argument("--board", required=True, metavar="PROFILE",
                        help="the board profile (`calibrate board`) the head is stored in")
    pieces.add_argument("--camera", default="pi", help="pi, a device number, a video file or folder")
    pieces.add_argument("--pieces", help=PIECES_HELP)
    pieces.add_argument("--model", help="a classifier other than referee/data/models/<pieces>.onnx")
    pieces.add_argument("--layout", metavar="PAIRS|FILE",
                        help="what stands where, 'c1=1 a2=2 ...' or a file of such pairs; the "
                        "squares not named are empty (default: the game's start position)")
    pieces.add_argument("--frames", type=int, default=8,
                        help="frames of the still board to learn from, 5 apart (default 8)")
    pieces.add_argument("--out", metavar="PROFILE", help="write here instead of over --board")
    pieces.add_argument("--camera-file", "--calibration", dest="camera_file", metavar="FILE",
                        help="the camera file of this camera (default: the profile's)")


# ---- end of calibrate --------------------------------------------------------------------


# --- hardware: bench checks for the camera and the signals (referee/hardware/check.py) ---
def _camera(args: argparse.Namespace) -> int:
    from referee.hardware.check import check_camera

    print(check_camera(args.camera, frames=args.frames, snapshot=args.snapshot).line())
    return 0


def _signals(args: argparse.Namespace) -> int:
    from referee.hardware.check import parse_cues, play_cues
    from referee.hardware.signals import open_signals

    cues = parse_cues(args.cue)
    with open_signals(args.pins, require_gpio=args.gpio) as signals:
        play_cues(signals, cues, seconds=args.seconds)
    return 0


def _hardware_verbs(verb: VerbAdder) -> None:
    camera = verb("camera", _camera, "read a few frames from a camera or footage and report "
                  "size, frame rate and brightness")
    camera.add_argument("--camera", default="pi", help="pi, pi:N, a camera index (0), a video "
                        "file or a folder of images (default: pi)")
    camera.add_argument("--frames", type=int, default=30, help="how many frames to read")
    camera.add_argument("--snapshot", help="write the last frame here (PNG) to check colours by eye")
    signals = verb("signals", _signals, "show every cue (or the named ones) on the LEDs and "
                   "buzzer, or in the terminal where there is no GPIO")
    signals.add_argument("cue", nargs="*", help="cue names, e.g. accepted illegal roll-pending")
    signals.add_argument("--pins", help="pin map (default: the wiring of hardware/pins.toml)")
    signals.add_argument("--seconds", type=float, default=2.0, help="how long each cue shows")
    signals.add_argument("--gpio", action="store_true", help="fail if there is no GPIO")
# --- end hardware ---


# --- board (referee/vision/aruco) -------------------------------------------------------


def _board(args: argparse.Namespace) -> int:
    from referee.rules.core import Geometry
    from referee.vision.aruco import write_printable_board

    game = game_with_ruleset(args.game, args.ruleset)
    geometry = getattr(game, "geometry", None)
    if not isinstance(geometry, Geometry):
        raise RefereeError(f"{args.game} has no rectangular board to print")
    if not 5.0 <= args.square_mm <= 200.0:
        raise RefereeError(f"--square-mm {args.square_mm} is out of range 5..200")
    blocked = _blocked_squares(game, geometry)
    path = write_printable_board(geometry.files, geometry.ranks, args.square_mm, args.out, blocked=blocked)
    shown = f", {' '.join(blocked)} blocked" if blocked else ""
    print(f"wrote {path}: {game.title}, {geometry.files}x{geometry.ranks} squares of {args.square_mm:g} mm"
          f"{shown}, with ArUco markers at the corners; print at 100% scale. The markers name a1 "
          "(bottom left as printed): the first player sits at the bottom edge")
    return 0


def _blocked_squares(game: Game[Any, Any], geometry: Any) -> tuple[str, ...]:
    """The squares the game's board shows blocked: Renaissance's centre."""
    from referee.rules.renaissance import RenaissanceRules
    from referee.rules.renaissance_position import BLOCKED

    if not isinstance(game, RenaissanceRules):
        return ()
    cover = game.start().cover
    return tuple(geometry.square_name(square) for square, value in enumerate(cover) if value == BLOCKED)


def _add_board(verb: VerbAdder) -> None:
    board = verb("board", _board, "write a printable board with ArUco corner markers, at true "
                 "size (SVG or PDF)")
    board.add_argument("--game", required=True, help="the game whose board to print")
    board.add_argument("--ruleset", help="a ruleset file (Zensū's and Renaissance's board size)")
    board.add_argument("--square-mm", type=float, default=40.0, help="square side in mm (40)")
    board.add_argument("--out", required=True, help="output file, .svg or .pdf")


# --- end board --------------------------------------------------------------------------


# --- pieces (referee/app/printable_pieces.py) ---------------------------------------------


def _pieces(args: argparse.Namespace) -> int:
    from referee.app.printable_pieces import check_sizes, layout_sheet, piece_set, write_sheet

    pieces = piece_set(game_with_ruleset(args.game, args.ruleset))
    sizes = check_sizes(pieces.model, args.square_mm, args.face)
    paths = write_sheet(layout_sheet(pieces, sizes, paper=args.paper, signs=args.signs), args.out)
    counts = ", ".join(f"{pieces.players[side]} {sum(k.count for k in pieces.kinds if k.side == side)}"
                       for side in (0, 1))
    print(f"wrote {' '.join(str(p) for p in paths)}: {pieces.title}, {counts} pieces, faces "
          f"{sizes.face:.1f} mm for squares of {sizes.square:g} mm; print at 100% scale and check the "
          f"50 mm line, then glue onto wood or card {sizes.height:.0f} mm thick")
    return 0


def _add_pieces(verb: VerbAdder) -> None:
    pieces = verb("pieces", _pieces, "write a printable set of Penta-pieces or Zensū pieces at "
                  "true size, drawn as the models know them (SVG or PDF)")
    pieces.add_argument("--game", required=True, help="the game whose pieces to print (the Rinne "
                        "family: Penta-pieces; zensu)")
    pieces.add_argument("--ruleset", help="a ruleset file (Zensū's setup and edge numbers)")
    pieces.add_argument("--square-mm", type=float, default=40.0, help="the board's square side in "
                        "mm (40), as printed by `referee board`")
    pieces.add_argument("--face", type=float, default=0.8, help="a face's size as a share of the "
                        "square: a Penta-piece's circle through its corners, a Zensū piece's side (0.8)")
    pieces.add_argument("--signs", choices=("letters", "symbols"), default="letters",
                        help="a Penta-piece's signs: K N B R Q, or drawn symbols (letters)")
    pieces.add_argument("--paper", choices=("a4", "letter"), default="a4", help="page size (a4)")
    pieces.add_argument("--out", required=True, help="output file, .svg (one file a page) or .pdf")


# --- end pieces -------------------------------------------------------------------------


# --- classify (referee/app/classify.py) ----------------------------------------------


def _classify(args: argparse.Namespace) -> int:
    from referee.app.classify import classify_files, to_json_line

    for result in classify_files(args.pieces, args.files, model=args.model, turns=args.turns):
        print(to_json_line(result))
    return 0


def _add_classify(verb: VerbAdder) -> None:
    classify = verb("classify", _classify, "classify single square images; one JSON line each")
    classify.add_argument("--pieces", required=True,
                          help="piece set: dice, penta, zensu, tiles (or tiles-seam: seam crops; "
                          "tiles-monomino: bare square or monomino)")
    classify.add_argument("--model", help="a model path instead of referee/data/models/<pieces>.onnx")
    classify.add_argument("--turns", type=int, choices=(1, 2, 4), default=1,
                          help="average over the image turned 1, 2 or 4 ways")
    classify.add_argument("files", nargs="+", metavar="FILE", help="images of one square each")


def _replay(args: argparse.Namespace) -> int:
    from referee.app.replay import replay_footage, stderr_progress

    with contextlib.ExitStack() as stack:
        spectators = _spectators(args, stack)
        # Watched, footage plays as it was filmed; else as fast as it can be read.
        speed = args.speed if args.speed is not None else 1.0 if spectators is not None else 0.0
        result = replay_footage(args.footage, args.game, pieces=args.pieces, out=args.out,
                                ruleset=args.ruleset,
                                log=args.log, model=args.model, on_event=_print_event,
                                progress=stderr_progress(), calibration=args.calibration,
                                board=args.board, spectators=spectators,
                                board_name=args.name, speed=speed)
    _summary(result)
    return 0


def _spectators(args: argparse.Namespace, stack: contextlib.ExitStack) -> Spectators | None:
    """The hub the game is shown in when `--web` or `--mqtt` asks for it, their server and
    client running until `stack` closes."""
    if not (args.web or args.mqtt):
        return None
    from referee.app.spectate import Spectators

    spectators = Spectators()
    if args.web:
        from referee.app.web import WebView, parse_address

        view = stack.enter_context(WebView(spectators, *parse_address(args.web)))
        shared = view.host in ("0.0.0.0", "::")  # every address: name one the others can use
        print(f"live view: {view.url}" + (f" (from other machines: http://"
              f"{socket.gethostname()}.local:{view.port}/)" if shared else ""), flush=True)
    if args.mqtt:
        from referee.app.mqtt import Broadcaster, BrokerUrl

        broker = BrokerUrl.parse(args.mqtt)
        stack.enter_context(Broadcaster(spectators, broker, args.name))
        print(f"broadcast: {broker.topic(args.name)}/… on {broker.host}:{broker.port}",
              flush=True)
    return spectators


def _spectator_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--web", metavar="HOST:PORT",
                        help="serve a live view of the board (e.g. 127.0.0.1:8080; 0.0.0.0:8080 "
                        "for other machines to see it)")
    parser.add_argument("--mqtt", metavar="URL", help="broadcast every event and ply to an MQTT "
                        "broker: mqtt://HOST[:PORT]/PREFIX (a tournament's)")
    parser.add_argument("--name", default=socket.gethostname(),
                        help="the board's name in the view and the broadcast (default: the "
                        "host name)")


def _demo(args: argparse.Namespace) -> int:
    from referee.app.announce import cues_for
    from referee.app.record import GameFiles
    from referee.app.replay import replay_footage, stderr_progress
    from referee.hardware.signals import TerminalSignals
    from referee.resources import demo_footage

    footage = demo_footage(args.game)
    signals = TerminalSignals()
    print(f"Replaying {footage.name}: {DEMO_GAMES[args.game]}, as a camera would see it.")

    def show(event: Event, match: Match[Any, Any]) -> None:
        _print_event(event, match)
        for cue, player in cues_for(event, match):
            signals.show(cue, event.time_s, player=player)

    files = GameFiles.at(args.out)
    if args.out == DEMO_OUT:  # the demo's own files are remade each time; a chosen folder's never
        _remove_game_files(files)
    with contextlib.ExitStack() as stack:
        spectators = _spectators(args, stack)
        result = replay_footage(footage, args.game, out=args.out, on_event=show,
                                progress=stderr_progress(), spectators=spectators,
                                board_name=args.name, speed=0.0 if spectators is None else 1.0)
    _summary(result)
    return 0


def _tournament(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.app.mqtt import BrokerUrl
    from referee.app.tournament import run_tournament
    from referee.app.web import parse_address

    return run_tournament(BrokerUrl.parse(args.mqtt), parse_address(args.web), Path(args.out))


def _stats(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.app.stats import run_stats

    return run_stats([Path(path) for path in args.logs],
                     plots=Path(args.plots) if args.plots else None)


def _add_club(verb: VerbAdder) -> None:
    tournament = verb("tournament", _tournament, "show every board of a tournament on one page "
                      "and keep each game's record, from the boards' MQTT broadcast")
    tournament.add_argument("--mqtt", required=True, metavar="URL",
                            help="the tournament's broker and prefix: mqtt://HOST[:PORT]/PREFIX")
    tournament.add_argument("--web", default="127.0.0.1:8080", metavar="HOST:PORT",
                            help="where to serve the page (default 127.0.0.1:8080; 0.0.0.0:8080 "
                            "for other machines to see it)")
    tournament.add_argument("--out", default="tournament",
                            help="folder of the games' records, one folder a board (default: "
                            "tournament/)")
    stats = verb("stats", _stats, "results by side, game lengths and, for Tensei, the dice rolls "
                 "seen, from game logs")
    stats.add_argument("logs", nargs="+", metavar="LOG_OR_FOLDER",
                       help="game logs (game.jsonl), or folders searched for them")
    stats.add_argument("--plots", metavar="FOLDER", help="also draw the figures as PNG files here")


def _remove_game_files(files: Any) -> None:
    import shutil

    for path in (files.record, files.log, files.report):
        path.unlink(missing_ok=True)
    shutil.rmtree(files.keyframes, ignore_errors=True)


def _print_event(event: Event, match: Match[Any, Any]) -> None:
    del match
    print(event.line(), flush=True)


def _summary(result: Any) -> None:
    from referee.app.diagrams import score_text

    match = result.match
    outcome = match.outcome
    score = score_text(match.game, match.position)
    print(f"{len(match.moves)} plies read; "
          + (outcome.result(match.game.player_names) if outcome else "game unfinished")
          + (f" (score: {score})" if score else ""))
    files = result.files
    print(f"record {files.record}, log {files.log}, report {files.report} ({result.frames} "
          f"frames, {result.footage_s / max(result.seconds, 1e-9):.1f}x real time)")


def _live(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.app.live import LiveOptions, run_live

    options = LiveOptions(args.game, args.camera, args.pins, args.pieces, Path(args.out),
                          args.resume, args.model, args.calibration, args.board,
                          start_s=args.start, speed=args.speed, camera_wait_s=args.camera_wait,
                          ruleset=args.ruleset)
    with contextlib.ExitStack() as stack:
        return run_live(options, spectators=_spectators(args, stack), board_name=args.name)


def _add_replay(verb: VerbAdder) -> None:
    replay = verb("replay", _replay, "referee recorded footage: print each move, write the record")
    replay.add_argument("footage", help="a video file or a folder of images")
    replay.add_argument("--game", required=True, help="the game being played, e.g. rinne")
    replay.add_argument("--pieces", help=PIECES_HELP)
    replay.add_argument("--ruleset", metavar="FILE", help=RULESET_HELP)
    replay.add_argument("--out", help="the record (a .txt file; the log, report and keyframes "
                        "go beside it) or a folder for all four (default: beside the footage)")
    replay.add_argument("--log", help="the log (JSON lines), elsewhere than beside the record")
    replay.add_argument("--model", help="a classifier other than referee/data/models/<pieces>.onnx")
    _calibration_arguments(replay, "the camera file of the footage's camera (undistorts it)")
    replay.add_argument("--speed", type=float, metavar="X", help="play the footage at X times its "
                        "frame rate (default: as fast as it is read; 1 with --web or --mqtt)")
    _spectator_arguments(replay)
    live = verb("live", _live, "referee a game from a live camera, with lights and buzzer")
    live.add_argument("--game", required=True, help="the game being played, e.g. rinne")
    live.add_argument("--camera", default="pi", help="pi, a device number, a video file or folder")
    live.add_argument("--pins", help="pin map (default: hardware/pins.toml's wiring)")
    live.add_argument("--pieces", help=PIECES_HELP)
    live.add_argument("--ruleset", metavar="FILE", help=RULESET_HELP)
    live.add_argument("--out", default="game", help="folder of the game's log and record")
    live.add_argument("--resume", action="store_true",
                      help="continue the game logged in --out (a new one if none is logged)")
    live.add_argument("--model", help="a classifier other than referee/data/models/<pieces>.onnx")
    live.add_argument("--start", type=float, metavar="S",
                      help="footage: begin S seconds in (default 0; resumed: where the log stops)")
    live.add_argument("--speed", type=float, default=1.0, metavar="X",
                      help="footage: play at X times its frame rate (default 1; 0: unpaced)")
    live.add_argument("--camera-wait", type=float, default=60.0, metavar="S",
                      help="wait S seconds for a lost or missing camera (default 60), then exit 1")
    _calibration_arguments(live, "the camera file (default for pi: calibration/"
                           "pi-camera-module-3-<W>x<H>.yaml for the frame size)")
    _spectator_arguments(live)
    demo = verb("demo", _demo, "replay the bundled footage of a whole game: the designer's sample "
                "game of Rinne, or a game of Zensū or of Renaissance")
    demo.add_argument("--game", choices=sorted(DEMO_GAMES), default="rinne",
                      help="which game's footage (default rinne)")
    demo.add_argument("--out", default=DEMO_OUT, help="folder for the log, record, keyframes and "
                      f"report (default: {DEMO_OUT}/ in the current directory, remade each time)")
    _spectator_arguments(demo)


def _calibration_arguments(parser: argparse.ArgumentParser, camera_help: str) -> None:
    parser.add_argument("--calibration", metavar="FILE", help=camera_help)
    parser.add_argument("--board", metavar="PROFILE", help="a board profile from `referee "
                        "calibrate board`: its pose (checked against the frame) and colours")


def build_parser() -> argparse.ArgumentParser:
    parser, verb = command_parser(
        "referee", "A camera referee for Rinne, Tensei and their family, Zensū and Renaissance.", __version__)

    games = ", ".join(game_names())
    check = verb("check", _check, "validate a game record; print each ply and the outcome")
    check.add_argument("record", help="a record file")
    check.add_argument("--ruleset", metavar="FILE", help=RULESET_HELP)

    perft = verb("perft", _perft, "count the move sequences of a given depth (rules testing)")
    perft.add_argument("--game", required=True, help=f"one of: {games}")
    perft.add_argument("--depth", type=int, required=True)
    perft.add_argument("--divide", action="store_true", help="also print the count per first move")
    perft.add_argument("--ruleset", metavar="FILE", help=RULESET_HELP)

    play = verb("play", _play, "two people play a game in the terminal")
    play.add_argument("--game", required=True, help=f"one of: {games}")
    play.add_argument("--ruleset", metavar="FILE", help=RULESET_HELP)

    _add_calibrate(verb)
    _hardware_verbs(verb)
    _add_board(verb)
    _add_pieces(verb)
    _add_classify(verb)
    _add_replay(verb)
    _add_club(verb)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser(), argv, prog="referee")


if __name__ == "__main__":
    sys.exit(main())
