"""The scanner kernel's contract, held by a machine (python-zstandard's test_module_attributes).

Both backends expose the same public names and the same entry points, with
the same parameters (the block and its bounds positional, every option a
keyword with the same default), as ``fastpgn/scan/_kernel.pyi`` types them;
every entry point answers a ``ScanResult`` that always carries the filtered
count. The pure twin's choice between its fast path and the byte walk is
one function of the grammar (``scan/fastpath.py``'s ``_each_game``). (That
every reader runs one loop over its blocks is tests/test_reader.py's.)
"""

from __future__ import annotations

import ast
import contextlib
import inspect

import pytest

from fastpgn import _backend, filters, openings
from fastpgn.scan import _scan_py, fastpath as _fastpath_py
from fastpgn.scan.contract import ScanResult
from helpers import CASES, ROOT, kernel_params

BACKENDS = dict(_backend.available("scan._scan"))
STUB = ROOT / "fastpgn" / "scan" / "_kernel.pyi"
ENTRY_POINTS = ("lines_from_block", "games_from_block", "headers_from_block", "spans_from_block", "columns_from_block",
                "csv_from_block")
OPENINGS = openings.load()


def public_names(module) -> set[str]:
    return {name for name in dir(module) if not name.startswith("_")}


def stub() -> tuple[set[str], dict[str, list[tuple[str, str, object]]]]:
    """The names _kernel.pyi says a kernel has at run time (constants, functions, re-exported classes), and
    each function's parameters as ``(name, kind, default)`` (of its last overload: the general one)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names: set[str] = set()
    functions: dict[str, list[tuple[str, str, object]]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names if a.asname == a.name)   # re-exported: `X as X`
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
            a = node.args
            positional = a.posonlyargs + a.args
            defaults = [inspect.Parameter.empty] * (len(positional) - len(a.defaults)) + [
                ast.literal_eval(d) for d in a.defaults]
            params = [(p.arg, "POSITIONAL_OR_KEYWORD", d) for p, d in zip(positional, defaults)]
            params += [(p.arg, "KEYWORD_ONLY", inspect.Parameter.empty if d is None else ast.literal_eval(d))
                       for p, d in zip(a.kwonlyargs, a.kw_defaults)]
            functions[node.name] = params   # (a later overload replaces an earlier one)
    return names, functions


def parameters(function) -> list[tuple[str, str, object]]:
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("kernel", kernel_params("scan._scan"))
def test_each_backend_exposes_the_names_the_stub_types(kernel):
    names, _ = stub()
    assert public_names(kernel) == names


def test_both_backends_expose_the_same_names():
    if "cy" not in BACKENDS:
        pytest.skip("the compiled kernel is not built")
    assert public_names(BACKENDS["cy"]) == public_names(BACKENDS["py"])


@pytest.mark.parametrize("kernel", kernel_params("scan._scan"))
def test_each_function_takes_the_parameters_the_stub_gives(kernel):
    """Names, kinds and defaults: inspect.signature reads the compiled functions too (Cython's binding)."""
    _, functions = stub()
    for name, expected in functions.items():
        assert parameters(getattr(kernel, name)) == expected, name
    for name in ENTRY_POINTS:   # the block and its bounds by position, every option by keyword
        kinds = [kind for _, kind, _ in functions[name]]
        assert kinds == ["POSITIONAL_OR_KEYWORD"] * 3 + ["KEYWORD_ONLY"] * (len(kinds) - 3), name


def test_both_backends_take_the_same_parameters():
    if "cy" not in BACKENDS:
        pytest.skip("the compiled kernel is not built")
    for name in public_names(BACKENDS["py"]):
        function = getattr(BACKENDS["py"], name)
        if inspect.isfunction(function):
            assert parameters(getattr(BACKENDS["cy"], name)) == parameters(function), name


def _pgn() -> bytes:
    return ((CASES / "crlf.pgn").read_bytes() + b"\n\n"
            + b'[White "Ann"]\n[WhiteElo "2100"]\n\n1. e4 *\n\n[White "Bob"]\n[WhiteElo "1500"]\n\n1. d4 }\n\n'
            + b'[White "Cy"]\n[WhiteElo "1400"]\n\n1. c4 *\n')


@pytest.mark.parametrize("kernel", kernel_params("scan._scan"))
def test_every_entry_point_answers_a_scan_result_with_its_filtered_count(kernel):
    data = _pgn()
    where = kernel.where_plan(filters.Where(min_elo=1450, elo_of="white").spec())
    for name in ENTRY_POINTS:
        scan = getattr(kernel, name)
        plain = scan(data, 0, len(data))
        assert type(plain) is ScanResult and plain.filtered == 0, name
        assert plain.games_read == rows(plain.output) + len(plain.rejects), name
        kept = scan(data, 0, len(data), where=where)
        assert type(kept) is ScanResult and kept.filtered >= 1, name
        assert kept.games_read == plain.games_read == rows(kept.output) + len(kept.rejects) + kept.filtered, name
        with pytest.raises(TypeError):
            scan(data, 0, len(data), 0)     # an option given by position: refused


def rows(output) -> int:
    """The games an entry point's output holds: lines, records, or a column's rows."""
    if isinstance(output, bytes):
        return output.count(b"\n")
    if isinstance(output, dict):
        offsets = output["byte_offset"]
        return len(offsets) if isinstance(offsets, list) else offsets[0]
    return len(output)


def _answer(name: str, data: bytes, **options):
    """The pure kernel's entry point ``name`` on ``data``; spans_from_block's spans as the records they make."""
    result = getattr(_scan_py, name)(data, 0, len(data), **options)
    if name == "spans_from_block":
        return result._replace(output=_scan_py.records_from_spans(data, result.output))
    return result


@contextlib.contextmanager
def byte_walk_only():
    """Turn the pure twin's fast paths off where the grammar chooses them: every game through _scan_game."""
    saved = (_fastpath_py._fast_game, _fastpath_py._fast_where, _fastpath_py._fast_headers)
    _fastpath_py._fast_game = lambda buf, pos, end, text: None
    _fastpath_py._fast_where = lambda buf, pos, end, text, where: None
    _fastpath_py._fast_headers = lambda buf, pos, end, where: None
    try:
        yield
    finally:
        _fastpath_py._fast_game, _fastpath_py._fast_where, _fastpath_py._fast_headers = saved


def test_the_grammar_alone_chooses_the_pure_twins_path(monkeypatch):
    """One switch in scan/fastpath.py turns the fast path off for every sink, and then every game of each
    is read by the byte walk: no sink reads games another way."""
    data = (CASES / "habits-text-crlf.pgn").read_bytes().replace(b"\r\n", b"\n") * 3 + _pgn()
    where = _scan_py.where_plan(filters.Where(min_elo=1450, elo_of="white").spec())
    calls = []
    exact = _fastpath_py._scan_game
    kinds = [(name, plan) for name in ENTRY_POINTS for plan in (None, where)]
    fast = {kind: _answer(kind[0], data, where=kind[1]) for kind in kinds}
    monkeypatch.setattr(_fastpath_py, "_scan_game", lambda *a: calls.append(a[1]) or exact(*a))
    with byte_walk_only():
        for kind in kinds:
            calls.clear()
            walked = _answer(kind[0], data, where=kind[1])
            assert walked == fast[kind], kind
            assert len(calls) == walked.games_read + 1, kind    # (and the call that finds the end)
