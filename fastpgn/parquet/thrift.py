"""Thrift's compact protocol, schema-less: how Parquet writes its footers and page headers.

:func:`read_struct` reads any compact-protocol structure without knowing
its schema, as a list of ``[field_id, type, value]`` in the order read (a
list or set as ``(element_type, items)``, a map as ``(key_type, value_type,
pairs)``, a structure as its own such list), and :func:`write_struct`
writes such a list back, byte for byte what was read
(tests/parquet/test_row_groups.py). ``fastpgn.parquet.row_groups`` moves
the positions in pyarrow's footers with it; ``fastpgn.parquet.list_chunks``
writes the page headers and column metadata of the pages the kernel makes.
"""

from __future__ import annotations

from fastpgn.errors import ParquetWriteError

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: The compact protocol's type ids.
TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)


class ThriftError(ParquetWriteError):
    """Bytes that are not a compact-protocol structure this codec reads."""


# Each reader takes the bytes and where to start, and gives the value and where it ended: plain functions
# over local variables (a method call a byte was most of the join's cost, which runs on every row group).

def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    b = data[pos]
    pos += 1
    if b < 0x80:
        return b, pos
    result, shift = b & 0x7F, 7
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _read_value(data: bytes, pos: int, kind: int) -> tuple[Any, int]:
    if kind == I32 or kind == I64 or kind == I16:
        n, pos = _read_varint(data, pos)
        return (n >> 1) ^ -(n & 1), pos
    if kind == BINARY:
        n, pos = _read_varint(data, pos)
        return data[pos:pos + n], pos + n
    if kind == STRUCT:
        return read_struct(data, pos)
    if kind == TRUE or kind == FALSE:     # (a bool in a field: the type is the value; in a list, a byte)
        return kind == TRUE, pos
    if kind == BYTE:
        b = data[pos]
        return (b - 256 if b > 127 else b), pos + 1
    if kind == DOUBLE:
        return data[pos:pos + 8], pos + 8
    if kind == LIST or kind == SET:
        head = data[pos]
        pos += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _read_varint(data, pos)
        items: list[Any] = []
        if elem == TRUE or elem == FALSE:
            items = [data[pos + i] == TRUE for i in range(size)]
            return (elem, items), pos + size
        for _ in range(size):
            item, pos = _read_value(data, pos, elem)
            items.append(item)
        return (elem, items), pos
    if kind == MAP:
        size, pos = _read_varint(data, pos)
        if not size:
            return (0, 0, []), pos
        types = data[pos]
        pos += 1
        key, val = types >> 4, types & 0x0F
        pairs = []
        for _ in range(size):
            k, pos = _read_value(data, pos, key)
            v, pos = _read_value(data, pos, val)
            pairs.append((k, v))
        return (key, val, pairs), pos
    raise ThriftError(f"unknown Thrift type {kind} in a Parquet footer (byte {pos})")


def read_struct(data: bytes, pos: int = 0) -> tuple[list[Any], int]:
    """A structure's fields, in order (``[field_id, type, value]`` each), and where it ended."""
    fields: list[Any] = []
    last = 0
    while True:
        head = data[pos]
        pos += 1
        if head == 0:
            return fields, pos
        kind = head & 0x0F
        delta = head >> 4
        if delta:
            fid = last + delta
        else:
            n, pos = _read_varint(data, pos)
            fid = (n >> 1) ^ -(n & 1)
        value, pos = _read_value(data, pos, kind)
        fields.append([fid, kind, value])
        last = fid


def _varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def _write_value(out: bytearray, kind: int, value: Any) -> None:
    if kind in (TRUE, FALSE):
        return
    if kind == BYTE:
        out.append(value & 0xFF)
    elif kind in (I16, I32, I64):
        _zigzag(out, value)
    elif kind == DOUBLE:
        out += value
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind in (LIST, SET):
        elem, items = value
        if len(items) < 15:
            out.append(len(items) << 4 | elem)
        else:
            out.append(0xF0 | elem)
            _varint(out, len(items))
        if elem in (TRUE, FALSE):
            out += bytes(TRUE if item else FALSE for item in items)
        else:
            for item in items:
                _write_value(out, elem, item)
    elif kind == MAP:
        key, val, items = value
        _varint(out, len(items))
        if items:
            out.append(key << 4 | val)
            for k, v in items:
                _write_value(out, key, k)
                _write_value(out, val, v)
    elif kind == STRUCT:
        write_struct(out, value)


def write_struct(out: bytearray, fields: list[Any]) -> None:
    last = 0
    for fid, kind, value in fields:
        if kind in (TRUE, FALSE):
            kind = TRUE if value else FALSE
        delta = fid - last
        if 0 < delta <= 15:
            out.append(delta << 4 | kind)
        else:
            out.append(kind)
            _zigzag(out, fid)
        _write_value(out, kind, value)
        last = fid
    out.append(0)


def field(fields: list[Any], fid: int) -> Any:
    for field in fields:
        if field[0] == fid:
            return field
    return None
