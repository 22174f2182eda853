"""Parquet row groups encoded apart, on any thread, and joined into one file in order.

pyarrow's ``ParquetWriter`` encodes a file's row groups one after the other
on the thread that writes them; the converter's chunks are files of many row
groups, so that one thread would bound a run on any number of cores. Here
each row group is encoded on its own as a whole one-row-group Parquet file in
memory (:func:`encode_row_group`: pyarrow releases the GIL while it encodes,
so several run at once on threads), and :class:`JoinedParquetFile` writes
their column chunks one after the other into the real file, then one footer
that lists them all.

A Parquet file is ``PAR1``, the row groups' column chunks, the footer (the
``FileMetaData`` structure in Thrift's compact protocol), its length, and
``PAR1``. A column chunk's pages hold no file position; only the footer does
(where each column chunk and its pages start). So the joined footer is the
first row group's footer with every row group's entry, each moved by where
its bytes landed, the row count summed and the row groups numbered: the
very bytes pyarrow writes for the same row groups in one ``ParquetWriter``
(``tests/convert/test_row_groups.py`` holds this byte for byte).

The Thrift codec here reads and writes any compact-protocol structure
without knowing its schema (fields are kept as they were read, in order), and
rewrites only the positions named below, so a footer field pyarrow adds
later passes through unchanged. A file with what this join cannot move
(page indexes or bloom filters, which sit after the row groups) is refused.
"""

from __future__ import annotations

import os
import struct

from fastpgn.errors import PGNError

MAGIC = b"PAR1"

# Thrift compact protocol type ids
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)

# Field ids of parquet.thrift (parquet-format) this join reads or moves
_FILE_NUM_ROWS, _FILE_ROW_GROUPS = 3, 4
_RG_COLUMNS, _RG_FILE_OFFSET, _RG_TOTAL_COMPRESSED, _RG_ORDINAL = 1, 5, 6, 7
_CC_FILE_OFFSET, _CC_META = 2, 3
_CC_INDEX_FIELDS = (4, 6)       # offset_index_offset, column_index_offset: after the row groups, not moved here
_CMD_OFFSETS = (9, 10, 11)      # data_page_offset, index_page_offset, dictionary_page_offset
_CMD_BLOOM_FILTER = 14          # bloom_filter_offset: after the row groups too


class JoinError(PGNError):
    """A row group's Parquet bytes are not what the join can move (a setting it does not support)."""


# ---------------------------------------------------------------- Thrift compact protocol, schema-less

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


def _read_value(data: bytes, pos: int, kind: int) -> tuple:
    if kind == _I32 or kind == _I64 or kind == _I16:
        n, pos = _read_varint(data, pos)
        return (n >> 1) ^ -(n & 1), pos
    if kind == _BINARY:
        n, pos = _read_varint(data, pos)
        return data[pos:pos + n], pos + n
    if kind == _STRUCT:
        return _read_struct(data, pos)
    if kind == _TRUE or kind == _FALSE:     # (a bool in a field: the type is the value; in a list, a byte)
        return kind == _TRUE, pos
    if kind == _BYTE:
        b = data[pos]
        return (b - 256 if b > 127 else b), pos + 1
    if kind == _DOUBLE:
        return data[pos:pos + 8], pos + 8
    if kind == _LIST or kind == _SET:
        head = data[pos]
        pos += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _read_varint(data, pos)
        items: list = []
        if elem == _TRUE or elem == _FALSE:
            items = [data[pos + i] == _TRUE for i in range(size)]
            return (elem, items), pos + size
        for _ in range(size):
            item, pos = _read_value(data, pos, elem)
            items.append(item)
        return (elem, items), pos
    if kind == _MAP:
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
    raise JoinError(f"unknown Thrift type {kind} in a Parquet footer (byte {pos})")


def _read_struct(data: bytes, pos: int = 0) -> tuple[list, int]:
    """A structure's fields, in order (``[field_id, type, value]`` each), and where it ended."""
    fields: list = []
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


def _write_value(out: bytearray, kind: int, value) -> None:
    if kind in (_TRUE, _FALSE):
        return
    if kind == _BYTE:
        out.append(value & 0xFF)
    elif kind in (_I16, _I32, _I64):
        _zigzag(out, value)
    elif kind == _DOUBLE:
        out += value
    elif kind == _BINARY:
        _varint(out, len(value))
        out += value
    elif kind in (_LIST, _SET):
        elem, items = value
        if len(items) < 15:
            out.append(len(items) << 4 | elem)
        else:
            out.append(0xF0 | elem)
            _varint(out, len(items))
        if elem in (_TRUE, _FALSE):
            out += bytes(_TRUE if item else _FALSE for item in items)
        else:
            for item in items:
                _write_value(out, elem, item)
    elif kind == _MAP:
        key, val, items = value
        _varint(out, len(items))
        if items:
            out.append(key << 4 | val)
            for k, v in items:
                _write_value(out, key, k)
                _write_value(out, val, v)
    elif kind == _STRUCT:
        _write_struct(out, value)


def _write_struct(out: bytearray, fields: list) -> None:
    last = 0
    for fid, kind, value in fields:
        if kind in (_TRUE, _FALSE):
            kind = _TRUE if value else _FALSE
        delta = fid - last
        if 0 < delta <= 15:
            out.append(delta << 4 | kind)
        else:
            out.append(kind)
            _zigzag(out, fid)
        _write_value(out, kind, value)
        last = fid
    out.append(0)


def _field(fields: list, fid: int):
    for field in fields:
        if field[0] == fid:
            return field
    return None


# ---------------------------------------------------------------- row groups

class EncodedRowGroup:
    """One row group as a whole Parquet file's bytes: its column chunks (``body``) and its footer, parsed."""

    __slots__ = ("body", "footer", "rows")

    def __init__(self, data) -> None:
        """``data``: the file's bytes (any buffer: pyarrow's own is kept as it is, not copied)."""
        view = memoryview(data)
        if len(view) < 12 or view[:4] != MAGIC or view[-4:] != MAGIC:
            raise JoinError("not a Parquet file")
        size = struct.unpack("<I", view[-8:-4])[0]
        start = len(view) - 8 - size
        if start < len(MAGIC):
            raise JoinError("not a Parquet file")
        self.footer = _read_struct(bytes(view[start:-8]))[0]
        groups = _field(self.footer, _FILE_ROW_GROUPS)
        if groups is None or len(groups[2][1]) != 1:
            raise JoinError("a row group is encoded as a file of exactly one row group")
        group = groups[2][1][0]
        offset = _field(group, _RG_FILE_OFFSET)
        total = _field(group, _RG_TOTAL_COMPRESSED)
        if offset is None or total is None or offset[2] != len(MAGIC) or len(MAGIC) + total[2] != start:
            raise JoinError("a row group's file holds more than its column chunks (page index, bloom filter?)")
        for column in _field(group, _RG_COLUMNS)[2][1]:
            meta = _field(column, _CC_META)
            if (any(_field(column, f) for f in _CC_INDEX_FIELDS)
                    or (meta is not None and _field(meta[2], _CMD_BLOOM_FILTER))):
                raise JoinError("page indexes and bloom filters cannot be joined")
        self.body = view[len(MAGIC):start]
        self.rows = _field(self.footer, _FILE_NUM_ROWS)[2]


def encode_row_group(table, arrow_schema, make_writer) -> EncodedRowGroup:
    """``table`` as one row group, encoded by ``make_writer(sink, arrow_schema)`` (a ``ParquetWriter``)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    writer = make_writer(sink, arrow_schema)
    try:
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
    finally:
        writer.close()
    return EncodedRowGroup(sink.getvalue())


def _moved(group: list, shift: int, ordinal: int) -> list:
    """A RowGroup structure whose bytes now start ``shift`` bytes later, numbered ``ordinal``."""
    out = []
    for fid, kind, value in group:
        if fid == _RG_COLUMNS:
            value = (value[0], [_moved_column(c, shift) for c in value[1]])
        elif fid == _RG_FILE_OFFSET:
            value += shift
        elif fid == _RG_ORDINAL:
            value = ordinal
        out.append([fid, kind, value])
    return out


def _moved_column(column: list, shift: int) -> list:
    out = []
    for fid, kind, value in column:
        if fid == _CC_FILE_OFFSET and value:
            value += shift
        elif fid == _CC_META:
            value = [[f, k, v + shift if f in _CMD_OFFSETS else v] for f, k, v in value]
        out.append([fid, kind, value])
    return out


def join_footer(groups: list[tuple[EncodedRowGroup, int]]) -> bytes:
    """The footer of a file holding ``groups``, each with where its column chunks start in it."""
    first = groups[0][0].footer
    moved = [_moved(g.footer[_index(g.footer, _FILE_ROW_GROUPS)][2][1][0], at - len(MAGIC), i)
             for i, (g, at) in enumerate(groups)]
    fields = []
    for fid, kind, value in first:
        if fid == _FILE_NUM_ROWS:
            value = sum(g.rows for g, _ in groups)
        elif fid == _FILE_ROW_GROUPS:
            value = (value[0], moved)
        fields.append([fid, kind, value])
    out = bytearray()
    _write_struct(out, fields)
    return bytes(out)


def _index(fields: list, fid: int) -> int:
    for i, field in enumerate(fields):
        if field[0] == fid:
            return i
    raise JoinError(f"a Parquet footer without field {fid}")


class JoinedParquetFile:
    """A Parquet file written from row groups encoded apart, appended in order."""

    def __init__(self, path: os.PathLike | str) -> None:
        self.path = path
        self._file = open(path, "wb")
        self._file.write(MAGIC)
        self._at = len(MAGIC)
        self._groups: list[tuple[EncodedRowGroup, int]] = []
        self._empty_footer: bytes | None = None

    def append(self, group: EncodedRowGroup) -> None:
        self._file.write(group.body)
        self._groups.append((group, self._at))
        self._at += len(group.body)
        group.body = memoryview(b"")    # written: the footer is all that is kept

    def close(self) -> None:
        """The footer written and the file closed (not synced)."""
        if not self._groups:
            raise JoinError("a Parquet file of no row groups")
        footer = join_footer(self._groups)
        self._file.write(footer)
        self._file.write(struct.pack("<I", len(footer)))
        self._file.write(MAGIC)
        self._file.close()

    def fileno(self) -> int:
        return self._file.fileno()

    def discard(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass
