"""The Cython and pure-Python compact kernels give the same movetext, or None, for every line.

Inputs: the conformance files of seed 000, compact strings written from the
real games of ../shared/data/lichess-db/, and Hypothesis mutations of both
(cut lines, inserted digits and letters, CRLF, blanks, bytes that are not
ASCII). A line either kernel vouches for must also read the same with
scan_moves, since the converter trusts it without scan_moves.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import _backend
from fastpgn.errors import FormatError
from fastpgn.notations import lichess_text as lt
from fastpgn.reader import read_games
from helpers import COMPARES_BOTH_KERNELS, shared

BACKENDS = dict(_backend.available("notations._compact"))
pytestmark = [pytest.mark.skipif("cy" not in BACKENDS, reason="the compiled compact kernel is not built here"),
              COMPARES_BOTH_KERNELS]
CONF = ("conformance", "000-pgn-transform")


def both(block: bytes) -> list[str | None]:
    """The kernels' common answer for ``block``; fails where they differ."""
    py, cy = (BACKENDS[k].block_movetext(block) for k in ("py", "cy"))
    assert len(py) == block.count(b"\n") + 1
    if py != cy:
        lines = block.split(b"\n")
        diff = [(k, lines[k], a, b) for k, (a, b) in enumerate(zip(py, cy)) if a != b]
        pytest.fail(f"{len(diff)} lines differ, first: {diff[:3]}")
    return py


def vouched_lines_read_alike(block: bytes, movetexts: list[str | None]) -> int:
    """Check every line the kernels vouch for against scan_moves; return how many."""
    read = 0
    for raw, movetext in zip(block.split(b"\n"), movetexts):
        if movetext is not None:
            line = raw.decode("ascii").rstrip("\r")
            assert lt._movetext_plies(movetext) == lt.scan_moves(line, _careful=True), line
            read += 1
    return read


@functools.lru_cache(maxsize=1)
def real_compact() -> bytes:
    """The compact strings (details and moves lines) of every real game that has them."""
    texts = []
    for path in sorted(shared("data", "lichess-db").glob("*.zst")):
        for game in read_games(path):
            try:
                texts.append(lt.game_to_compact(game, me=game.headers.get("White", "")))
            except FormatError:
                continue
    return "\n\n".join(texts).encode()


@pytest.mark.parametrize("name", ["games.txt", "small.txt", "test.txt"])
def test_backends_agree_on_the_conformance_files(name):
    data = shared(*CONF, name).read_bytes()
    movetexts = both(data)
    vouched_lines_read_alike(data, movetexts)
    for line in data.split(b"\n"):  # each line alone: no neighbour to lean on
        both(line)


@pytest.mark.slow
def test_backends_agree_on_real_games():
    data = real_compact()
    movetexts = both(data)
    moves_lines = data.count(b"\n") - 2 * data.count(b"\n\n")  # lines that are neither details nor blank
    read = vouched_lines_read_alike(data, movetexts)
    assert moves_lines > 8000 and read > 0.99 * moves_lines  # the kernels read nearly all themselves
    assert both(data.replace(b"\n", b"\r\n")) == movetexts


@pytest.mark.parametrize("line", [
    b"e51e4e5",          # a ply before the first move number
    b"Nf31e4e52Nf3",
    b"1e4e5\r",          # a lone '\r' at the end of the block: no CRLF line break
    b"1e4e5\xc2\xb12Nf3",  # bytes that are not ASCII can look like marks
    b"1e4e5\x1f2Nf3",    # the byte the Python kernel splits lines on
    b"1Nf3d1Q2e4",       # 'd1Q' and move 2, or 'Nf3d1' and 'Q2e4'
    b"1e4e52",           # a number without a move
    b"1e4e53Nf3",        # a wrong move number
    b"0e4e5",
])
def test_backends_decline_odd_lines(line):
    assert both(line) == [None]
    if not line.endswith(b"\r"):  # mid-block, that is a CRLF line break
        assert both(b"1e4e5\n" + line + b"\n1d4")[1] is None


def test_backends_read_long_games_and_write_pgn_movetext():
    moves = ["Nf3", "Nf6", "Ng1", "Ng8"] * 600  # 2400 plies: 1200 rounds, more than 999
    line = lt._compact_moves(moves[:1998]).encode()  # exactly 999 rounds
    [movetext] = both(line)
    assert movetext.startswith("\n1. Nf3 Nf6\n2. Ng1 Ng8\n") and movetext.endswith("\n998. Ng1 Ng8\n999. Nf3 Nf6")
    assert both(lt._compact_moves(moves).encode()) == [None]  # scan_moves reads those
    assert both(b"1e4e52Nf3\r\n1O-O-O#Qxd8\n\n1exd8=Q+Kxd8\r\n") == [
        "\n1. e4 e5\n2. Nf3", "\n1. O-O-O# Qxd8", None, "\n1. exd8=Q+ Kxd8", None]


_GLUE = st.sampled_from(
    list("0123456789abcdefghxKQRBNO-=+#!? \t\r\n\x1f\x00") + ["Nb6d7", "d1Q2", "e8=Q", "O-O", "10", "\r\n",
                                                            "\u00b1", "\u0100", "\ufffd", "\u0fc1", "é"])


@functools.lru_cache(maxsize=1)
def _samples() -> list[str]:
    """Real moves lines when the corpus is here, else a few glued games."""
    try:
        lines = real_compact().decode().split("\n")
    except pytest.skip.Exception:
        lines = []
    lines = [line for line in lines if line[:1] == "1"][:3000] or [
        "1e4e52Nf3Nc63Bb5a64Ba4Nf65O-O", "1d4d52c4dxc43e4b54a4c65axb5cxb56Qf3Nc67Qxa8Bb78Qa5e69Bxc4bxc410Qxb5+",
        "1a4h52a5h43a6h34axb7hxg25bxa8=Qgxh1=Q+6Qb7Qxg1", "1e4d52Nb1c3Nb8c63Nf3d4"]
    return lines


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 1 << 30), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 3), _GLUE), max_size=4))
def test_backends_agree_on_mutated_games(picks, edits):
    """Real moves lines, cut, glued and damaged: the kernels agree, and what they read is right."""
    samples = _samples()
    text = "\n".join(samples[k % len(samples)] for k in picks)
    for at, cut, glue in edits:
        at %= len(text) + 1
        text = text[:at] + glue + text[at + cut:]
    block = text.encode("utf-8", "surrogatepass")
    movetexts = both(block)
    vouched_lines_read_alike(block.replace(b"\r\n", b"\n"), movetexts)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=60))
def test_backends_agree_on_any_bytes(block):
    both(block)
    both(b"1" + block)


@pytest.mark.parametrize("ply", [
    "e2", "e1=Q", "h7", "exd2", "e8", "e8Q", "e8=Q+", "exf8=N#", "exg5", "axb6", "hxg3", "Qh4e1", "Nb1c3",
    "R1d2", "Rdxd2", "Kxe2!?", "O-O", "O-O-O#", "O-O-", "Ke", "Kx", "e4+#", "b8=K", "d1Q",
])
def test_backends_apply_the_same_ply_rules(ply):
    """Each ply rule of scan_ply (a pawn's side, captures to a neighbouring file, promotions)."""
    lines = [f"1{ply}", f"1e4{ply}", f"1e4e52{ply}", f"1{ply}e5", f"1d4e52Nf3{ply}3Nc3"]
    for line in lines:
        [movetext] = both(line.encode())
        if movetext is not None:
            assert lt._movetext_plies(movetext) == lt.scan_moves(line, _careful=True)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="12345678abcdefghxKQRBNO-=+#!?", max_size=8),
       st.sampled_from(["1{}", "1e4{}", "1e4e52{}", "1{}e5", "1d4d52{}e53Nf3"]))
def test_backends_agree_on_generated_plies(ply, where):
    line = where.format(ply).encode()
    vouched_lines_read_alike(line, both(line))
