"""``python -m fastpgn``: see fastpgn.cli."""

import sys

from fastpgn.cli import main

sys.exit(main())
