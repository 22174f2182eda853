"""Pure-Python twin of fastpgn/scan/release.pxi: a record batch of lichess's Parquet release as PGN text.

``release_text(columns, movetext)`` writes the PGN text of one batch's games
with ``pyarrow.compute``, column by column (C++ without the GIL, but one
pass and one new array per step); the compiled twin writes the same bytes in
one pass over the rows. ``fastpgn.io.lichess_parquet`` chooses each column's
kind and hands over arrays of the type that kind names:

========  ==================  ==============================================
kind      array type          value text
========  ==================  ==============================================
``text``  string              the value, ``"`` and ``\\`` escaped, CR and LF
                              each a space (a tag is one line)
``int``   int8, 16, 32 or 64  decimal; ``+`` before 0 and up when ``signed``
``date``  date32              ``YYYY.MM.DD``, for years 1 to 9999
``time``  time32, time64       ``HH:MM:SS`` (whole seconds), for the times of
                              a day (0 to 86,399 seconds)
========  ==================  ==============================================

A null leaves the tag out, or writes ``?`` when ``unrated``. After the tags:
a blank line, the movetext (``*`` when null or empty), a blank line. A date
or a time outside those ranges is no text either kernel writes: the answer
is then None, and the caller hands such columns over as text instead.
"""

from __future__ import annotations

TYPE_CHECKING = False   # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any

#: The array types each kind takes, as pyarrow names them.
KINDS = {"text": ("string",), "int": ("int8", "int16", "int32", "int64"), "date": ("date32[day]",),
         "time": ("time32[s]", "time32[ms]", "time64[us]", "time64[ns]")}
#: The values the ``date`` and ``time`` kinds write: days since 1970-01-01 (0001-01-01 to 9999-12-31), seconds.
RANGES = {"date": (-719_162, 2_932_896), "time": (0, 86_399)}
_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _in_range(pa: Any, pc: Any, array: Any, bounds: tuple[int, int]) -> bool:
    units = _UNITS[array.type.unit] if pa.types.is_time(array.type) else 1
    low, high = pc.min_max(array.cast(pa.int32() if array.type.bit_width == 32 else pa.int64())).values()
    return low.as_py() is None or (bounds[0] * units <= low.as_py() and high.as_py() < (bounds[1] + 1) * units)


def _value_text(pa: Any, pc: Any, kind: str, signed: bool, array: Any) -> Any:
    if kind == "text":
        if pc.any(pc.match_substring_regex(array, r'["\\\n\r]')).as_py():
            array = pc.replace_substring(array, "\\", "\\\\")
            array = pc.replace_substring(array, '"', '\\"')
            array = pc.replace_substring_regex(array, r"[\r\n]", " ")
        return array
    text = array.cast(pa.string())
    if kind == "date":
        return pc.replace_substring(text, "-", ".")
    if kind == "time":
        return pc.utf8_slice_codeunits(text, 0, 8)      # whole seconds: 12:30:01.250 -> 12:30:01
    if kind == "int" and signed:        # the dumps write +5 and +0
        return pc.if_else(pc.greater_equal(array, 0), pc.binary_join_element_wise("+", text, ""), text)
    return text


def release_text(columns: list[tuple[str, str, bool, bool, Any]], movetext: Any) -> Any:
    """The PGN text of one batch: ``columns`` is a list of ``(name, kind, signed, unrated, array)``, in tag order;
    None when a date or a time lies outside its kind's range."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def scalar(value: str) -> Any:     # compute functions given Python strings convert them on every call
        return pa.scalar(value, pa.string())

    if str(movetext.type) != "string":
        raise TypeError(f"the movetext must be string, not {movetext.type}")
    for _name, kind, _signed, _unrated, array in columns:
        types = KINDS.get(kind)
        if types is None:
            raise ValueError(f"no column kind {kind!r}")
        if str(array.type) not in types:
            raise TypeError(f"a {kind} column must be {' or '.join(types)}, not {array.type}")
        if len(array) != len(movetext):
            raise ValueError(f"a column of {len(array)} rows in a batch of {len(movetext)}")
    if any(kind in RANGES and not _in_range(pa, pc, array, RANGES[kind]) for _, kind, _, _, array in columns):
        return None
    pieces = []
    for name, kind, signed, unrated, array in columns:
        text = _value_text(pa, pc, kind, signed, array)
        if unrated:
            text = pc.fill_null(text, scalar("?"))
        piece = pc.binary_join_element_wise(scalar(f'[{name} "'), text, scalar('"]\n'), scalar(""))
        pieces.append(pc.fill_null(piece, scalar("")))   # null: the tag left out
    # (an array of nulls, not a null scalar: before pyarrow 23, if_else of a scalar and a sliced string array
    # gives offsets out of bounds)
    movetext = pc.if_else(pc.equal(pc.binary_length(movetext), 0), pa.nulls(len(movetext), pa.string()),
                          movetext).fill_null("*")
    joined = pc.binary_join_element_wise(*pieces, scalar("\n"), movetext, scalar("\n\n"), scalar(""))
    if joined.type != pa.string():
        joined = joined.cast(pa.string())
    offsets = memoryview(joined.buffers()[1]).cast("i")
    first, last = offsets[joined.offset], offsets[joined.offset + len(joined)]
    data = joined.buffers()[2]
    return memoryview(data).cast("B")[first:last] if data is not None else memoryview(b"")


def _suspect(text: bytes) -> bool:
    """Whether a movetext may read as more than one game (the compiled twin's _movetext_suspect)."""
    if b"\n" in text or b"\r" in text:
        return True
    text = text.strip(b" \t")
    if text.startswith(b"["):
        return True
    # the first of each result ends the text, or there is text after one
    return any(0 <= text.find(token) != len(text) - len(token) for token in (b"*", b"1-0", b"0-1", b"1/2-1/2"))


def release_suspects(movetext: Any) -> list[int]:
    """The rows of a string array whose movetext may read as more than one game: a line break, a ``[``
    first, or a result (``*``, ``1-0``, ``0-1``, ``1/2-1/2``) with text after it."""
    if str(movetext.type) != "string":
        raise TypeError(f"the movetext must be string, not {movetext.type}")
    buffers = movetext.buffers()
    if buffers[2] is None or not len(movetext):
        return []
    offsets = memoryview(buffers[1]).cast("i")[movetext.offset:movetext.offset + len(movetext) + 1]
    data = bytes(buffers[2])
    valid = movetext.is_valid().to_pylist() if movetext.null_count else None
    return [r for r in range(len(movetext))
            if (valid is None or valid[r]) and _suspect(data[offsets[r]:offsets[r + 1]])]


__all__ = ["KINDS", "RANGES", "release_suspects", "release_text"]
