"""Old import path of ``fastpgn.io.sources``, kept so that existing programs keep working.

``import fastpgn.sources`` gives the very module ``fastpgn.io.sources`` (same objects, same
monkeypatching), so nothing is defined twice.
"""

import sys

from fastpgn.io import sources as _module

sys.modules[__name__] = _module
