"""Old import path of ``fastpgn.convert.converter``, kept so that existing programs keep working.

``import fastpgn.pipeline`` gives the very module ``fastpgn.convert.converter`` (same objects, same
monkeypatching), so nothing is defined twice.
"""

import sys

from fastpgn.convert import converter as _module

sys.modules[__name__] = _module
