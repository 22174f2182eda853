"""The scanner kernel: the PGN grammar and its sinks, each compiled part beside its pure twin.

``kernel`` is the live backend (``_scan_cy``, built from the ``.pxi`` parts, or
``_scan_py``, built from the ``.py`` twins); ``BACKEND`` names it. The table of
parts is in ``_scan_py``'s docstring.
"""

from fastpgn._backend import load

kernel, BACKEND = load("scan._scan")
