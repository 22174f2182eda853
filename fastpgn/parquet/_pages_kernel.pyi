"""The interface both list-page writers present (fastpgn.parquet._pages_cy and _pages_py), typed once."""

from typing import Any

DICTIONARY_LIMIT: int
DICTIONARY_BYTES: int
def list_page(array: Any) -> tuple[bytes, bytes | None, int, int]: ...
