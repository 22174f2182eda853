"""The scanner kernel: the PGN grammar and its sinks, each compiled part beside its pure twin.

``kernel`` is the live backend (``_scan_cy``, built from the ``.pxi`` parts, or
``_scan_py``, built from the ``.py`` twins); ``BACKEND`` names it. The table of
parts is in ``_scan_py``'s docstring; the interface both present, typed once,
is ``_kernel.pyi`` (what every entry point returns: ``contract.ScanResult``).
Each kernel checks its column sinks against ``fastpgn.schema.COLUMNS`` as it
loads (``check_columns``), so a column a sink leaves out makes this import
fail with a ``contract.ColumnError`` naming the column and the sink.
"""

from fastpgn._backend import load

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from fastpgn.scan import _kernel as kernel

    BACKEND: str
else:
    kernel, BACKEND = load("scan._scan")
