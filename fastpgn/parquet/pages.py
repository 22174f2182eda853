"""The per-ply lists' Parquet pages: the list-page writer, a compiled part beside its pure twin.

``kernel`` is the live backend (``_pages_cy``, or ``_pages_py``, its
specification: what the bytes are); ``BACKEND`` names it. The interface both
present, typed once, is ``_pages_kernel.pyi``. ``list_chunks`` gives each
page its headers, zstd and the column chunk's metadata. Two values and a
null list make 3 levels, with one distinct value of 4 bytes:

>>> import pyarrow as pa
>>> from fastpgn.parquet.pages import kernel
>>> body, dictionary, entries, distinct = kernel.list_page(pa.array([[1.5, 1.5], None], pa.list_(pa.float32())))
>>> entries, distinct, len(dictionary)
(3, 1, 4)
"""

from fastpgn._backend import load

TYPE_CHECKING = False   # typing's, without importing typing (fastpgn's start-up imports this module)
if TYPE_CHECKING:
    from fastpgn.parquet import _pages_kernel as kernel

    BACKEND: str
else:
    kernel, BACKEND = load("parquet._pages")

__all__ = ["BACKEND", "kernel"]
