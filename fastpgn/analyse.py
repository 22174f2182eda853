"""Old import path of ``fastpgn.engine.analysis``, kept so that existing programs keep working.

``import fastpgn.analyse`` gives the very module ``fastpgn.engine.analysis`` (same objects, same
monkeypatching), so nothing is defined twice.
"""

import sys

from fastpgn.engine import analysis as _module

sys.modules[__name__] = _module
