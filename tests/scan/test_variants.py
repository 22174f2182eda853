"""Which start a game declares (FEN, Variant): one rule for the hook, the compiled scanner's own
replay, the reader and PGN writing; variants the board does not play are named, not misread."""

from __future__ import annotations

import pytest

from fastpgn import openings
from fastpgn.board import declared_start, moves_hook, moves_to_pgn
from fastpgn.cli import main
from fastpgn.errors import BoardError
from fastpgn.reader import read_games
from helpers import all_lines, shared

OPENINGS = openings.load()
VARIANT_FILES = [("edge-cases-nonlichess", "fics_atomic_10games.pgn", "atomic"),
                 ("edge-cases-nonlichess", "fics_crazyhouse_83games.pgn", "crazyhouse"),
                 ("lichess-other", "antichess_programfox_minimal-headers.pgn", "Antichess")]


@pytest.mark.parametrize("variant,chess960", [
    (None, False), ("", False), ("Standard", False), ("From Position", False), ("normal", False),
    ("Chess960", True), ("chess 960", True), ("Fischer-Random", True), ("fischerandom", True),
    (b"Fischer Random Chess", True), ("Chess_960", True),
])
def test_the_start_a_variant_declares(variant, chess960):
    assert declared_start("a FEN", variant) == ("a FEN", chess960)


@pytest.mark.parametrize("variant", ["Atomic", "Crazyhouse", "King of the Hill", "Three-check", b"Horde"])
def test_variants_the_board_does_not_play_are_named(variant):
    name = variant.decode() if isinstance(variant, bytes) else variant
    with pytest.raises(BoardError, match=f"^unsupported variant: {name} "):
        declared_start(None, variant)


@pytest.mark.parametrize("folder,name,variant", VARIANT_FILES)
def test_validation_rejects_variant_games_naming_the_variant(scan, folder, name, variant):
    """Both kernels, and the compiled one's own replay without the GIL, give the same rejects."""
    data = shared("data", folder, name).read_bytes()
    table = scan.opening_table(OPENINGS)
    lines, read, rejects, _ = scan.lines_from_block(data, 0, len(data), openings=table, moves_hook=moves_hook())
    assert read == len(list(read_games(data))) and lines == b""
    assert {r[0] for r in rejects} == {f"unsupported variant: {variant} (fastpgn's board plays standard chess "
                                       "and Chess960)"}
    # Without validation they are converted as written (their moves are not replayed).
    lines, read, rejects, _ = scan.lines_from_block(data, 0, len(data), openings=table)
    assert lines.count(b"\n") == read and not rejects


def test_the_converter_keeps_variant_games_and_exits_0(tmp_path, capsys):
    path = shared("data", "edge-cases-nonlichess", "fics_crazyhouse_83games.pgn")
    assert main([str(path), "100", "-o", str(tmp_path / "v"), "--validate"]) == 0
    err = capsys.readouterr().err
    assert "0 games written, 83 rejected (of 83 read)" in err
    rejected = (tmp_path / "v" / f"_{path.name}.rejected.pgn").read_text()
    assert rejected.count("unsupported variant: crazyhouse") == 83
    assert main([str(path), "100", "-o", str(tmp_path / "p"), "-q"]) == 0
    assert len(all_lines(tmp_path / "p")) == 83


def test_readers_and_pgn_writing_use_the_same_rule():
    atomic = next(iter(read_games(shared("data", "edge-cases-nonlichess", "fics_atomic_10games.pgn"))))
    with pytest.raises(BoardError, match="unsupported variant: atomic"):
        atomic.uci()
    chess960 = next(iter(read_games(shared("data", "edge-cases-nonlichess",
                                           "chess960_rapid-wch-2009_fen-setup.pgn"))))
    assert chess960.headers["Variant"] == "chess 960" and chess960.board().chess960
    # "Fischer-Random" is Chess960 for moves_to_pgn and for the hook alike.
    fen = "r5kr/pppppppp/8/8/8/8/PPPPPPPP/R5KR w HAha - 0 1"
    assert moves_to_pgn("O-O", {"Variant": "Fischer-Random", "FEN": fen}).splitlines()[-1] == "1. O-O *"
    assert moves_hook(uci=True)(b"O-O", [(b"FEN", fen.encode()), (b"Variant", b"Fischer-Random")]) == b"g1h1"
