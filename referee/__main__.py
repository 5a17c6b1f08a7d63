from __future__ import annotations

import sys

from referee.cli import main

sys.exit(main())
