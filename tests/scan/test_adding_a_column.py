"""Adding a column to the analysis schema the way DEVELOP.md says ("How to add a sink or a column").

A column is declared once, in ``fastpgn.schema.COLUMNS``; each column sink
says which of its values (pure: ``scan/columns.py``) or buffers (compiled:
``_FILLS`` in ``scan/columns.pxi``) make it, and takes the schema's order,
the column's layout and its CSV writer from the schema's type. So a scratch
column the schema names and a sink leaves out is a ``ColumnError`` naming
the column and the sink, on both kernels and through both sinks (never a
crash: the compiled sinks check each block's buffers before reading them),
when the kernel is loaded as well as at a block, and one that each sink
makes passes the CSV differential test with no CSV code written for it.
The tests add the scratch column without rebuilding the kernel: it takes
the place of an existing column of the same type, moved (the compiled
sink's row in ``_FILLS`` for it names that column's buffers, as a new row
would name its own); two rows naming one buffer are refused.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

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


def with_scratch(monkeypatch, kind: str, instead_of: str | None = None) -> None:
    """``fastpgn.schema.COLUMNS`` with a scratch column of type ``kind`` before ``byte_offset`` (so every column
    after it moves: what a column added in the middle does; before ``tags`` in the place of ``byte_offset``
    itself), and without the column ``instead_of``."""
    every = tuple(c for c in schema.COLUMNS if c.name != instead_of)
    at = [c.name for c in every].index("tags" if instead_of == "byte_offset" else "byte_offset")
    scratch = schema.Column("scratch", kind, "a column made for this test")
    monkeypatch.setattr(schema, "COLUMNS", every[:at] + (scratch,) + every[at:])


def made_by_both(monkeypatch, like: str) -> None:
    """The scratch column made by both column sinks in the place of column ``like`` (its values; its buffers),
    which the schema no longer names (with_scratch's ``instead_of``)."""
    made = _columns_py._columns

    def columns(data, records, openings):
        values = made(data, records, openings)
        values["scratch"] = values.pop(like)
        return values

    monkeypatch.setattr(_columns_py, "_columns", columns)
    if "cy" in BACKENDS:
        monkeypatch.setitem(BACKENDS["cy"]._FILLS, "scratch", BACKENDS["cy"]._FILLS[like])
        monkeypatch.delitem(BACKENDS["cy"]._FILLS, like)
    # (csv_text keeps the schema's types as they were at its import: told of the scratch column's here)
    monkeypatch.setitem(csv_text._TYPES, "scratch", dict(csv_text._TYPES)[like])


def type_of(name: str) -> str:
    return schema.columns()[schema.names().index(name)].type


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
    before = BACKENDS["py"].csv_from_block(data, 0, len(data), columns=["game_id", like, "byte_offset"])
    with_scratch(monkeypatch, type_of(like), instead_of=like)
    made_by_both(monkeypatch, like)
    chosen = ["game_id", "scratch", "byte_offset"]
    got = {name: kernel.csv_from_block(data, 0, len(data), columns=chosen) for name, kernel in BACKENDS.items()}
    rows = got["py"].output.split(b"\r\n")
    assert len(rows) == got["py"].games_read + 1 > 2000
    assert len({result.output for result in got.values()}) == 1      # the kernels agree to the byte
    assert got["py"] == before          # the scratch column written as the column whose place it took
    fields = list(csv.reader(io.StringIO(got["py"].output.decode())))
    assert any(row[1] for row in fields)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_two_columns_made_from_one_buffer_are_an_error_naming_both_and_the_sink(monkeypatch, name):
    """A row of _FILLS copied for a new column and left naming the old one's buffers: each column would write
    into the other's rows. The pure sink's twin of it: one list for two columns."""
    kernel = BACKENDS[name]
    game = real_game(0)
    with_scratch(monkeypatch, "int16")
    made = _columns_py._columns

    def columns(data, records, openings):
        values = made(data, records, openings)
        values["scratch"] = values["white_elo"]
        return values

    monkeypatch.setattr(_columns_py, "_columns", columns)
    if name == "cy":
        monkeypatch.setitem(kernel._FILLS, "scratch", kernel._FILLS["white_elo"])
    expected = f"{SINKS[name]}.* makes the columns 'white_elo' and 'scratch' from one (buffer|list)"
    with pytest.raises(ColumnError, match=expected):
        kernel.columns_from_block(game, 0, len(game))
    with pytest.raises(ColumnError, match=expected):
        kernel.csv_from_block(game, 0, len(game), columns=["white"])


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_column_of_a_type_the_csv_sink_cannot_write_is_an_error_naming_it(monkeypatch, name):
    game = real_game(0)
    assert "list<bool>" not in WRITES
    with_scratch(monkeypatch, "list<bool>", instead_of="moves")
    made_by_both(monkeypatch, "moves")      # (a list of two buffers, so the compiled sink takes the row)
    with pytest.raises(ColumnError, match=r"the CSV sink has no writer for the column 'scratch' \(list<bool>\)"):
        BACKENDS[name].csv_from_block(game, 0, len(game), columns=["white", "scratch"])


@needs_cy
def test_a_buffer_the_compiled_sink_leaves_unfilled_is_an_error_not_a_crash(monkeypatch):
    """What a forgotten branch of the compiled sink was: its buffer read past its end (a segmentation fault)."""
    kernel = BACKENDS["cy"]
    game = real_game(0)
    # a string column made from the plies column's buffer: its values filled as int16, its offsets never
    with_scratch(monkeypatch, "string", instead_of="plies")
    monkeypatch.setitem(kernel._FILLS, "scratch", kernel._FILLS["plies"])
    monkeypatch.delitem(kernel._FILLS, "plies")
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
    before = BACKENDS["py"].csv_from_block(game, 0, len(game), columns=["white", like])
    with_scratch(monkeypatch, kind, instead_of=like)
    made_by_both(monkeypatch, like)
    py, cy = (BACKENDS[name].csv_from_block(game, 0, len(game), columns=["white", "scratch"])
              for name in ("py", "cy"))
    assert py == cy == before


@pytest.mark.parametrize("implementation", ["python", "cython"])
def test_a_column_left_out_of_a_sink_fails_when_the_kernel_is_loaded(implementation):
    """The check runs as the kernel loads: ``import fastpgn.scan`` (what every reader does first) is the
    ColumnError naming the column and the sink, before any block is read."""
    if implementation == "cython" and "cy" not in BACKENDS:
        pytest.skip("the compiled scanner is not built here")
    # (fastpgn's own __init__ imports the readers, and so the kernel: the package is entered without it here,
    # so the schema can name a column no sink makes before the kernel loads, as an edited schema.py would)
    script = ("import importlib.util, sys, types\n"
              "package = types.ModuleType('fastpgn')\n"
              "package.__path__ = importlib.util.find_spec('fastpgn').submodule_search_locations\n"
              "sys.modules['fastpgn'] = package\n"
              "from fastpgn import schema\n"
              "schema.COLUMNS += (schema.Column('scratch', 'int16', 'left out of every sink'),)\n"
              "try:\n"
              "    import fastpgn.scan\n"
              "except LookupError as exc:\n"
              "    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
                               "FASTPGN_IMPLEMENTATION": implementation})
    assert done.returncode == 0, done.stderr
    sink = {"python": "the pure column sink (fastpgn/scan/columns.py)",
            "cython": "the compiled column sink (fastpgn/scan/columns.pxi)"}[implementation]
    assert done.stdout == f"ColumnError {sink} makes no column 'scratch' of fastpgn.schema.COLUMNS\n"
