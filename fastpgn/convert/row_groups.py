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

class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, kind: int):
        if kind in (_TRUE, _FALSE):     # (a bool in a field: the type is the value; in a list, a byte)
            return kind == _TRUE
        if kind == _BYTE:
            b = self.byte()
            return b - 256 if b > 127 else b
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            raw = self.data[self.pos:self.pos + 8]
            self.pos += 8
            return raw
        if kind == _BINARY:
            n = self.varint()
            raw = self.data[self.pos:self.pos + n]
            self.pos += n
            return raw
        if kind in (_LIST, _SET):
            head = self.byte()
            size, elem = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if elem in (_TRUE, _FALSE):
                return (elem, [self.byte() == _TRUE for _ in range(size)])
            return (elem, [self.value(elem) for _ in range(size)])
        if kind == _MAP:
            size = self.varint()
            if not size:
                return (0, 0, [])
            types = self.byte()
            key, val = types >> 4, types & 0x0F
            return (key, val, [(self.value(key), self.value(val)) for _ in range(size)])
        if kind == _STRUCT:
            return self.struct()
        raise JoinError(f"unknown Thrift type {kind} in a Parquet footer (byte {self.pos})")

    def struct(self) -> list:
        """A structure's fields, in order: ``[field_id, type, value]`` each."""
        fields: list = []
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return fields
            kind = head & 0x0F
            delta = head >> 4
            fid = last + delta if delta else self.zigzag()
            fields.append([fid, kind, self.value(kind)])
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
        self.footer = _Reader(bytes(view[start:-8])).struct()
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
