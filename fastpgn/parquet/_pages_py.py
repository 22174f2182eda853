"""Pure-Python twin of fastpgn/parquet/_pages_cy.pyx: a per-ply list column as one Parquet data page.

The column sink's output made ready for a Parquet file:
``list_page(array)`` takes a ``list<float32|int16|int8|string>`` Arrow array
(the per-ply lists ``clock``, ``move_seconds``, ``win_percent``, ``eval_cp``,
``eval_mate``, ``moves``, ``judgement``) and gives the uncompressed body of
one version-1 data page holding all of it, and its dictionary, as the
Parquet format defines them
(``fastpgn.parquet.list_chunks`` adds the page headers, the compression and
the column chunk's metadata):

- the list's levels (an optional list of optional items: repetition level
  0 or 1, definition level 0 for a null list, 1 for an empty one, 2 for a
  null item, 3 for a value), each as a 4-byte length and RLE runs;
- the values: RLE_DICTIONARY (a byte of bit width, then the dictionary
  indices bit-packed, in runs of at most 63 groups of 8) with the distinct
  values in the order met as the dictionary (PLAIN: a number in 4 bytes, an
  int widened to INT32, a float32 as its bits, so -0.0 and 0.0 stay apart; a
  string as its 4-byte length and its bytes), or PLAIN values and no
  dictionary when they are none, or more than ``DICTIONARY_LIMIT``, or their
  dictionary would pass ``DICTIONARY_BYTES`` (pyarrow's own limit).

Both twins write the same bytes, and pyarrow, DuckDB, polars and Spark read
them as the array (tests/parquet/test_list_chunks.py).
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: More distinct values than this in one page, or a dictionary of more bytes: PLAIN values instead.
DICTIONARY_LIMIT = 1 << 16
DICTIONARY_BYTES = 1 << 20
#: The value types, by their pyarrow names: (bytes an item, the struct format that reads one); a string: 0.
VALUE_TYPES = {"float": (4, "I"), "int16": (2, "h"), "int8": (1, "b"), "string": (0, "")}
_RUN_GROUPS = 63        # bit-packed groups of 8 a run (its header then fits in one byte)


def _varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _rle(runs: list[list[int]]) -> bytes:
    """Levels as the RLE hybrid's runs (header ``count << 1``, the value in a byte), behind a 4-byte length."""
    out = bytearray()
    for value, count in runs:
        _varint(out, count << 1)
        out.append(value)
    return struct.pack("<i", len(out)) + bytes(out)


def _bitpacked(out: bytearray, indices: list[int], width: int) -> None:
    """``indices`` as the RLE hybrid's bit-packed runs of ``width`` bits an index, least significant bit first."""
    for start in range(0, len(indices), 8 * _RUN_GROUPS):
        run = indices[start:start + 8 * _RUN_GROUPS]
        groups = (len(run) + 7) // 8
        _varint(out, groups << 1 | 1)
        acc = 0
        for i, index in enumerate(run):
            acc |= index << (i * width)
        out += acc.to_bytes(groups * width, "little")


def _bits(validity: Any, first: int, count: int) -> list[bool]:
    """The validity bits ``first`` to ``first + count`` as booleans (all true without a bitmap)."""
    if validity is None:
        return [True] * count
    data = memoryview(validity)
    return [bool(data[(first + i) >> 3] >> ((first + i) & 7) & 1) for i in range(count)]


def _plain(word: Any, code: str) -> bytes:
    if not code:
        framed: bytes = struct.pack("<i", len(word)) + word
        return framed
    return struct.pack("<I" if code == "I" else "<i", word)


def _words(values: Any, items: list[int], span: tuple[int, int], size: int, code: str) -> list[Any]:
    """The set items' values: a number as its 4-byte word (a float's bits), a string as its bytes; a
    string's offsets are checked over ``span``, the items the lists hold."""
    value_validity, *buffers = values.buffers()
    if size:
        if not items:
            return []
        raw = memoryview(buffers[0])
        return [struct.unpack_from("<" + code, raw, (values.offset + j) * size)[0] for j in items]
    offsets_buffer, data = buffers
    lo, hi = span
    if lo == hi:
        return []
    if offsets_buffer is None or offsets_buffer.size < 4 * (values.offset + len(values) + 1):
        raise ValueError("list_page: the strings' offsets are not in order within their bytes")
    ends = struct.unpack_from(f"<{hi - lo + 1}i", offsets_buffer, 4 * (values.offset + lo))
    if (any(ends[i] > ends[i + 1] for i in range(hi - lo)) or ends[0] < 0
            or ends[-1] > (data.size if data is not None else 0)):
        raise ValueError("list_page: the strings' offsets are not in order within their bytes")
    text = bytes(data) if data is not None else b""
    return [text[ends[j - lo]:ends[j - lo + 1]] for j in items]


def list_page(array: Any) -> tuple[bytes, bytes | None, int, int]:
    """``(body, dictionary, entries, distinct)`` of a ``list<float32|int16|int8|string>`` array: see the
    module's docstring. ``dictionary`` is None where the values are PLAIN; ``entries`` counts the levels (the
    page's values), ``distinct`` the dictionary's values (0 without one).
    """
    kind = str(array.type.value_type)
    if kind not in VALUE_TYPES:
        raise TypeError(f"list_page takes a list of float, int16, int8 or string, not {array.type}")
    size, code = VALUE_TYPES[kind]
    list_validity, offsets_buffer = array.buffers()[:2]
    values = array.values                   # the child array whole (its own offset), as offsets index it
    value_validity, value_buffer = values.buffers()[:2]
    count, first = len(array), array.offset
    if not count:
        offsets: tuple[int, ...] = (0,)
    elif offsets_buffer is None or offsets_buffer.size < 4 * (first + count + 1):
        raise ValueError("list_page: the list's offsets are not in order within its values")
    else:
        offsets = struct.unpack_from(f"<{count + 1}i", offsets_buffer, 4 * first)
    if any(offsets[i] > offsets[i + 1] for i in range(count)) or offsets[0] < 0 or offsets[-1] > len(values):
        raise ValueError("list_page: the list's offsets are not in order within its values")
    if size and (values.offset + len(values)) * size > (value_buffer.size if value_buffer is not None else 0):
        raise ValueError("list_page: the values are shorter than the array says")
    if list_validity is not None and list_validity.size * 8 < first + count:
        raise ValueError("list_page: the validity bitmap is shorter than the array")
    if value_validity is not None and value_validity.size * 8 < values.offset + len(values):
        raise ValueError("list_page: the validity bitmap is shorter than the values")
    present = _bits(list_validity, first, count)
    reps: list[list[int]] = []
    defs: list[list[int]] = []
    items: list[int] = []        # the set items' positions in values
    item_bits = _bits(value_validity, values.offset + offsets[0], offsets[-1] - offsets[0]) if count else []

    def level(runs: list[list[int]], value: int, n: int) -> None:
        if runs and runs[-1][0] == value:
            runs[-1][1] += n
        else:
            runs.append([value, n])

    for i in range(count):
        lo, hi = offsets[i], offsets[i + 1]
        if not present[i]:
            level(reps, 0, 1)
            level(defs, 0, 1)
            continue
        if lo == hi:
            level(reps, 0, 1)
            level(defs, 1, 1)
            continue
        level(reps, 0, 1)
        if hi - lo > 1:
            level(reps, 1, hi - lo - 1)
        for j in range(lo, hi):
            is_set = item_bits[j - offsets[0]]
            level(defs, 3 if is_set else 2, 1)
            if is_set:
                items.append(j)
    entries = sum(n for _, n in reps)
    words = _words(values, items, (offsets[0], offsets[-1]), size, code)
    body = bytearray(_rle(reps) + _rle(defs))
    index: dict[Any, int] = {}
    plain_size = 0
    for word in words:
        if word not in index:
            grown = plain_size + (4 + len(word) if not size else 4)
            if len(index) == DICTIONARY_LIMIT or grown > DICTIONARY_BYTES:
                break
            index[word] = len(index)
            plain_size = grown
    else:
        if words:
            width = max(1, (len(index) - 1).bit_length())
            body.append(width)
            _bitpacked(body, [index[w] for w in words], width)
            return bytes(body), b"".join(_plain(w, code) for w in index), entries, len(index)
    body += b"".join(_plain(w, code) for w in words)
    return bytes(body), None, entries, 0
