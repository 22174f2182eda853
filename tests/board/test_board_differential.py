"""The two board kernels are one kernel: equal results and equal errors (class and message).

Hypothesis plays random legal games, mutates their SAN the way real PGN
varies (annotations, check marks, zeros for castling, dropped or stray
characters, shuffled or foreign tokens) and mutates FENs; both backends must
answer alike, and only with fastpgn's errors.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fastpgn import read_games
from fastpgn.errors import PGNError
from helpers import kernel_params

KERNELS = {p.id: p.values[0] for p in kernel_params("board._board")}
if "cy" not in KERNELS:
    pytest.skip("the compiled board kernel is not built: nothing to compare the pure twin with",
                allow_module_level=True)
PY, CY = KERNELS["py"], KERNELS["cy"]

FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "4k3/8/3p4/3Pp3/8/8/8/4K3 w - e6 0 1",
    "7k/P7/8/8/8/8/8/K7 w - - 0 1",
    "6k1/8/8/8/8/8/8/5RK1 w - - 98 80",
]
FENS_960 = [
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "1r1k2rr/pppppppp/8/8/8/8/PPPPPPPP/1R1K2RR w GBgb - 0 1",
    "4k3/8/8/8/8/8/8/rRK5 w B - 0 1",
]
SUFFIXES = ["", "", "", "!", "?", "!?", "?!", "!!", "??", "+", "#", "+!"]
STRAY = "abcdefgh12345678NBRQKOx=+#-0 \u00e9\t\x00"
FOREIGN = ["1.", "1-0", "*", "--", "Z0", "0000", "--!?", "e9", "Kx", "O-O-O-O", "=Q", "e8=K", "exd", "N", "",
           "Nbd7", "Qxf7#", "0-0", "a1=Q", "h8N", "e2e4", "g1f3", "e1g1"]


def answer(call, *args, **kwargs):
    """A call's result, or its error as (class name, message); any other exception fails the test."""
    try:
        return ("ok", call(*args, **kwargs))
    except PGNError as error:
        return ("error", type(error).__name__, str(error))


def summary(b):
    """Everything observable about a Board, comparable across backends."""
    outcome = b.outcome(claim_draw=True)
    return (b.fen(), b.fen(shredder=True), b.key(), b.ply, b.turn, b.castling_rights, b.ep_square,
            b.is_check(), b.is_checkmate(), b.is_stalemate(), b.is_insufficient_material(),
            b.is_repetition(), None if outcome is None else (outcome.termination, outcome.winner),
            [b.uci(m) for m in b.move_stack], [m.uci() for m in b.legal_moves()],
            [b.san(m) for m in b.legal_moves()])


def both(fn):
    return fn(PY), fn(CY)


@st.composite
def games(draw):
    """A random legal game, with a pass now and then, from one of the test positions: (fen, chess960, SAN list)."""
    chess960 = draw(st.booleans())
    fen = draw(st.sampled_from(FENS_960 if chess960 else FENS))
    # A seed and a length rather than one draw per move: games run long and still shrink.
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    b = PY.Board(fen, chess960)
    sans = []
    for _ in range(draw(st.integers(0, 160))):
        moves = b.legal_moves()
        if not moves:
            break
        move = PY.Move.null() if not b.is_check() and rng.random() < 0.05 else moves[rng.randrange(len(moves))]
        sans.append(b.san(move))
        b.push(move)
    return fen, chess960, sans


@st.composite
def mutated(draw, sans):
    """The SAN list with annotations and a few of the faults real movetext has."""
    out = [san + draw(st.sampled_from(SUFFIXES)) for san in sans]
    for _ in range(draw(st.integers(0, 3))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        san = out[i]
        kind = draw(st.integers(0, 5))
        if kind == 0:
            out[i] = san.replace("+", "").replace("#", "")
        elif kind == 1:
            out[i] = san.replace("O", "0")
        elif kind == 2 and san:
            j = draw(st.integers(0, len(san) - 1))
            out[i] = san[:j] + san[j + 1:]
        elif kind == 3:
            j = draw(st.integers(0, len(san)))
            out[i] = san[:j] + draw(st.sampled_from(STRAY)) + san[j:]
        elif kind == 4:
            out.insert(i, draw(st.sampled_from(FOREIGN)))
        elif i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(game=games(), data=st.data())
def test_san_lists_alike(game, data):
    fen, chess960, sans = game
    tokens = data.draw(mutated(sans)) if data.draw(st.booleans()) else sans
    text = data.draw(st.sampled_from([" ", "  ", "\n", " \t"])).join(tokens)
    for entry in ("san_to_uci", "validate_san", "replay_fens", "canonical_san"):
        py, cy = both(lambda k, entry=entry: answer(getattr(k, entry), text, fen=fen, chess960=chess960))
        assert py == cy, entry
    raw = text.encode("utf-8", "surrogatepass")
    if data.draw(st.booleans()):  # bytes that are not UTF-8, as a dump may hold
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xe9x"])) + raw[at:]
    for entry in ("san_to_uci", "validate_san"):
        py, cy = both(lambda k, entry=entry: answer(getattr(k, entry), raw, fen=fen, chess960=chess960))
        assert py == cy, entry
    py, cy = both(lambda k: answer(lambda: summary(k.replay(text, fen=fen, chess960=chess960))))
    assert py == cy


@pytest.mark.parametrize("text", ["e4\x00 e5", "e4 e5\x00", "\x00", "e4 \x00e5", "e4 e5 Nf3\x00\x00",
                                  "e4  e5 \t\n Nf3 ", "", " \x0b\x0c\r"])
def test_nul_and_whitespace_in_moves_alike(text):
    # A NUL inside the text is part of its token (the compiled twin also ends a text at the NUL after it).
    for moves in (text, text.encode()):
        for entry in ("san_to_uci", "validate_san"):
            py, cy = both(lambda k, entry=entry, moves=moves: answer(getattr(k, entry), moves))
            assert py == cy, (entry, moves)
            assert py[0] == ("error" if "\x00" in text else "ok")


@SETTINGS
@given(game=games())
def test_unmutated_games_replay_and_round_trip(game):
    fen, chess960, sans = game
    text = " ".join(sans)
    assert PY.canonical_san(text, fen, chess960) == CY.canonical_san(text, fen, chess960) == text
    final_py = PY.replay(text, fen, chess960)
    final_cy = CY.replay(text, fen, chess960)
    assert summary(final_py) == summary(final_cy)
    for _ in range(final_py.ply):
        assert final_py.pop().uci() == final_cy.pop().uci()
    assert final_py.fen() == final_cy.fen() == PY.Board(fen, chess960).fen()


# A game's FEN may grant a right no rook (or no king on its first rank) can use: python-chess plays the
# game with that right dropped, and so does every replay entry of both kernels; Board(fen) refuses it.
@pytest.mark.parametrize("fen, sans, after", [
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "Kd2", "4k3/8/8/8/8/8/3K4/8 b - - 1 1"),
    ("r3k3/8/8/8/8/8/8/4K3 b Qq - 0 1", "O-O-O", "2kr4/8/8/8/8/8/8/4K3 w - - 1 2"),
    ("4k3/8/8/8/8/8/3K4/R7 w Q - 0 1", "Kc1", "4k3/8/8/8/8/8/8/R1K5 b - - 1 1"),
])
def test_a_games_fen_with_a_right_it_cannot_use_drops_it_alike(fen, sans, after):
    import chess

    oracle = chess.Board(fen)
    oracle.push_san(sans)
    assert oracle.fen() == after
    for kernel in (PY, CY):
        assert kernel.replay(sans, fen).fen() == after
        assert kernel.replay_fens(sans, fen) == [after]
        assert kernel.canonical_san(sans, fen) == sans
    py, cy = both(lambda k: answer(k.Board, fen))
    assert py == cy and py[:2] == ("error", "InvalidFENError")
    game = next(read_games(f'[SetUp "1"]\n[FEN "{fen}"]\n\n1. {sans} *\n'.encode()))
    assert game.board().fen() == after          # (the backend FASTPGN_IMPLEMENTATION names)


def mutated_fen(fen, data, alphabet="pnbrqkPNBRQK12345678/ -wbKQkqHAhaeE36x0"):
    """``fen`` with up to three characters replaced or inserted (Hypothesis draws them)."""
    edits = data.draw(st.lists(st.tuples(st.integers(0, 200), st.sampled_from(alphabet)), max_size=3))
    for at, char in edits:
        at %= len(fen) + 1
        if data.draw(st.booleans()):
            fen = fen[:at] + char + fen[at + 1:]
        else:
            fen = fen[:at] + char + fen[at:]
    return fen


@SETTINGS
@given(fen=st.sampled_from(FENS + FENS_960), chess960=st.booleans(), data=st.data())
def test_fens_alike(fen, chess960, data):
    fen = mutated_fen(fen, data)
    py, cy = both(lambda k: answer(lambda: summary(k.Board(fen, chess960))))
    assert py == cy


# Whole fields swapped into valid FENs, so that each rule after the board (side, castling, en
# passant, clocks, check) is reached: most character edits stop at the board.
FIELD_POOLS = {
    1: ["w", "b", "W", "x", "wb"],
    2: ["-", "KQkq", "K", "Qk", "kq", "HAha", "HFhf", "GBgb", "B", "KK", "Ah", "X", "KQkqK", "-K", "\u00e9"],
    3: ["-", "e3", "e6", "d6", "d3", "a9", "e4", "--", "e", "h6", "c6", "\u00e93", "a1", "h8", "b3", "g6", "E6"],
    4: ["0", "1", "12", "98", "-1", "00", "1000000000", "1000000001", "99999999999", "x", "0x1", "\u0661"],
}
FIELD_POOLS[5] = FIELD_POOLS[4]


@SETTINGS
@given(fen=st.sampled_from(FENS + FENS_960), swaps=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 99)),
                                                            min_size=1, max_size=2),
       four_fields=st.booleans(), gap=st.sampled_from([" ", " ", "  ", "\t", " \n"]), chess960=st.booleans())
def test_fens_field_by_field_alike(fen, swaps, four_fields, gap, chess960):
    fields = fen.split()
    for index, choice in swaps:
        fields[index] = FIELD_POOLS[index][choice % len(FIELD_POOLS[index])]
    fen = gap.join(fields[:4] if four_fields else fields)
    py, cy = both(lambda k: answer(lambda: summary(k.Board(fen, chess960))))
    assert py == cy
    native_agrees(fen, chess960)


@pytest.mark.parametrize("fen", FENS + FENS_960)
def test_every_en_passant_square_alike(fen):
    """Any square is read (kept only where a capture is legal): both kernels, and the reader without the GIL."""
    fields = fen.split()
    for rank in "12345678":
        for file in "abcdefgh":
            for side in "wb":
                text = " ".join(fields[:1] + [side, fields[2], file + rank] + fields[4:])
                py, cy = both(lambda k, text=text: answer(lambda: summary(k.Board(text, True))))
                assert py == cy, text
                native_agrees(text, True)


def native_agrees(fen, chess960):
    """The scanner's FEN reader without the GIL sets up what Board(fen) does, or leaves the FEN to it."""
    native = CY._native_fen(fen.encode("utf-8", "surrogatepass"), chess960)
    reference = answer(lambda: CY.Board(fen, chess960))
    if reference[0] == "error":
        assert native is None, (fen, reference)
        return None
    if native is not None:
        b = reference[1]
        assert (native.fen(), native.fen(shredder=True), native.is_check(), native.key()) == \
            (b.fen(), b.fen(shredder=True), b.is_check(), b.key()), fen
    return native is not None


@SETTINGS
@given(fen=st.sampled_from(FENS + FENS_960), chess960=st.booleans(), data=st.data())
def test_fens_read_without_the_gil_alike(fen, chess960, data):
    native_agrees(mutated_fen(fen, data, "pnbrqkPNBRQK12345678/ -wbKQkqHAhaeE36x0\t\u00e9"), chess960)


def test_fens_of_the_corpus_read_without_the_gil():
    """Every FEN tag of the corpus (Chess960 and set-up games) is read natively, as Board reads it."""
    import re

    from helpers import shared

    fens = set()
    for path in shared("data").rglob("*.pgn"):
        fens.update(re.findall(r'^\[FEN "([^"\\]*)"\]', path.read_text("utf-8", "replace"), re.M))
    for path in shared("conformance", "003-chessjl").glob("*.pgn"):
        fens.update(re.findall(r'^\[FEN "([^"\\]*)"\]', path.read_text("utf-8", "replace"), re.M))
    assert len(fens) > 30
    read = [native_agrees(fen, chess960) for fen in sorted(fens) + FENS + FENS_960 for chess960 in (False, True)]
    # Only FENs that Board rejects are left to it (as None): all the others are read without the GIL.
    assert read.count(True) > len(read) // 2
    for fen in FENS + FENS_960:
        assert native_agrees(fen, True)
    # Other whitespace is Board's to read (it splits on any): the native reader leaves it, nothing differs.
    for odd in ("  ", "\t", " \n"):
        assert native_agrees(FENS[1].replace(" ", odd, 1), False) is False
        assert native_agrees(" " + FENS[1], False) is False


@SETTINGS
@given(game=games(), text=st.text(alphabet="abcdefgh12345678nbrqkx0-", max_size=6))
def test_uci_and_moves_alike(game, text):
    fen, chess960, sans = game
    boards = PY.replay(" ".join(sans), fen, chess960), CY.replay(" ".join(sans), fen, chess960)
    py, cy = (answer(lambda b=b: b.uci(b.push_uci(text))) for b in boards)
    assert py == cy
    py, cy = (answer(lambda b=b: b.parse_san(text).uci()) for b in boards)
    assert py == cy
    assert summary(boards[0]) == summary(boards[1])


@pytest.mark.parametrize("block, sans, legal", [
    # a ply is exactly its span, though the bytes after it would make a longer move
    (b"e4 e5 Nf3 Nc6 Bc4 Bc5 O-O-O", "e4 e5 Nf3 Nc6 Bc4 Bc5 O", False),
    (b"e4 e5 Nf3 Nc6 Bc4 Bc5 O-O " + b"." * 40, "e4 e5 Nf3 Nc6 Bc4 Bc5 O", False),
    (b"e4 e5 Nf3 Nc6 Bc4 Bc5 O-O ......", "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O", True),
    (b"d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8=Q", "d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8", False),
    (b"d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8=Q " + b"." * 40, "d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8", False),
    (b"d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8=Q+ " + b"." * 40, "d4 e5 dxe5 f6 exf6 Nc6 fxg7 Bd6 gxh8=Q", True),
    (b"e4 e5 Nf3!! " + b"." * 40, "e4 e5 Nf3!", True),
    (b"e4 e5 Nf3 Nc6 " + b"." * 40, "e4 e5 N", False),
])
def test_c_entry_reads_each_ply_to_its_end_only(block, sans, legal):
    # The last ply's span is cut short of what the block holds, at the block's
    # end (a padded copy) and far from it (read in place).
    tokens = sans.split()
    spans, at = [], 0
    for token in tokens:
        at = block.index(token[0].encode(), at)
        spans.append((at, at + len(token)))
        at += len(token)
    want = answer(CY.validate_san, sans)
    assert want[0] == ("ok" if legal else "error")
    assert answer(CY._validate_spans, block, spans) == want


@SETTINGS
@given(game=games(), data=st.data())
def test_c_entry_on_spans_is_validate_san_on_the_joined_moves(game, data):
    # validate_spans (the scanner's C-level entry) reads each ply where it lies
    # in a block, between whatever the block holds: the answer is validate_san's
    # on the moves joined by single spaces. A ply holds no whitespace (the
    # scanner ends a token at any).
    fen, chess960, sans = game
    tokens = data.draw(mutated(sans)) if data.draw(st.booleans()) else sans
    tokens = [t for text in tokens for t in text.encode("utf-8", "surrogatepass").split()]
    block, spans = bytearray(), []
    for i, token in enumerate(tokens):
        # what the scanner leaves between plies, and bytes a ply could be misread to go on with
        block += data.draw(st.sampled_from([b" ", b"\n", f" {i // 2 + 1}. ".encode(), b" { [%clk 0:01:00] } ", b"(",
                                            b"=Q", b"-O-O", b"x8", b"!?"]))
        spans.append((len(block), len(block) + len(token)))
        block += token
    block += data.draw(st.sampled_from([b"", b"x", b"{", b"=Q", b"-O", b"8"]))  # bytes after the last ply
    start_fen = data.draw(st.sampled_from([None, fen]))
    want = answer(CY.validate_san, b" ".join(tokens), fen=start_fen, chess960=chess960)
    assert answer(CY._validate_spans, bytes(block), spans, fen=start_fen, chess960=chess960) == want
