"""UTF-8 validity, pure Python: twin of fastpgn/scan/utf8.pxi (where the first byte that is not UTF-8 is).

Part of the pure scanner kernel fastpgn.scan._scan_py (see its docstring for the parts); the readers
count the games such a byte is in.
"""

from __future__ import annotations

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from typing_extensions import Buffer


def utf8_error(data: Buffer, start: int = 0) -> int:
    """The index of the first byte of ``data[start:]`` that is not UTF-8 (``UnicodeDecodeError.start``), or -1.

    >>> utf8_error(b"ab\\xc3\\xa9c"), utf8_error(b"ab\\xe9c"), utf8_error(b"\\xe9a\\xe9", 1)
    (-1, 2, 2)
    """
    view = memoryview(data)
    if start < 0 or start > len(view):
        raise ValueError(f"start {start} is outside the data ({len(view)} bytes)")
    try:
        str(view[start:], "utf-8")
    except UnicodeDecodeError as exc:
        return start + exc.start
    return -1
