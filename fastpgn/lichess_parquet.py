"""Old import path of ``fastpgn.io.lichess_parquet``, kept so that existing programs keep working.

``import fastpgn.lichess_parquet`` gives the very module ``fastpgn.io.lichess_parquet`` (same objects, same
monkeypatching), so nothing is defined twice.
"""

import sys

from fastpgn.io import lichess_parquet as _module

sys.modules[__name__] = _module
