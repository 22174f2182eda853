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
(``tests/parquet/test_row_groups.py`` holds this byte for byte).

The footers are read and written with ``fastpgn.parquet.thrift``, which
keeps every field as it was read, in order; the join rewrites only the
positions named below, so a footer field pyarrow adds later passes through
unchanged. A file with what this join cannot move
(page indexes or bloom filters, which sit after the row groups, or the copy
of each column chunk's metadata after its pages that pyarrow 17 and older
write: hence fastpgn's floor of pyarrow 18) is refused.
"""

from __future__ import annotations

import os
import struct

from fastpgn.errors import ParquetWriteError
from fastpgn.io import output as _output
from fastpgn.parquet.thrift import ThriftError, field, read_struct, write_struct

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"PAR1"

# Field ids of parquet.thrift (parquet-format) this join reads or moves
FILE_NUM_ROWS, FILE_ROW_GROUPS = 3, 4
RG_COLUMNS, RG_FILE_OFFSET, RG_TOTAL_COMPRESSED, RG_ORDINAL = 1, 5, 6, 7
CC_FILE_OFFSET, CC_META = 2, 3
_CC_INDEX_FIELDS = (4, 6)       # offset_index_offset, column_index_offset: after the row groups, not moved here
_CMD_OFFSETS = (9, 10, 11)      # data_page_offset, index_page_offset, dictionary_page_offset
_CMD_BLOOM_FILTER = 14          # bloom_filter_offset: after the row groups too


class JoinError(ParquetWriteError):
    """A row group's Parquet bytes are not what the join can move (a setting it does not support)."""


def _footer(data: bytes) -> list[Any]:
    try:
        return read_struct(data)[0]
    except (ThriftError, IndexError) as exc:
        raise JoinError(f"not a Parquet footer ({exc})") from exc


# ---------------------------------------------------------------- row groups

class EncodedRowGroup:
    """One row group as a whole Parquet file's bytes: its column chunks (``body``) and its footer, parsed."""

    __slots__ = ("body", "footer", "rows")

    def __init__(self, data: Any) -> None:
        """``data``: the file's bytes (any buffer: pyarrow's own is kept as it is, not copied)."""
        view = memoryview(data)
        if len(view) < 12 or view[:4] != MAGIC or view[-4:] != MAGIC:
            raise JoinError("not a Parquet file")
        size = struct.unpack("<I", view[-8:-4])[0]
        start = len(view) - 8 - size
        if start < len(MAGIC):
            raise JoinError("not a Parquet file")
        self.footer = _footer(bytes(view[start:-8]))
        groups = field(self.footer, FILE_ROW_GROUPS)
        if groups is None or len(groups[2][1]) != 1:
            raise JoinError("a row group is encoded as a file of exactly one row group")
        group = groups[2][1][0]
        if any(field(column, CC_FILE_OFFSET)[2] for column in field(group, RG_COLUMNS)[2][1]
               if field(column, CC_FILE_OFFSET) is not None):
            raise JoinError("this pyarrow copies each column chunk's metadata after its pages, which the join "
                            "cannot move: fastpgn needs pyarrow 18 or later")
        offset = field(group, RG_FILE_OFFSET)
        total = field(group, RG_TOTAL_COMPRESSED)
        if offset is None or total is None or offset[2] != len(MAGIC) or len(MAGIC) + total[2] != start:
            raise JoinError("a row group's file holds more than its column chunks (page index, bloom filter?)")
        for column in field(group, RG_COLUMNS)[2][1]:
            meta = field(column, CC_META)
            if (any(field(column, f) for f in _CC_INDEX_FIELDS)
                    or (meta is not None and field(meta[2], _CMD_BLOOM_FILTER))):
                raise JoinError("page indexes and bloom filters cannot be joined")
        self.body = view[len(MAGIC):start]
        self.rows = field(self.footer, FILE_NUM_ROWS)[2]


def encode_row_group(table: Any, arrow_schema: Any, make_writer: Any) -> EncodedRowGroup:
    """``table`` as one row group, encoded by ``make_writer(sink, arrow_schema)`` (a ``ParquetWriter``)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    writer = make_writer(sink, arrow_schema)
    try:
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
    finally:
        writer.close()
    return EncodedRowGroup(sink.getvalue())


def _moved(group: list[Any], shift: int, ordinal: int) -> list[Any]:
    """A RowGroup structure whose bytes now start ``shift`` bytes later, numbered ``ordinal``."""
    out = []
    for fid, kind, value in group:
        if fid == RG_COLUMNS:
            value = (value[0], [moved_column(c, shift) for c in value[1]])
        elif fid == RG_FILE_OFFSET:
            value += shift
        elif fid == RG_ORDINAL:
            value = ordinal
        out.append([fid, kind, value])
    return out


def moved_column(column: list[Any], shift: int) -> list[Any]:
    out = []
    for fid, kind, value in column:
        if fid == CC_FILE_OFFSET and value:
            value += shift
        elif fid == CC_META:
            value = [[f, k, v + shift if f in _CMD_OFFSETS else v] for f, k, v in value]
        out.append([fid, kind, value])
    return out


def join_footer(groups: list[tuple[EncodedRowGroup, int]]) -> bytes:
    """The footer of a file holding ``groups``, each with where its column chunks start in it."""
    first = groups[0][0].footer
    moved = [_moved(g.footer[_index(g.footer, FILE_ROW_GROUPS)][2][1][0], at - len(MAGIC), i)
             for i, (g, at) in enumerate(groups)]
    fields = []
    for fid, kind, value in first:
        if fid == FILE_NUM_ROWS:
            value = sum(g.rows for g, _ in groups)
        elif fid == FILE_ROW_GROUPS:
            value = (value[0], moved)
        fields.append([fid, kind, value])
    out = bytearray()
    write_struct(out, fields)
    return bytes(out)


def _index(fields: list[Any], fid: int) -> int:
    for i, entry in enumerate(fields):
        if entry[0] == fid:
            return i
    raise JoinError(f"a Parquet footer without field {fid}")


class JoinedParquetFile:
    """A Parquet file written from row groups encoded apart, appended in order.

    ``where``: a path, a name fastpgn makes (the file is created as ``fastpgn.io.output.create`` creates
    one, never through a link, and closed at the end), or a binary file object (written from where it
    stands, and left open). ``empty_footer``: the footer of a file of no row groups (pyarrow's for
    the schema), written when none was appended; without it such a file is an error.
    """

    def __init__(self, where: Any, empty_footer: bytes | None = None) -> None:
        self.path = where
        self._owned = isinstance(where, (str, os.PathLike))
        self._file = _output.create(where) if self._owned else where
        self._file.write(MAGIC)
        self._at = len(MAGIC)
        self._groups: list[tuple[EncodedRowGroup, int]] = []
        self._empty_footer = empty_footer

    def append(self, group: EncodedRowGroup) -> None:
        self._file.write(group.body)
        self._groups.append((group, self._at))
        self._at += len(group.body)
        group.body = memoryview(b"")    # written: the footer is all that is kept

    def close(self) -> None:
        """The footer written and the file closed (not synced; a file object is flushed, not closed)."""
        if self._groups:
            footer = join_footer(self._groups)
        elif self._empty_footer is not None:
            footer = self._empty_footer
        else:
            raise JoinError("a Parquet file of no row groups")
        self._file.write(footer)
        self._file.write(struct.pack("<I", len(footer)))
        self._file.write(MAGIC)
        if self._owned:
            self._file.close()
        else:
            self._file.flush()

    def fileno(self) -> int:
        return self._file.fileno()

    def discard(self) -> None:
        if not self._owned:
            return
        try:
            self._file.close()
        except OSError:
            pass
