"""The list-page writer (``fastpgn.parquet.pages``): both kernels write the same page bytes and raise the
same errors, and the compiled one is the live one where it is built.

``_pages_py`` is the specification, ``_pages_cy`` the one the converter runs;
a user notices a difference only as a file one reader reads and another does
not, so the kernels are held to each other byte for byte on the real corpus's
lists and on lists of every shape (hypothesis), and on the arrays they refuse.
That readers read the pages as pyarrow's is tests/parquet/test_list_chunks.py's.
"""

from __future__ import annotations

import ast
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend
from helpers import G2021, G2022, ROOT, decompressed, kernel_params, shared

pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')

from fastpgn import arrow  # noqa: E402
from fastpgn.parquet import pages  # noqa: E402

BACKENDS = dict(_backend.available("parquet._pages"))
STUB = ROOT / "fastpgn" / "parquet" / "_pages_kernel.pyi"
LISTS = ("moves", "clock", "move_seconds", "win_percent", "judgement", "eval_cp", "eval_mate")
TYPES = {"float": pa.float32(), "int16": pa.int16(), "int8": pa.int8(), "string": pa.string()}


def test_the_live_writer_is_the_requested_one():
    import fastpgn

    wanted = _backend.requested()
    if wanted == "auto":
        wanted = "cython" if len(BACKENDS) == 2 else "python"
    assert pages.BACKEND == wanted == fastpgn.BACKENDS["pages"]
    assert pages.kernel is BACKENDS["cy" if wanted == "cython" else "py"]


@pytest.mark.parametrize("kernel", kernel_params("parquet._pages"))
def test_each_kernel_has_what_the_stub_types(kernel):
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert all(callable(getattr(kernel, f)) for f in functions) and functions == {"list_page"}
    assert {n: getattr(kernel, n) for n in names} == {"DICTIONARY_LIMIT": 1 << 16, "DICTIONARY_BYTES": 1 << 20}


def test_the_scanner_no_longer_writes_pages():
    from fastpgn.scan import _scan_py

    for _, kernel in _backend.available("scan._scan"):
        assert not hasattr(kernel, "list_page")
    assert not hasattr(_scan_py, "DICTIONARY_LIMIT")


def games(*where: str):
    with arrow.read_arrow(decompressed(shared(*where)), errors="skip") as reader:
        return pa.Table.from_batches(list(reader), schema=reader.schema)


needs_both = pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled list-page writer is not built here")


def answers(array):
    out = []
    for name in ("py", "cy"):
        try:
            out.append(BACKENDS[name].list_page(array))
        except Exception as exc:  # noqa: BLE001 - the errors are compared too
            out.append((type(exc).__name__, str(exc)))
    return out


@needs_both
@pytest.mark.parametrize("dump", [G2022, G2021], ids=["2022-evals", "2021-clocks"])
def test_both_kernels_write_the_same_pages_of_the_corpus(dump):
    table = games(*dump)
    for name in LISTS:
        column = table.column(name).combine_chunks()
        for at in (0, 333):
            py, cy = answers(column.slice(at, 700))
            assert py == cy, name


ITEMS = {"float": st.floats(width=32, allow_nan=False), "int16": st.integers(-32768, 32767),
         "int8": st.integers(-128, 127), "string": st.text(max_size=12) | st.sampled_from(["e4", "Nf3", "O-O"])}


@needs_both
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(list(ITEMS)), data=st.data())
def test_both_kernels_write_the_same_pages(kind, data):
    items = data.draw(st.one_of(ITEMS[kind], st.none()) if kind != "float" else
                      st.one_of(st.sampled_from([0.0, -0.0, 1.0, 2.5, 60.0]), ITEMS[kind], st.none()))
    lists = data.draw(st.lists(st.one_of(st.none(), st.lists(st.just(items) | st.one_of(ITEMS[kind], st.none()),
                                                             max_size=40)), max_size=60))
    array = pa.array(lists, pa.list_(TYPES[kind]))
    start = data.draw(st.integers(0, len(lists)))
    array = array.slice(start, data.draw(st.integers(0, len(lists) - start)))
    py, cy = answers(array)
    assert py == cy
    body, dictionary, entries, distinct = py
    assert entries == sum(max(1, len(v)) if v is not None else 1 for v in array.to_pylist())
    present = {struct.pack("<f", x) if kind == "float" else x          # -0.0 and 0.0: two values
               for v in array.to_pylist() if v for x in v if x is not None}
    assert distinct == len(present) and (dictionary is None) == (not present)


@needs_both
def test_both_kernels_refuse_what_they_cannot_write_alike():
    py, cy = answers(pa.array([[b"e4"]], pa.list_(pa.binary())))
    assert py == cy and py[0] == "TypeError" and "binary" in py[1]
    # offsets that run past the values: pyarrow builds no such array, so a stand-in holds real buffers
    items = pa.array([1.0, 2.0], pa.float32())

    class Broken:
        type, offset, values_ = pa.list_(pa.float32()), 0, items

        def __len__(self):
            return 1

        def buffers(self):
            return [None, pa.py_buffer(struct.pack("<2i", 0, 5))]

        @property
        def values(self):
            return self.values_

    py, cy = answers(Broken())
    assert py == cy and py[0] == "ValueError" and "offsets" in py[1]
