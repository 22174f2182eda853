"""Cython scanner kernel; the pure-Python twin fastpgn.scan._scan_py is its specification.

One compiled module built from a grammar and its sinks, each part in its own
file (included below, so the C compiler still sees one translation unit and
inlines across them), each beside its pure twin (see fastpgn.scan._scan_py's table):

* scan/grammar.pxi: where games start and end, tags, movetext, comments,
  results; it fills a _Game with spans into the block (no Python object)
  and never writes output.
* scan/filters.pxi: the filters (where_plan) the grammar tests on a game's
  tag spans, and on its movetext once read; lichess's speed of a TimeControl.
* scan/utf8.pxi: where the first byte that is not UTF-8 is (utf8_error).
* scan/output.pxi: the growing C output buffer and tag values read by name,
  shared by the sinks.
* scan/replay.pxi: which start a game declares (FEN, Variant) and its replay
  on the compiled board, without the GIL.
* scan/lines.pxi: the 22-field line sink (openings table, moves hooks).
* scan/buffers.pxi: the column sink's growing Arrow buffers, handed to Arrow without a copy.
* scan/columns.pxi: the column sink (the analysis schema in Arrow buffers).
* scan/analysis.pxi: what lichess computes from the evals and clocks (the analysis columns).
* scan/csv.pxi: the CSV sink (the column sink's buffers written as CSV rows).
* scan/positions.pxi: the positions sink (one row per position, from the column sink's replay).
* scan/records.pxi: the record sink (headers, SAN, evals, clocks; headers
  only), with the str and int caches; the compiled cores of reader.Game
  and reader.GameReader (GameCore, RecordFeed).
* scan/release.pxi: not a sink but the grammar's input: a record batch of
  lichess's Parquet release written as PGN text, straight from its Arrow
  buffers.

The output buffer (Out) is fastpgn/_buffer.pxd's, shared with the Parquet list-page writer
(fastpgn/parquet/_pages_cy.pyx), which was a part of this module and is its own now.

Everything works on a ``const char*`` over the block with ``memchr``
skipping. A game a filter refuses, and every game read headers only, has its
movetext skipped (_skip_movetext: a run to the next byte that can matter,
sixteen bytes a step with SSE2). A game read in full has the commonest
tokens of a dump (move numbers, moves of the common shapes, lichess's
comments) read in a loop of their own (_plies_run), the rest by _movetext. The line sink hands read_lines its lines as
str (``text=True``), decoded from UTF-8 in C.
"""

from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memchr, memcmp, memcpy, memset, strlen
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_DecodeUTF8, PyUnicode_New
from cpython.dict cimport PyDict_GetItem, PyDict_Check
from cpython.ref cimport PyObject
from cpython.list cimport PyList_New
from cpython.long cimport PyLong_FromLongLong
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t
from fastpgn.board._board_cy cimport FEN_ROOM, Plies, play_from, play_plies, spans_board, uci_spans, validate_spans
from fastpgn.scan.contract import HEADERS_REPLAY as _HEADERS_REPLAY, ColumnError, ScanResult   # (defined once, in Python)

cdef extern from "Python.h":
    ctypedef unsigned short Py_UCS2

cdef extern from "string.h":
    void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen)

SEP = "\u2502".encode()
cdef bytes _SEP = SEP
# lines_from_block without a moves hook runs without the GIL: threads can share a dump.
RELEASES_GIL = True
# ... and so it does with board.moves_hook() or moves_hook(uci=True), but for the games
# it hands to the hook (start tags: FEN, Variant) and those it rejects.
REPLAYS_WITHOUT_GIL = True
_BOM = b"\xef\xbb\xbf"

LINE_TAGS = (
    b"Site", b"UTCDate", b"UTCTime", b"Result", b"Termination", b"ECO",
    b"Opening", b"TimeControl", b"White", b"WhiteElo", b"WhiteRatingDiff",
    b"WhiteTitle", b"Black", b"BlackElo", b"BlackRatingDiff", b"BlackTitle",
    b"Date", b"Time",
)
cdef enum:
    NSLOTS = 18
    S_SITE = 0
    S_UTCDATE = 1
    S_UTCTIME = 2
    S_RESULT = 3
    S_TERMINATION = 4
    S_ECO = 5
    S_OPENING = 6
    S_TC = 7
    S_WHITE = 8
    S_WELO = 9
    S_WDIFF = 10
    S_WTITLE = 11
    S_BLACK = 12
    S_BELO = 13
    S_BDIFF = 14
    S_BTITLE = 15


include "grammar.pxi"
include "filters.pxi"
include "utf8.pxi"
include "output.pxi"
include "replay.pxi"
include "lines.pxi"
include "records.pxi"
include "buffers.pxi"
include "columns.pxi"
include "analysis.pxi"
include "csv.pxi"
include "positions.pxi"
include "release.pxi"

# The column sinks checked against fastpgn.schema.COLUMNS as the kernel loads: a column a sink leaves out
# is a ColumnError naming it and the sink when fastpgn.scan is imported, not at some later block.
check_columns()
