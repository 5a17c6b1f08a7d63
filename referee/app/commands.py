"""What both commands (`referee`, `referee-lab`) do with a parsed verb: run its handler and
turn an error a user can cause into one line on stderr and a non-zero exit, never a
traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from referee.errors import RefereeError

Handler = Callable[[argparse.Namespace], int]
VerbAdder = Callable[[str, Handler, str], argparse.ArgumentParser]


def command_parser(prog: str, description: str, version: str
                   ) -> tuple[argparse.ArgumentParser, VerbAdder]:
    """A command's parser and the function that adds a verb to it (name, handler, help)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {version}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    return parser, verb


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None, *, prog: str) -> int:
    args = parser.parse_args(argv)
    handler: Any = args.handler
    try:
        return int(handler(args))
    except RefereeError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
