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
