"""Adding a column to the analysis schema the way DEVELOP.md says ("How to add a sink or a column").

A column is declared once, in ``fastpgn.schema.COLUMNS``; each column sink
says which of its values (pure: ``scan/columns.py``) or buffers (compiled:
``_FILLS`` in ``scan/columns.pxi``) make it, and takes the schema's order,
the column's layout and its CSV writer from the schema's type. So a scratch
column the schema names and a sink leaves out is a ``ColumnError`` naming
the column and the sink, on both kernels and through both sinks (never a
crash: the compiled sinks check each block's buffers before reading them),
and one that each sink makes passes the CSV differential test with no CSV
code written for it. The tests add the scratch column without rebuilding
the kernel: the compiled sink's row in ``_FILLS`` names the buffers of an
existing column of the same type, as a new row would name its own.
"""

from __future__ import annotations

import csv
import io

import pytest

from fastpgn import _backend, csv_text, schema
from fastpgn.scan import columns as _columns_py
from fastpgn.scan.contract import ColumnError
from fastpgn.scan.csv import WRITES
from helpers import decompressed, real_game, shared

BACKENDS = dict(_backend.available("scan._scan"))
needs_cy = pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled scanner is not built here")
SINKS = {"py": "fastpgn/scan/columns.py", "cy": "fastpgn/scan/columns.pxi"}
DUMP = ("data", "lichess-db", "lichess_db_standard_rated_2022-06.head2499.pgn.zst")   # evals, clocks, NAGs


def with_scratch(monkeypatch, kind: str) -> None:
    """``fastpgn.schema.COLUMNS`` with a scratch column of type ``kind`` before ``byte_offset`` (so every column
    after it moves: what a column added in the middle does)."""
    at = schema.names().index("byte_offset")
    scratch = schema.Column("scratch", kind, "a column made for this test")
    monkeypatch.setattr(schema, "COLUMNS", schema.COLUMNS[:at] + (scratch,) + schema.COLUMNS[at:])


def made_by_both(monkeypatch, like: str) -> None:
    """The scratch column made by both column sinks as a copy of column ``like`` (its values; its buffers)."""
    made = _columns_py._columns

    def columns(data, records, openings):
        values = made(data, records, openings)
        values["scratch"] = values[like]
        return values

    monkeypatch.setattr(_columns_py, "_columns", columns)
    if "cy" in BACKENDS:
        monkeypatch.setitem(BACKENDS["cy"]._FILLS, "scratch", BACKENDS["cy"]._FILLS[like])
    # (csv_text keeps the schema's types as they were at its import: told of the scratch column's here)
    monkeypatch.setitem(csv_text._TYPES, "scratch", dict(csv_text._TYPES)[like])


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_each_kernel_makes_every_column_of_the_schema_in_its_order(name):
    game = real_game(0)
    result = BACKENDS[name].columns_from_block(game, 0, len(game), uci=True, positions=True, fens=True)
    assert tuple(result.output) == schema.names(uci=True, positions=True, fens=True)
    assert result.games_read == 1 and not result.rejects


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_column_left_out_of_the_column_sink_is_an_error_naming_it_and_the_sink(monkeypatch, name):
    kernel = BACKENDS[name]
    game = real_game(0)
    with_scratch(monkeypatch, "int16")
    with pytest.raises(ColumnError, match=f"{SINKS[name]}.* makes no column 'scratch'"):
        kernel.columns_from_block(game, 0, len(game))
    with pytest.raises(ColumnError, match="no column 'scratch'"):
        kernel.csv_from_block(game, 0, len(game), columns=["white", "scratch"])
    monkeypatch.undo()      # the schema as it is: the sink makes its tables again, and the block reads
    assert kernel.csv_from_block(game, 0, len(game), columns=["white"]).games_read == 1


@pytest.mark.parametrize("like", ["white_elo", "base_seconds", "utc", "date", "mate", "white_accuracy", "event",
                                  "moves", "judgement", "eval_cp", "eval_mate", "clock", "win_percent", "nags",
                                  "tags"])
def test_a_scratch_column_made_by_both_sinks_passes_the_csv_differential_test(monkeypatch, like):
    data = decompressed(shared(*DUMP))
    with_scratch(monkeypatch, schema.columns()[schema.names().index(like)].type)
    made_by_both(monkeypatch, like)
    chosen = ["game_id", like, "scratch", "byte_offset"]
    got = {name: kernel.csv_from_block(data, 0, len(data), columns=chosen) for name, kernel in BACKENDS.items()}
    rows = got["py"].output.split(b"\r\n")
    assert len(rows) == got["py"].games_read + 1 > 2000
    assert len({result.output for result in got.values()}) == 1      # the kernels agree to the byte
    fields = list(csv.reader(io.StringIO(got["py"].output.decode())))
    assert all(row[1] == row[2] for row in fields)      # the scratch column written as the column it copies
    assert any(row[2] for row in fields)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_column_of_a_type_the_csv_sink_cannot_write_is_an_error_naming_it(monkeypatch, name):
    game = real_game(0)
    assert "list<bool>" not in WRITES
    with_scratch(monkeypatch, "list<bool>")
    made_by_both(monkeypatch, "moves")      # (a list of two buffers, so the compiled sink takes the row)
    with pytest.raises(ColumnError, match=r"the CSV sink has no writer for the column 'scratch' \(list<bool>\)"):
        BACKENDS[name].csv_from_block(game, 0, len(game), columns=["white", "scratch"])


@needs_cy
def test_a_buffer_the_compiled_sink_leaves_unfilled_is_an_error_not_a_crash(monkeypatch):
    """What a forgotten branch of the compiled sink was: its buffer read past its end (a segmentation fault)."""
    kernel = BACKENDS["cy"]
    game = real_game(0)
    with_scratch(monkeypatch, "string")
    # the uci column's items: started, and never filled without uci=True
    monkeypatch.setitem(kernel._FILLS, "scratch", kernel._FILLS["uci"][1:])
    for call in (kernel.columns_from_block, kernel.csv_from_block):
        with pytest.raises(ColumnError, match=r"columns\.pxi\) left the column 'scratch' \(string\) unfilled"):
            call(game, 0, len(game))


def test_the_csv_sink_writes_every_type_the_schema_has():
    assert {c.type for c in schema.columns(uci=True, positions=True, fens=True)} <= WRITES


EVERY = schema.columns()    # (the columns a flag adds are made after the rest: no scratch copy of them here)


@needs_cy
@pytest.mark.parametrize("kind", sorted({c.type for c in EVERY}))
def test_a_scratch_column_of_each_type_is_written_alike_by_both_kernels(monkeypatch, kind):
    like = next(c.name for c in EVERY if c.type == kind)
    game = real_game(3)
    with_scratch(monkeypatch, kind)
    made_by_both(monkeypatch, like)
    py, cy = (BACKENDS[name].csv_from_block(game, 0, len(game), columns=[like, "scratch"])
              for name in ("py", "cy"))
    assert py == cy
    (row,) = csv.reader(io.StringIO(py.output.decode()))
    assert row[0] == row[1]
