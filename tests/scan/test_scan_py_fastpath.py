"""The pure-Python scanner's fast path gives what its exact path (and the Cython twin) gives.

fastpgn.scan._scan_py reads games written the lichess way with whole-string bytes
operations and token caches (_fast_game) and scans anything else byte by byte
(_scan_game). These tests run the twin with and without its fast path on real
games mutated where the fast path decides (tag lines, comment contents, tokens
that look like SAN, move numbers, game boundaries) and demand equal lines,
records and errors; where the compiled kernel is built, it must agree too.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend, openings
from fastpgn.scan import _scan_py, fastpath as _fastpath_py, lines as _lines_py
from helpers import CASES, DATA, decompressed, shared, typed

OPENINGS = openings.load()
BACKENDS = dict(_backend.available("scan._scan"))
# The pure twin's own two paths: the test command's python suite runs them (against the compiled
# kernel too, built beside it); its cython suite would only repeat them.
pytestmark = pytest.mark.skipif(_backend.requested() == "cython",
                                reason="the pure twin's paths run in the FASTPGN_IMPLEMENTATION=python suite")


@contextlib.contextmanager
def exact_path_only():
    """Turn the fast path off: every game goes through _scan_game (the grammar's _each_game chooses for
    every sink, so one switch does it)."""
    fast = _fastpath_py._fast_game
    _fastpath_py._fast_game = lambda buf, pos, end, text: None
    try:
        yield
    finally:
        _fastpath_py._fast_game = fast


def scan_all(mod, data: bytes, start: int = 0, end: int | None = None, stop: bool = False,
             opening_map=OPENINGS, hook=None, games: bool = True):
    end = len(data) if end is None else end
    kwargs = {} if hook is None else {"moves_hook": hook}
    options = {"base_offset": 11, "first_game": 3, "at_stream_start": start == 0, "stop_on_error": stop}
    return (
        mod.lines_from_block(data, start, end, openings=opening_map, **options, **kwargs),
        typed(mod.games_from_block(data, start, end, **options)) if games else None,
    )


def assert_same(data: bytes, **kw):
    """Both paths of the pure twin (and the compiled kernel) read ``data`` alike; what they read."""
    fast = scan_all(_scan_py, data, **kw)
    with exact_path_only():
        exact = scan_all(_scan_py, data, **kw)
    assert fast == exact
    if "cy" in BACKENDS:
        assert scan_all(BACKENDS["cy"], data, **kw) == fast
    return fast


# ------------------------------------------------------------ whole files

def corpus_files():
    files = sorted(CASES.glob("*.pgn"))
    if DATA.exists():
        files += sorted(p for p in DATA.rglob("*") if p.suffix in (".pgn", ".zst", ".bz2"))
    return files


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_fast_and_exact_paths_agree_on_every_file(path):
    data = decompressed(path)
    lines, _ = assert_same(data)
    if lines.rejects:   # (a file without a rejected game reads the same whether a reject stops the read)
        assert_same(data, stop=True)
    assert_same(data, opening_map=None, games=False)    # (the games' sink takes no opening map)


def _lichess(name: str) -> bytes:
    return decompressed(shared("data", "lichess-db", name))


def test_fast_path_reads_every_lichess_game(monkeypatch):
    """The speed of the pure twin rests on this: lichess's own games never need the byte walk."""
    calls = []
    exact = _scan_py._scan_game
    # where every sink's games are read (_each_game looks the byte walk up there)
    monkeypatch.setattr(_fastpath_py, "_scan_game", lambda *a: calls.append(a[1]) or exact(*a))
    for name in ("lichess_db_standard_rated_2013-01.slice5000.pgn.zst",
                 "lichess_db_standard_rated_2021-10.head999.pgn.zst",
                 "lichess_db_standard_rated_2022-06.head2499.pgn.zst"):
        data = _lichess(name)
        for text in (False, True):
            calls.clear()
            if text:
                _, read, rejects, _ = _scan_py.games_from_block(data, 0, len(data))
            else:
                _, read, rejects, _ = _scan_py.lines_from_block(data, 0, len(data), openings=OPENINGS)
            assert rejects == [] and read > 900
            assert calls == [len(data)], name  # only the call that finds the block's end


def test_caches_that_start_again_change_nothing(monkeypatch):
    """The token caches are bounded (hostile input): emptied every few entries, answers stay the same."""
    data = _lichess("lichess_db_standard_rated_2022-06.head2499.pgn.zst")[:400_000]
    monkeypatch.setattr(_fastpath_py, "_CACHE_LIMIT", 3)
    for name in ("_SAN", "_NUMBER_SET"):
        monkeypatch.setattr(_fastpath_py, name, set())
    for name in ("_NUMBERS", "_EVALS", "_CLOCKS", "_TAG_LAYOUTS", "_TAG_LAYOUTS_TEXT"):
        monkeypatch.setattr(_fastpath_py, name, {})
    for name in ("_DAY_SECONDS", "_LINE_PLANS", "_ECO_FIELDS"):
        monkeypatch.setattr(_lines_py, name, {})
    assert_same(data)
    assert len(_fastpath_py._SAN) <= 4 and len(_fastpath_py._CLOCKS) <= 4


def test_moves_hook_sees_the_same_games_on_both_paths():
    data = _lichess("lichess_db_standard_rated_2022-06.head2499.pgn.zst")[:300_000]
    seen = {}

    def hook(moves: bytes, tags):
        seen.setdefault("fast" if "exact" not in seen else "exact", []).append((moves, list(tags)))
        if moves.startswith(b"d4"):
            raise ValueError("no queen's pawn here")
        return moves.replace(b" ", b",")

    fast = _scan_py.lines_from_block(data, 0, len(data), openings=OPENINGS, moves_hook=hook)
    seen["exact"] = []
    with exact_path_only():
        exact = _scan_py.lines_from_block(data, 0, len(data), openings=OPENINGS, moves_hook=hook)
    assert fast == exact and seen["fast"] == seen["exact"]
    assert fast[2] and all(r[0] == "no queen's pawn here" for r in fast[2])


# ------------------------------------------------------------ mutations where the fast path decides

def _games(name: str, count: int) -> list[bytes]:
    data = _lichess(name)
    parts = data.split(b"\n\n[")
    return [parts[0] + b"\n\n"] + [b"[" + g + b"\n\n" for g in parts[1:count]]


_POOL: list[bytes] = []


def real_game(i: int) -> bytes:
    if not _POOL:
        _POOL.extend(_games("lichess_db_standard_rated_2022-06.head2499.pgn.zst", 120))  # evals, clocks
        _POOL.extend(_games("lichess_db_standard_rated_2013-01.head348.pgn.zst", 60))    # no comments
        _POOL.extend(_games("lichess_db_standard_rated_2021-10.head999.pgn.zst", 60))
    return _POOL[i % len(_POOL)]


# Tokens that look like what the fast path expects, or nearly.
TOKENS = [
    b"e4", b"Nf3", b"exd5", b"O-O", b"O-O-O", b"0-0", b"0-0-0", b"O-O+", b"e8=Q+", b"e8Q", b"exd8=N#",
    b"Qh4e1", b"Nbd2", b"R1e2", b"N@f3", b"@e4", b"--", b"Z0", b"--!?", b"Z0+", b"e4!?", b"e4!!?", b"Kxe2??",
    b"e4++",
    b"1xe4", b"e4e5", b"i9", b"K", b"e", b"O-O-O-O", b"0-0-0-0", b"Pe4", b"e4:", b"e:d5", b"e4.",
    b"1.", b"1...", b"12.", b"0.", b"1234567890.", b"1..", b"1.e4", b"1...e5", b"12", b"1.-", b"3.5",
    b"1.2.", b"1.2...", b"..", b"1.e4.",
    b"1-0", b"0-1", b"1/2-1/2", b"*", b"**", b"1-0*", b"1/2", b"0-0-1",
    b"{", b"}", b"{}", b"(", b")", b"$1", b"$", b";", b"%", b"[", b"]", b"", b" ", b"\t", b"\r",
    b"[%eval", b"[%clk", b"[%evalx", b"[%csl", b"0.17]", b"#-3]", b"-0.5]", b"+1,5]", b"0.17", b"0.17]]",
    b"abc]", b"]", b"0:03:00]", b"10:00:00]", b"0:3:00]", b"0:03:0]", b"0:03:00.5]", b"0:03:00.]",
    b":03:00]", b"0:03:00:00]", b"1234567890123456:00:00]", b"0:03:00.5.5]", b"0:03:00",
    "\u2502".encode(), b"\x00", b"\xff", b"\xe2\x94",
]
CHARS = list(b" \t\r\n\"\\[]{}();$%.#+=-*/:!?0123456789abcdefghxKQRBNO@\x00\xff")


def _mutate_tokens(game: bytes, edits) -> bytes:
    head, sep, movetext = game.partition(b"\n\n")
    toks = movetext.rstrip(b"\n").split(b" ")
    for kind, where, pick in edits:
        i = where % (len(toks) + 1)
        token = TOKENS[pick % len(TOKENS)]
        if kind == "replace" and i < len(toks):
            toks[i] = token
        elif kind == "insert":
            toks.insert(i, token)
        elif kind == "delete" and i < len(toks):
            del toks[i]
        elif kind == "char" and i < len(toks) and toks[i]:
            tok = toks[i]
            at = pick % len(tok)
            toks[i] = tok[:at] + bytes([CHARS[pick % len(CHARS)]]) + tok[at + 1:]
        elif kind == "swap" and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
    return head + sep + b" ".join(toks) + b"\n\n"


def _mutate_tags(game: bytes, edits) -> bytes:
    head, sep, movetext = game.partition(b"\n\n")
    lines = head.split(b"\n")
    for kind, where, pick in edits:
        i = where % len(lines)
        line = lines[i]
        at = pick % (len(line) + 1)
        char = bytes([CHARS[pick % len(CHARS)]])
        if kind == "char" and line:
            lines[i] = line[:at] + char + line[at + 1:]
        elif kind == "insert":
            lines[i] = line[:at] + char + line[at:]
        elif kind == "delete" and line:
            lines[i] = line[:at] + line[at + 1:]
        elif kind == "duplicate":
            lines.insert(i, line)
        elif kind == "join" and i + 1 < len(lines):
            lines[i:i + 2] = [line + b" " * (pick % 2) + lines[i + 1]]
        elif kind == "escape":
            lines[i] = line.replace(b'"', b'\\"', 1 + pick % 2)
        elif kind == "pad":  # a value ending in a space: its closing quote follows a space too
            lines[i] = line.replace(b'"]', b' "]')
    return b"\n".join(lines) + sep + movetext


BOUNDARIES = [b"\n\n", b"\n", b"\n\n\n", b"\n \n", b"\n\t\n", b"\r\n\r\n", b"", b"\n\n\n\n", b" \n\n",
              b"\n\n ", b"\n\n%x\n\n", b"\n\n1-0\n\n", b"\n\n;c\n\n"]

EDIT = st.tuples(st.sampled_from(["replace", "insert", "delete", "char", "swap"]),
                 st.integers(0, 10_000), st.integers(0, 10_000))
TAG_EDIT = st.tuples(st.sampled_from(["char", "insert", "delete", "duplicate", "join", "escape", "pad"]),
                     st.integers(0, 10_000), st.integers(0, 10_000))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.lists(EDIT, min_size=1, max_size=3))
def test_movetext_mutations(first, edits):
    data = real_game(first) + _mutate_tokens(real_game(first + 1), edits) + real_game(first + 2)
    assert_same(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.lists(TAG_EDIT, min_size=1, max_size=3))
def test_tag_mutations(first, edits):
    data = real_game(first) + _mutate_tags(real_game(first + 1), edits) + real_game(first + 2)
    assert_same(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.lists(st.sampled_from(BOUNDARIES), min_size=2, max_size=4),
       st.booleans(), st.integers(0, 3))
def test_game_boundaries(first, joints, stop, trim):
    games = [real_game(first + k).rstrip(b"\n") for k in range(len(joints))]
    data = b"".join(g + j for g, j in zip(games, joints))
    data = data[:len(data) - trim]
    assert_same(data, stop=stop)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(0, 10**9), st.integers(0, 10**9))
def test_blocks_cut_anywhere(first, a, b):
    data = b"".join(real_game(first + k) for k in range(3))
    start, end = sorted((a % (len(data) + 1), b % (len(data) + 1)))
    assert_same(data, start=start, end=end)


@pytest.mark.parametrize("movetext", [
    b"1. e4 e5 2. Nf3 1-0",
    b"1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 1-0",
    b"1. e4 { [%eval 0.2] [%clk 0:03:00] } 1... e5 { [%eval 0.3] [%clk 0:03:00] } 2. Qh5 0-1",
    b"1. e4 { [%eval 0.2] } 1... e5 { [%eval #-1] } 2. Qh5 { [%eval 0.1] [%clk 0:01:00] } 0-1",
    b"1. e4 { [%clk 0:03:00] [%clk 0:02:00] [%eval 1] [%eval 2] } 1... e5 { } { [%eval 3] } *",
    b"{ [%eval 0.5] } 1. e4 e5 1/2-1/2",
    b"12... e5 13. Nf3 Nc6 *",
    b"0. e4 1-0",
    b"1. 1... e5 *",
    b"1. 1... 1-0",
    b"1. { [%eval 0.3] } 2. *",
    b"1. e4  e5 2. Nf3 1-0",
    b"1. e4 e5 1-0 2. Nf3 1-0",
    b"1. e4 e5 1-0 1-0",
    b"1. e4 e5",
    b"1-0",
    b"*",
    b"1. 1-0",
    b"e4 1-0",
    b" 1-0",
    b"1. e4 { [%clk 0:03:00] }",
    b"1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:3:00] } 1-0",
    b"1. e4 { [%eval 0.3]] } 1-0",
    b"1. e4 { [%eval abc] } 1-0",
    b"1. e4 { x } 1-0",
    b"1. e4 {  [%clk 0:03:00] } 1-0",
    b"1. e4 { [%clk 0:03:00]} 1-0",
    b"1. e4 { [%clk 0:03:00] } 1... 1-0 { [%clk 0:03:00] } 1-0",
    b"1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Nf3 { [%clk 0:03:00] } 2... Nc6 e5"
    b" { [%clk 0:03:00] } 1-0",
    b"1. { [%clk e4] } 0:03:00 1... e5 { [%clk 0:03:00] } 1-0",
    b"1. e4 e5 2. 1xe4 1-0",
    b"1.e4 e5 1-0",
    b"1. e4 { [%eval 0.1] [%clk 0:01:00] } e5 { [%clk 0:01:00] } 1-0",
    b"1. e4 { [%eval 0.1] [%clk 0:01:00] } 1... e5 1-0",
    b"1. e4 { [%clk 0:01:00] } 1... e5 2. Nf3 1-0",
    b"1. e4 { [%eval 0.1] } 1... e5 { [%eval 0.1] } 2. Nf3 { [%eval #1] [%clk 0:01:00] } 1-0",
    b"1.2. e4 e5 1-0",
    b"1.2... e5 1-0",
    b"1. e4 1.2. e5 1-0",
])
def test_movetext_shapes(movetext):
    tags = b'[Event "x"]\n[Site "https://lichess.org/abc"]\n[Result "1-0"]\n\n'
    assert_same(tags + movetext + b"\n\n" + tags + b"1. d4 d5 1-0\n")


@pytest.mark.parametrize("section", [
    b'[Event "x"]',
    b'[Event "x"] [Site "y"]',
    b'[Event  "x"]',
    b'[Event"x"]',
    b'[Event "x" ]',
    b'[ Event "x"]',
    b' [Event "x"]',
    b'[Event "x"]\n[Event "y"]',
    b'[Event "a \\" b"]',
    b'[Event "a\\\\b"]',
    b'[Event "a\\b"]',
    b'[Event "a\\"]',
    b'[Event "a\\"]\n[Site "b"]',
    b'[Event "a [b] c"]',
    b'[Event "a"b"]',
    b'[Event "]\n[Site "a"b"]',
    b'[Ev ent "x"]',
    b'[ "x"]',
    b'[Event "x"]x',
    b'[Event "b "]x\n[Site "d"]',
    b'[Event "b "] \n[Site "d"]',
    b'[Event "b "]\n[Site "d "]',
    b'[Event "]x\n[Site "d"]',
    b'[Event "a\nb"]',
    b'[Event "a\n[Site "b"]',
    b'[Event "x"]"]',
    b'[Event "x"]\n[Site "y"]"]',
    b'[Event "a]\n[Site "b"]',
    b'[Event "x"]\n[Site\t"y"]',
    b'[Event "x"]\n[Si\\te "y"]',
    b'[Event "x\ty"]',
    b'[Event "x\ry"]',
    b'[Event "x"]\n[White "a\rb"]',
    b'[[Event "x"]',
    b'[Event "x"]\n[]Site "y"]',
    b'[Event "x"]\n[Site "y"] 1. e4',
    b'[Event "x\xe2\x94\x82y"]\n[White "a\xe2\x94\x82b"]',
    b'[Event "\xff"]',
    b'[White "x"]\n[White "y"]\n[Result "0-1"]',
    b'[UTCDate "2020.01.02"]\n[Date "2019.01.01"]\n[Time "25:00:00"]',
])
def test_tag_sections(section):
    assert_same(section + b"\n\n1. e4 e5 1-0\n\n" + section + b"\n\n1. d4 *")
