"""Old import path of ``fastpgn.notations`` (the other notations), kept so that existing programs keep working.

``fastpgn.formats.icn`` and the other public modules are the very modules of
``fastpgn.notations``; ``--format`` (the converter's output formats) is
``fastpgn.convert``'s, not this.
"""

import sys

from fastpgn import notations as _notations
from fastpgn.notations import crypt, icn, icn_pgn, lichess_text

for _module in (crypt, icn, icn_pgn, lichess_text):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module
sys.modules[__name__] = _notations
