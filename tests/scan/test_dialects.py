"""Dialects other PGN readers accept, read as python-chess reads them, whatever the block size.

Tags and moves on one line, a BOM before a later game (files concatenated),
CR-only line ends (old Mac files) and evals with their search depth
(``[%eval 0.17,20]``, as python-chess writes them). Each runs on the backend
FASTPGN_IMPLEMENTATION names (the suite runs once per backend).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from fastpgn import read_games, read_lines
from fastpgn.errors import InputError
from fastpgn.io.blocks import lf_text
from fastpgn.io.sources import blocks
from helpers import CASES, blocks_as_cut, reference_cuts, shared

chess_pgn = pytest.importorskip("chess.pgn")

DIALECT_CASES = ["tags-and-moves-one-line", "bom-before-later-game", "cr-line-ends", "eval-with-depth"]
REAL_FILES = ["chessops_headers-and-moves-on-the-same-line.pgn", "python-chess_utf8-bom.pgn"]
BLOCK_SIZES = [1, 7, 64, 1000, None]   # None: the reader's default


def _tags_apart(text: str) -> str:
    """The same games with each tag pair on a line of its own and a blank line before the moves.

    python-chess reads a tag line only when it holds one pair and nothing
    else (it drops ``[Variant "Antichess"] 1.e3 ...`` whole); chessops,
    pgn-reader and fastpgn read such a line as tags then movetext. This is
    that reading, written the way python-chess needs it.
    """
    out = []
    for line in text.splitlines():
        head = re.match(r'(\s*\[[^\]"]*"(?:[^"\\]|\\.)*"\])+', line)
        if head is None:
            out.append(line)
            continue
        if out and out[-1].strip() and not out[-1].lstrip().startswith("["):
            out.append("")              # a game right after the last one's movetext
        out.extend(re.findall(r'\[[^\]"]*"(?:[^"\\]|\\.)*"\]', head.group(0)))
        rest = line[head.end():].strip()
        if rest:
            out += ["", rest]
    return "\n".join(out) + "\n"


def _python_chess(path: Path, tags_apart: bool = False) -> list:
    """python-chess's reading of a file opened as ``open(path)`` opens it (universal newlines): per game
    (headers, SAN, evals as (cp, mate), clocks)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if tags_apart:
        text = _tags_apart(text)
    # A BOM starts a file: python-chess strips it from the first line of a game, and drops the tags of a
    # game whose BOM follows the last one's moves with no blank line between (fastpgn keeps them).
    text = re.sub("(?<=[^\n]\n)\ufeff", "\n\ufeff", text)
    games = []
    stream = io.StringIO(text)
    while (game := chess_pgn.read_game(stream)) is not None:
        assert game.errors == [], game.errors
        sans, evals, clocks = [], [], []
        board = game.board()
        for node in game.mainline():
            sans.append(board.san(node.move))
            board.push(node.move)
            score = node.eval()
            evals.append(None if score is None else (score.white().score(), score.white().mate()))
            clocks.append(node.clock())
        games.append((dict(game.headers), sans, evals, clocks))
    return games


def _eval_key(raw: str | None):
    if raw is None:
        return None
    if raw.startswith("#"):
        return (None, int(raw[1:]))
    return (round(float(raw) * 100), None)


def _assert_read_as_python_chess(path: Path, tags_apart: bool = False) -> None:
    oracle = _python_chess(path, tags_apart)
    reader = read_games(path, errors="skip")
    ours = list(reader)
    assert reader.rejected == []
    assert len(ours) == len(oracle) > 0
    for number, (game, (headers, sans, evals, clocks)) in enumerate(zip(ours, oracle), 1):
        # python-chess fills in the seven-tag roster with "?" defaults; every tag in the file must agree.
        assert {k: headers[k] for k in game.headers} == game.headers, number
        assert set(headers) - set(game.headers) <= {"Event", "Site", "Date", "Round", "White", "Black", "Result"}
        assert [m.rstrip("!?") for m in game.moves] == sans, number
        assert [_eval_key(v) for v in game.evals] == evals, number
        assert game.clocks == clocks, number


@pytest.mark.parametrize("name", DIALECT_CASES)
def test_dialect_cases_read_as_python_chess_reads_them(name):
    _assert_read_as_python_chess(CASES / f"{name}.pgn", tags_apart=name == "tags-and-moves-one-line")


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_dialect_files_read_as_python_chess_reads_them(name):
    path = shared("data", "edge-cases-nonlichess", name)
    _assert_read_as_python_chess(path, tags_apart="same-line" in name)


def test_tags_and_moves_on_one_line_are_one_game_not_a_truncated_input():
    reader = read_games(b'[Event "?"] [Site "x"] 1. e4 e5 *')
    (game,) = list(reader)
    assert game.headers == {"Event": "?", "Site": "x"} and game.moves == ["e4", "e5"]
    # Several tags on one line, the moves on the next.
    (game,) = list(read_games(b'[Event "?"] [Site "x"]\n1. e4 e5 *\n'))
    assert game.headers == {"Event": "?", "Site": "x"} and game.moves == ["e4", "e5"]


def test_a_last_game_of_tags_alone_after_one_line_games_is_still_damage():
    """An input cut short inside its last game's tags is damage, also when the games before held their
    moves on their tag lines; the one-line game before it is kept whole."""
    data = b'[Event "a"] 1. e4 e5 *\n[Event "b"] 1. d4 d5 *\n[Event "c"] [Site "'
    reader = read_games(data, errors="skip")
    games = []
    with pytest.raises(InputError, match="the input ends inside the tags of its last game"):
        games.extend(reader)
    assert [g.headers["Event"] for g in games] == ["a", "b"]
    (bad,) = reader.rejected
    assert bad.number == 3 and bad.text.startswith(b'[Event "c"]')
    assert reader.games_read == 3


def test_a_bom_before_a_later_game_starts_that_game():
    data = (b'\xef\xbb\xbf[Event "a"]\n\n1. e4 *\n\n\xef\xbb\xbf[Event "b"]\n\n1. d4 *\n'
            b'\xef\xbb\xbf[Event "c"]\n\n1. c4 *\n')
    games = list(read_games(data))
    assert [(g.headers, g.moves) for g in games] == [({"Event": "a"}, ["e4"]), ({"Event": "b"}, ["d4"]),
                                                     ({"Event": "c"}, ["c4"])]


def test_cr_only_line_ends_are_line_ends():
    data = b'[Event "a"]\r[Site "x"]\r\r1. e4 e5 *\r\r[Event "b"]\r\r1. d4 { two\rlines } *\r'
    games = list(read_games(data))
    assert [(g.headers, g.moves) for g in games] == [({"Event": "a", "Site": "x"}, ["e4", "e5"]),
                                                     ({"Event": "b"}, ["d4"])]
    # CRLF is left as it is (nothing to rewrite), and so is a file without CR.
    assert lf_text(b"1. e4 *\r\n") == b"1. e4 *\r\n"
    assert lf_text(b"[Event \"a\"]\r\r\n1. e4 *\r") == b"[Event \"a\"]\n\r\n1. e4 *\n"


def test_evals_with_a_depth_read_as_their_value_in_every_output():
    data = b'[Event "a"]\n\n1. e4 { [%eval 0.17,20] } e5 { [%eval #3,20] } 2. Nf3 { [%eval -1.5,7] } *\n'
    (game,) = list(read_games(data))
    assert game.evals == ["0.17", "#3", "-1.5"]
    (line,) = list(read_lines(data))
    assert line.split("\u2502")[20] == "0.17 #3 -1.5"
    pytest.importorskip("pyarrow")
    from fastpgn.arrow import read_arrow

    (row,) = [r for batch in read_arrow(data) for r in batch.to_pylist()]
    assert row["eval_cp"] == [17, None, -150] and row["eval_mate"] == [None, 3, None]


def test_an_eval_that_is_only_a_depth_is_malformed():
    reader = read_games(b'[Event "a"]\n\n1. e4 { [%eval ,20] } *\n', errors="skip")
    assert list(reader) == []
    (bad,) = reader.rejected
    assert bad.reason == "malformed eval ',20'"


# ------------------------------------------------------------ no outcome depends on the block size

def _dialect_streams() -> list[tuple[str, bytes]]:
    streams = [(name, (CASES / f"{name}.pgn").read_bytes()) for name in DIALECT_CASES]
    streams += [(f"{name} x40", (CASES / f"{name}.pgn").read_bytes() * 40) for name in DIALECT_CASES]
    mixed = b"".join((CASES / f"{name}.pgn").read_bytes() + b"\n" for name in DIALECT_CASES)
    streams.append(("all, CR-only", mixed.replace(b"\r\n", b"\n").replace(b"\n", b"\r") * 5))
    streams.append(("all, BOM before each", b"".join(b"\xef\xbb\xbf" + s for _, s in streams[:4]) * 5))
    return streams


def _read(source, block_size):
    options = {} if block_size is None else {"block_size": block_size}
    reader = read_lines(source, errors="skip", **options)
    lines = list(reader)
    return lines, [(r.number, r.error_offset, r.reason) for r in reader.rejected], reader.games_read


@pytest.mark.parametrize("name, data", _dialect_streams(), ids=lambda v: v if isinstance(v, str) else "")
def test_dialect_streams_read_alike_whatever_the_block_size(name, data, tmp_path):
    path = tmp_path / "dialect.pgn"
    path.write_bytes(data)
    reference = _read(data, None)
    assert reference[0] and not reference[1], name
    for block_size in BLOCK_SIZES:
        assert _read(data, block_size) == reference, block_size            # bytes: cut in place
        assert _read(path, block_size) == reference, block_size            # a file: cut as it is read
        assert _read(io.BytesIO(data), block_size) == reference, block_size


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_dialect_files_read_alike_whatever_the_block_size(name):
    path = shared("data", "edge-cases-nonlichess", name)
    data = path.read_bytes()
    for variant in (data, data.replace(b"\n", b"\r"), b"\n\xef\xbb\xbf".join([data] * 3)):
        reference = _read(variant, None)
        assert reference[0]
        for block_size in BLOCK_SIZES:
            assert _read(io.BytesIO(variant), block_size) == reference, block_size


DIALECT_PARTS = st.sampled_from([b'[Event "x"]\n', b'[Event "x"]\r', b'[Site "y"]\r\n', b"\n", b"\r", b"\r\r",
                                 b"\xef\xbb\xbf", b"\xef", b"\xbb\xbf", b"1. e4 e5 *\r", b"\r[", b"[", b"\n[",
                                 b" \t\r\n", b"{ [ }", b"e4 ", b'[A "1"] 1. d4 *\n'])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(DIALECT_PARTS, max_size=80), sizes=st.lists(st.integers(1, 40), min_size=1, max_size=12),
       block_size=st.integers(1, 64))
def test_blocks_of_dialect_text_cut_where_the_rule_says_whatever_the_read_sizes(parts, sizes, block_size):
    """The cutter rewrites dialects as it reads (a CR, a piece of a BOM, may end a read), then cuts the
    rewritten text where find_cut says: the blocks are lf_text's, cut by the rule."""
    data = b"".join(parts)
    chunks, pos, k = [], 0, 0
    while pos < len(data):
        chunks.append(data[pos:pos + sizes[k % len(sizes)]])
        pos += sizes[k % len(sizes)]
        k += 1
    want = reference_cuts(lf_text(data), block_size)
    got = blocks_as_cut(list(blocks(iter(chunks), block_size=block_size)), want)
    assert got == want


# ------------------------------------------------------------ other tools' dialects
#
# Each case: what a tool writes, and the same game as the PGN standard writes it (None: python-chess
# reads the case itself the same way). fastpgn must read the first as python-chess reads the second.

OTHER_TOOLS = [
    ("en passant e.p.", "1. e4 d5 2. e5 f5 3. exf6 e.p. Nxf6 *", None),
    ("en passant ep", "1. e4 d5 2. e5 f5 3. exf6ep Nxf6 *", None),
    ("en passant e.p. joined", "1. e4 d5 2. e5 f5 3. exf6e.p. Nxf6 *", None),
    ("castling with en dashes", "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O\u2013O Nf6 1\u20130",
     "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 1-0"),
    ("castling with em dashes", "1. d4 d5 2. Nc3 Nc6 3. Bf4 Bf5 4. Qd2 Qd7 5. 0\u20140\u20140 0\u20141",
     "1. d4 d5 2. Nc3 Nc6 3. Bf4 Bf5 4. Qd2 Qd7 5. 0-0-0 0-1"),
    ("draw with halves", "1. e4 e5 \u00bd-\u00bd", "1. e4 e5 1/2-1/2"),
    ("draw with halves and an en dash", "1. e4 e5 \u00bd\u2013\u00bd", "1. e4 e5 1/2-1/2"),
    ("glyphs apart", "1. e4 +- e5 =+ 2. Qh5 \u00b1 Nc6 3. Bc4 Nf6 -/+ 4. Qxf7# \u221e 1-0",
     "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0"),
    ("a forfeit won by White (ChessBase)", '[Event "x"]\n\n +--', '[Event "x"]\n\n 1-0'),
    ("a forfeit won by Black (ChessBase)", "1. e4 --+", "1. e4 0-1"),
    ("castling with non-breaking hyphens (scalachess's weird dashes)",
     "1. Nf3 d5 2. d4 Nf6 3. g3 g6 4. Bg2 c6 5. O\u2011O Bg7 6. c3 O\u2011O 0-1",
     "1. Nf3 d5 2. d4 Nf6 3. g3 g6 4. Bg2 c6 5. O-O Bg7 6. c3 O-O 0-1"),
    ("castling with minus signs", "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O\u2212O *",
     "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *"),
    ("a promotion in lower case", "1. e4 d5 2. exd5 c6 3. dxc6 e5 4. cxb7 Ke7 5. bxa8=q *", None),
    ("e.p. then the check", "1. e4 d5 2. e5 f5 3. exf6e.p.+ *", None),
    ("two dots for the absent move", "1. e4 e6 2. d4 d5 3. e5 2. .. c5 *", None),
    ("glyphs on the move", "1. e4 e5 2. Nf3+= Nc6 3. Bb5+- a6 *", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *"),
    ("Crafty layout", "1.   e4      ...\n1.   ...     e5\n2.   Nf3     Nc6\n*", None),
    ("forum wrapper lines", "[pgn]\n[Event \"a\"]\n\n1. d4 d5 *\n[/pgn]", "[Event \"a\"]\n\n1. d4 d5 *"),
    ("forum wrapper on the lines", "[PGN][Event \"a\"]\n\n1. d4 d5 *[/PGN]", "[Event \"a\"]\n\n1. d4 d5 *"),
    ("forum wrapper around one line (scalachess)", "[pgn] 1. e4 e6 2. d4 d5 (2... c5) 3. Nc3 [/pgn]",
     "1. e4 e6 2. d4 d5 (2... c5) 3. Nc3"),
    ("quotes not escaped", "[Event \"Tournament \"Championship\" Finals\"]\n\n1. c4 *", None),
    ("a backslash before the closing quote", "[Event \"Tournament \\\"]\n\n1. c4 *", None),
    ("no closing quote", "[Event \"Open]\n[Site \"x\"]\n\n1. c4 *", "[Event \"Open\"]\n[Site \"x\"]\n\n1. c4 *"),
    ("an unfinished tag", "[Event \"Open\n[Site \"x\"]\n\n1. c4 *", "[Event \"Open\"]\n[Site \"x\"]\n\n1. c4 *"),
    ("no closing bracket", "[Event \"Open\"\n[Site \"x\"]\n\n1. c4 *", "[Event \"Open\"]\n[Site \"x\"]\n\n1. c4 *"),
    ("a castling right without a rook",
     "[FEN \"4k3/8/8/8/8/8/8/4K3 w KQ - 0 1\"]\n[SetUp \"1\"]\n\n1. Kd2 Kd7 *", None),
    ("castling rights and a king off its rank",
     "[FEN \"r3k2r/8/8/8/8/8/4K3/R6R w KQkq - 0 1\"]\n[SetUp \"1\"]\n\n1. Kd2 O-O-O *", None),
]


def _oracle(text: str) -> list:
    games = []
    stream = io.StringIO(text)
    while (game := chess_pgn.read_game(stream)) is not None:
        assert game.errors == [], game.errors
        # (the seven-tag roster's defaults python-chess fills in are no tags of the file)
        games.append(({k: v for k, v in game.headers.items() if k in ("Event", "Site", "FEN") and v != "?"},
                      [m.uci() for m in game.mainline_moves()]))
    return games


def _result_token(text: str) -> str:
    for token in ("1-0", "0-1", "1/2-1/2", "*"):
        if text.rstrip().endswith(token):
            return token
    return "*"      # (no result written: unknown)


@pytest.mark.parametrize("name, dialect, plain", OTHER_TOOLS, ids=[c[0] for c in OTHER_TOOLS])
def test_other_tools_dialects_read_as_python_chess_reads_them(name, dialect, plain):
    prefix = "" if dialect.startswith("[") else '[Event "x"]\n\n'
    data = prefix + dialect + "\n"
    standard = data if plain is None else prefix + plain + "\n"
    oracle = _oracle(standard)
    reader = read_games(data.encode(), errors="skip")
    ours = list(reader)
    assert reader.rejected == [] and len(ours) == len(oracle) == 1
    (game,), ((headers, uci),) = ours, oracle
    assert {k: v for k, v in game.headers.items() if k in ("Event", "Site", "FEN")} == headers
    assert game.uci() == uci
    assert game.result == _result_token(standard)
    # the same whatever the block size, in every output
    lines = _read(data.encode(), None)
    assert lines[0] and not lines[1]
    for block_size in BLOCK_SIZES:
        assert _read(io.BytesIO(data.encode()), block_size) == lines


def test_other_tools_dialects_in_one_file_replay_under_validate_and_uci():
    """The case file: every game kept by --validate's replay, its UCI what python-chess plays."""
    from fastpgn import scan
    from fastpgn.board import moves_hook

    data = (CASES / "other-tools-dialects.pgn").read_bytes()
    lines, read, rejects, _ = scan.kernel.lines_from_block(data, 0, len(data), moves_hook=moves_hook(uci=True))
    assert rejects == [] and read == 13
    ucis = [line.split("\u2502")[19] for line in lines.decode().splitlines()]
    assert ucis[2].split()[6] == "e1g1" and ucis[3].split()[8] == "e1c1"    # O–O, 0—0—0
    assert ucis[11] == "e1d2 e8d7"                                            # KQ with no rook: dropped
    assert ucis[12] == "e7e5 g1f3 b8c6"                                       # 1. ... e5: Black first
    games = list(read_games(data))
    assert [g.first_ply for g in games][12] == 1
    assert [g.result for g in games][2:5] == ["1-0", "0-1", "1/2-1/2"]


@pytest.mark.parametrize("text, reason", [
    (b'[Event broken]\n\n1. e4 *\n', "malformed tag"),
    (b'[Event "a" x]\n\n1. e4 *\n', "malformed tag"),
    # no closing quote, and text a tag value does not hold: a damaged input's run-together text, not a tag
    (b'[Event "Ra 0:02a32] } 14. Bg3 { [%clk 0:02:56] } 1-0\n\n1. e4 *\n', "unterminated tag value"),
    (b'[Event "a"]\n\n1. e4 +-x *\n', "invalid move token '+-x'"),
    (b'[Event "a"]\n\n1. e4 e5 1\xe2\x80\x932 *\n', "invalid move token '1\u20132'"),
    (b'[Event "a"]\n\n1. e4 [pgn x] *\n', "invalid move token '[pgn'"),
])
def test_what_no_reader_makes_sense_of_is_still_rejected_with_its_reason(text, reason):
    reader = read_games(text, errors="skip")
    assert list(reader) == []
    (bad,) = reader.rejected
    assert bad.reason == reason


# ------------------------------------------------------------ the two kernels on mixtures of dialects

DIALECT_TOKENS = st.sampled_from([
    b"e.p.", b"ep", b"exf6e.p.", b"exf6ep", b"exf6e.p.+", b"O\xe2\x80\x93O", b"0\xe2\x80\x940\xe2\x80\x940",
    b"O\xe2\x80\x91O", b"1\xe2\x80\x930", b"0\xe2\x80\x941", b"\xc2\xbd-\xc2\xbd", b"\xc2\xbd\xe2\x80\x93\xc2\xbd",
    b"1/2\xe2\x80\x931/2", b"+--", b"--+", b"+-", b"-+", b"+=", b"=", b"\xc2\xb1", b"\xe2\x88\x9e", b"Nf3+=",
    b"Bb5+-", b"...", b"..", b"1.", b"1...", b"[pgn]", b"[/pgn]", b"[PGN]", b"*[/pgn]", b"e4[/pgn]", b"bxa8=q",
    b'[Event "a "b" c"]', b'[Event "x\\"]', b'[Event "open]', b'[Event "open', b'[Event "x"', b"\n", b"\n\n",
    b" ", b"{ c }", b"(1... c5)", b"$1", b"1-0", b"*", b"e4", b"d5", b"\xe2", b"\xc2", b"-", b"[", b"]"])


def _all_outputs(mod, data: bytes):
    return (mod.lines_from_block(data, 0, len(data)), mod.games_from_block(data, 0, len(data)),
            mod.headers_from_block(data, 0, len(data)))


@settings(max_examples=int(os.environ.get("DIALECT_EXAMPLES", "300")), deadline=None)
@given(parts=st.lists(DIALECT_TOKENS, max_size=40), head=st.booleans())
@example(parts=[b"--+", b"1-0"], head=True)     # a forfeit result the pure fast path once took for a move
def test_both_kernels_read_mixed_dialects_alike(parts, head):
    from fastpgn import _backend

    kernels = dict(_backend.available("scan._scan"))
    if "cy" not in kernels:
        pytest.skip("the compiled scanner is not built here")
    data = (b'[Event "x"]\n\n' if head else b"") + b" ".join(parts)
    assert _all_outputs(kernels["py"], data) == _all_outputs(kernels["cy"], data)
