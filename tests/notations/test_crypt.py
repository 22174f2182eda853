"""PGN Crypt: golden cases, the extensions, round trips on real games, command line.

Golden cases (PGN Crypt's own outputs) are read in place from the shared
conformance folder 002-pgn-crypt; real games from the shared lichess-db
files. Both skip when absent.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import chess.pgn
import pytest
from hypothesis import given, settings, strategies as st

from fastpgn.cli import crypt as crypt_cli
from fastpgn.errors import FormatError, InputDamageError
from fastpgn.notations import crypt
from fastpgn.reader import read_games
from helpers import ROOT, shared

CONF = ("conformance", "002-pgn-crypt")

# Where upstream raised IndexError, what fastpgn gives instead (docs/crypt.md).
DOCUMENTED = {
    "with_result_token": ("e4,e5.Nf3,Nc6.1-0", "1. e4 e5 2. Nf3 Nc6 1-0"),
    "index_only_tail": ("e4,e5", "1. e4 e5"),           # a move number with no move carries nothing
    "double_space": ("e4,e5.Nf3,Nc6", "1. e4 e5 2. Nf3 Nc6"),
    "trailing_space": ("e4,e5", "1. e4 e5"),
    "empty": ("", ""),                                  # no games in, no lines out
}


def run_main(argv, capsys):
    code = crypt_cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def chess_moves(pgn: str) -> list[list[str]]:
    """Each game's moves as python-chess reads and replays them (SAN as it writes them)."""
    stream, games = io.StringIO(pgn), []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        board, sans = game.board(), []
        for move in game.mainline_moves():
            sans.append(board.san(move))
            board.push(move)
        games.append(sans)
    return games


# ---------------------------------------------------------------- golden

def test_upstream_example_round_trips():
    game = shared(*CONF, "game.txt").read_text()
    crypted = shared(*CONF, "crypted_game.txt").read_text()
    assert crypt.encode(game) == crypted
    assert crypt.decode(crypted) == shared(*CONF, "decrypted_game.txt").read_text()


def test_upstream_example_file_encodes_from_the_command_line(tmp_path, capsys):
    """PGN Crypt's game file ends with a move (no result, no line end): the end of the file ends the game,
    where the PGN readers take such an end for a cut input."""
    out = tmp_path / "game.crypt"
    code, _, err = run_main(["encode", str(shared(*CONF, "game.txt")), "-o", str(out)], capsys)
    assert code == 0, err
    assert out.read_text().rstrip("\n") == shared(*CONF, "crypted_game.txt").read_text()
    with pytest.raises(InputDamageError, match="ends inside the movetext"):
        list(read_games(shared(*CONF, "game.txt")))


def _cases():
    path = shared(*CONF, "pgncrypt_cases.generated.json")
    return json.loads(path.read_text())


def test_every_case_has_an_expected_output():
    for case in _cases():
        assert ("crypted" in case) != (case["name"] in DOCUMENTED), case["name"]


@pytest.mark.parametrize("index", range(9))
def test_generated_cases(index):
    cases = _cases()
    case = cases[index]
    crypted, decrypted = ((case["crypted"], case["decrypted"]) if "crypted" in case
                          else DOCUMENTED[case["name"]])
    assert crypt.encode(case["game_txt"]) == crypted
    assert crypt.decode(crypted) == decrypted


# ---------------------------------------------------------------- the extensions

MANY = """[Event "A \\"quoted\\" event"]
[White "Kasparov, G."]
[Black "Deep Blue"]
[Result "1-0"]

1. e4 {a comment} e5 $1 2. Nf3 (2. Nc3 Nf6) Nc6!?
3. Bb5
1-0

[Event "Second"]
[SetUp "1"]
[FEN "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12"]
[Result "*"]

12... Nf6 13. Bc4 Bc5 14. O-O *

[Event "Third"]
[Result "0-1"]

0-1
"""


def test_many_games_one_line_each():
    assert crypt.encode(MANY).splitlines() == [
        "e4,e5.Nf3,Nc6!?.Bb5.1-0",        # comments, NAGs and variations are not kept
        "12:,Nf6.Bc4,Bc5.O-O",            # Black moves first, from move 12 (FEN)
        "0-1",                            # no moves, the result alone
    ]


def test_headers_are_kept_and_restored():
    encoded = crypt.encode(MANY, headers=True)
    assert encoded.splitlines()[0] == ('[Event "A \\"quoted\\" event"][White "Kasparov, G."][Black "Deep Blue"]'
                                       '[Result "1-0"]e4,e5.Nf3,Nc6!?.Bb5.1-0')
    decoded = crypt.decode(encoded)
    original = list(read_games(MANY.encode()))
    back = list(read_games(decoded.encode()))
    assert [g.headers for g in back] == [g.headers for g in original]
    assert [g.moves for g in back] == [g.moves for g in original]
    assert [g.result for g in back] == ["1-0", "*", "0-1"]
    assert "12... Nf6 13. Bc4 Bc5 14. O-O *" in decoded
    assert chess_moves(decoded) == [["e4", "e5", "Nf3", "Nc6", "Bb5"], ["Nf6", "Bc4", "Bc5", "O-O"], []]


def test_several_games_without_tags_stay_separate_games():
    decoded = crypt.decode("e4,e5.Nf3\nd4,d5.c4.1/2-1/2\n\n")
    assert decoded == ('[Result "*"]\n\n1. e4 e5 2. Nf3 *\n\n'
                       '[Result "1/2-1/2"]\n\n1. d4 d5 2. c4 1/2-1/2')
    assert [g.moves for g in read_games(decoded.encode())] == [["e4", "e5", "Nf3"], ["d4", "d5", "c4"]]
    assert chess_moves(decoded) == [["e4", "e5", "Nf3"], ["d4", "d5", "c4"]]


def test_line_breaks_anywhere():
    assert crypt.encode("1.\ne4\ne5\n2.\nNf3 Nc6\n3. Bb5\n") == "e4,e5.Nf3,Nc6.Bb5"
    assert crypt.encode("1. e4 e5\r\n2. Nf3\r\n") == "e4,e5.Nf3"


def test_black_first_without_a_fen_tag():
    assert crypt.encode("12... Nf6 13. Bc4 d5 *") == "12:,Nf6.Bc4,d5"
    assert crypt.encode("7. e4 e5 *") == "7:e4,e5"
    assert crypt.decode(crypt.encode("12... Nf6 13. Bc4 d5 *")) == "12... Nf6 13. Bc4 d5"


@pytest.mark.parametrize("line, reason, column", [
    ("e4.e5", "a round with White's move alone must be the last", 1),
    ("e4,e5,Nf3", "a round holds more than two moves", 1),
    ("e4,e5..Nf3", "an empty round", 7),
    ("e4,e5.,Nf3", "only the first round may leave out White's move", 7),
    ("e4,e5.Nf3,", "expected a move, found an empty move", 11),
    ("e4,e5.1-0.Nf3", "only the end of the line may hold the result", 7),
    ("e4,e5 Nf3", "expected a move, found 'e5 Nf3'", 4),
    ("0:e4", "the first move number must be at least 1", 1),
    ('[White "x]e4', "unterminated tag value", 1),
    ('[White x"]e4', 'expected a tag pair [Name "value"]', 1),
    ('[White "x"e4', "expected ']' after the tag value", 11),
])
def test_decode_errors_name_line_and_column(line, reason, column):
    with pytest.raises(FormatError) as info:
        list(crypt.decode_games(["e4,e5", line]))
    assert (info.value.reason, info.value.line, info.value.column) == (reason, 2, column)


def test_encode_refuses_what_would_not_decode():
    with pytest.raises(FormatError, match=r"ply 2 'e5,' cannot be written"):
        crypt.encode_game(["e4", "e5,"])
    with pytest.raises(FormatError, match="line break"):
        crypt.encode_game(["e4"], headers={"Event": "a\nb"})


_MOVE = st.text(alphabet="abcdefgh12345678KQRBNOx=+#!?-", min_size=1, max_size=7).filter(
    lambda m: m not in ("1-0", "0-1", "1/2-1/2", "*") and not (m.isdigit()))
_VALUE = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(moves=st.lists(_MOVE, max_size=40), result=st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"]),
       headers=st.dictionaries(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True), _VALUE, max_size=4),
       first_move=st.integers(1, 300), black_first=st.booleans())
def test_lines_round_trip(moves, result, headers, first_move, black_first):
    line = crypt.encode_game(moves, result=result, headers=headers, first_move=first_move,
                             black_first=black_first)
    assert "\n" not in line
    game = crypt.decode_line(line)
    assert game.moves == moves and game.headers == headers
    assert game.result == (None if result == "*" and (moves or headers) else result)
    if moves:
        assert (game.first_move, game.black_first) == (first_move, black_first)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='e4Nf3,.:[] "\\1-0/*', max_size=30))
def test_decode_raises_only_format_errors(text):
    try:
        game = crypt.decode_line(text, line=1)
    except FormatError as exc:
        assert exc.line == 1 and 1 <= exc.column <= len(text) + 1
    else:
        assert crypt.decode_line(crypt.encode_game(game.moves, result=game.result or "*", headers=game.headers,
                                                   first_move=game.first_move,
                                                   black_first=game.black_first)).moves == game.moves


@pytest.mark.parametrize("line", [
    "e4,e5.Nf3,Nc6.Bb5", "e4,e5.1-0", "e4.*", "O-O,O-O-O.Qxd8#,Kxd8.1/2-1/2", "e4,e5.Nf3,Nc6 ",
    '[White "A"][Result "0-1"]e4,e5', '[White "A"] e4.1-0', '[White "A \\"B\\""]d4',
])
def test_plain_lines_decode_without_decode_line(line):
    assert crypt._plain_pgn(line) == crypt.decode_line(line).to_pgn(separable=True)


@pytest.mark.parametrize("line", [
    "12:e4,e5", ",e5.Nf3", "1-0", "e4.e5", "e4,e5,Nf3", "e4,,e5", "e4,e5.", "e4 ,e5", "e4,e5.Nf3:",
    "0-0,e5", "e4,1-0", "e4,e5.*.1-0", '[White "A"]', '[White "A"]12:e4', '[White "A"e4', '[White "A"]e4.e5',
])
def test_other_lines_go_to_decode_line(line):
    assert crypt._plain_pgn(line) is None


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["e4", "Nf3", "O-O", "0-0", ",", ".", ":", "[", "]", " ", "\t", "1-0", "0-1",
                                 "1/2-1/2", "*", "/", "-0", "\r", '[White "A"]', '[Result "1-0"]', '"', "\\"]),
                max_size=12).map("".join))
def test_a_plain_line_decodes_as_decode_line_decodes_it(text):
    pgn = crypt._plain_pgn(text)
    if pgn is not None:
        assert pgn == crypt.decode_line(text).to_pgn(separable=True)


# ---------------------------------------------------------------- real games

@pytest.mark.slow
@pytest.mark.parametrize("headers", [False, True], ids=["moves", "headers"])
def test_decode_encode_keeps_every_real_game(headers):
    """decode(encode(x)) keeps the move list (and with --headers the tags) of every lichess-db game.

    The .zst files hold every distinct game (the .bz2 files repeat some of them).
    """
    folder = shared("data", "lichess-db")
    total_games = 0
    encoded_bytes = plain_bytes = 0
    for path in sorted(folder.glob("*.zst")):
        original = list(read_games(path))
        lines = list(crypt.encode_games(None, headers=headers, reader=original))
        assert len(lines) == len(original)
        back = list(read_games("\n\n".join(crypt.decode_games(lines)).encode()))
        assert [g.moves for g in back] == [g.moves for g in original]
        assert [g.result for g in back] == [g.result for g in original]
        if headers:
            assert [g.headers for g in back] == [g.headers for g in original]
        else:
            encoded_bytes += sum(len(line) + 1 for line in lines)
            plain_bytes += sum(len(crypt.CryptGame(g.moves, g.result).movetext()) + 1 for g in original)
        total_games += len(original)
    assert total_games > 8800
    if not headers:
        # The point of the format: about 0.69 of the plain movetext on lichess games.
        assert 0.6 < encoded_bytes / plain_bytes < 0.75


def test_decoded_real_games_replay_in_python_chess():
    path = shared("data", "lichess-db", "lichess_db_standard_rated_2023-02.head15.pgn.zst")
    original = list(read_games(path))
    decoded = crypt.decode(crypt.encode(_plain(path), headers=True))
    replayed = chess_moves(decoded)
    assert len(replayed) == len(original)
    for game, sans in zip(original, replayed):
        assert [m.rstrip("?!") for m in game.moves] == sans


def _plain(path) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(path.read_bytes())).read()


# ---------------------------------------------------------------- command line

def test_cli_encode_decode_files(tmp_path, capsys):
    pgn = tmp_path / "many.pgn"
    pgn.write_text(MANY)
    code, out, err = run_main(["encode", str(pgn), "-o", str(tmp_path / "many.crypt"), "--headers"], capsys)
    assert (code, out) == (0, "")
    assert err == "crypt encode: 3 games read, 3 written, 0 rejected\n"
    assert (tmp_path / "many.crypt").read_text() == crypt.encode(MANY, headers=True) + "\n"
    code, out, err = run_main(["decode", str(tmp_path / "many.crypt"), "-q"], capsys)
    assert (code, err) == (0, "")
    assert out == crypt.decode(crypt.encode(MANY, headers=True)) + "\n"


def test_cli_reports_bad_lines_and_goes_on(tmp_path, capsys):
    (tmp_path / "x.crypt").write_text("e4,e5\ne4.e5\n\nd4,d5.1-0\n")
    code, out, err = run_main(["decode", str(tmp_path / "x.crypt")], capsys)
    assert code == 0  # a skipped line is reported and counted; it does not fail the run
    assert out == '[Result "*"]\n\n1. e4 e5 *\n\n[Result "1-0"]\n\n1. d4 d5 1-0\n'
    assert err.splitlines() == [
        f"{tmp_path / 'x.crypt'}: a round with White's move alone must be the last (line 2, column 1)",
        "crypt decode: 3 games read, 2 written, 1 rejected"]
    for stop in (["--errors", "raise"], ["--strict"]):
        code, out, err = run_main(["decode", str(tmp_path / "x.crypt"), *stop], capsys)
        assert code == 1
        assert out == '[Result "*"]\n\n1. e4 e5 *\n'  # the game before the bad line
        assert err.splitlines()[1:] == ["crypt decode: 2 games read, 1 written, 1 rejected; "
                                        "stopped at the first bad game (--errors raise)"]


def test_cli_encode_reports_games_the_reader_rejects(tmp_path, capsys):
    (tmp_path / "bad.pgn").write_text('[Event "a"]\n\n1. e4 e5 1-0\n\n[Event "b"]\n\n1. e4 {open\n\n'
                                      '[Event "c"]\n\n1. d4 0-1\n')
    code, out, err = run_main(["encode", str(tmp_path / "bad.pgn")], capsys)
    assert code == 0
    assert out == "e4,e5.1-0\nd4.0-1\n"
    [message, summary] = err.splitlines()
    assert message.startswith(f"{tmp_path / 'bad.pgn'}: ") and "game 2" in message
    assert summary == "crypt encode: 3 games read, 2 written, 1 rejected"


def test_cli_usage_and_input_errors(tmp_path, capsys):
    """Each failure is exit 2 and one line on stderr that names the file; OUT is left alone."""
    g = tmp_path / "g.pgn"
    g.write_text("1. e4 *\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "blank.crypt").write_text("\n \n")
    (tmp_path / "zip.pgn").write_bytes(b"PK\x03\x04\x14\x00\x00\x00")
    (tmp_path / "latin1.crypt").write_bytes("e4,e5\n[White \"caf\u00e9\"]e4\n".encode("latin-1"))
    (tmp_path / "out.txt").write_text("kept\n")
    assert crypt_cli.main([]) == 2
    assert crypt_cli.main(["squash", "x"]) == 2
    assert crypt_cli.main(["encode", str(g), "--errors", "never"]) == 2
    capsys.readouterr()
    for argv, message in [
        (["encode", str(tmp_path / "missing.pgn")], f"{tmp_path / 'missing.pgn'}: no such file"),
        (["decode", str(tmp_path / "missing.crypt")], f"{tmp_path / 'missing.crypt'}: no such file"),
        (["encode", str(tmp_path)], f"{tmp_path} is a folder, not a PGN file"),
        (["decode", str(tmp_path)], f"{tmp_path} is a folder, not a file"),
        (["encode", str(tmp_path / "empty")], f"{tmp_path / 'empty'}: no games found (empty or not PGN)"),
        (["decode", str(tmp_path / "empty")], f"{tmp_path / 'empty'}: no games found (the input is empty)"),
        (["decode", str(tmp_path / "blank.crypt")], f"{tmp_path / 'blank.crypt'}: no games found"),
        (["encode", str(tmp_path / "zip.pgn")], f"{tmp_path / 'zip.pgn'} is not PGN: binary data"),
        (["decode", str(tmp_path / "latin1.crypt")],
         f"{tmp_path / 'latin1.crypt'}: not UTF-8 text (line 2, column 12)"),
        (["encode", str(g), "-o", str(g / "x")], f"cannot write {g / 'x'}: {g} is a file, not a folder"),
        (["encode", str(g), "-o", str(tmp_path)], f"cannot write {tmp_path}: Is a directory"),
        (["encode", str(g), "-o", str(g)], f"refusing to overwrite the input {g}"),
    ]:
        for out in ([], ["-o", str(tmp_path / "out.txt")]):
            if "-o" in argv and out:
                continue
            code, stdout, err = run_main([*argv, *out], capsys)
            assert code == 2, argv
            assert err.startswith(message) and err.count("\n") == 1, (argv, err)
            assert (tmp_path / "out.txt").read_text() == "kept\n"
    assert g.read_text() == "1. e4 *\n"
    assert crypt_cli.main(["--help"]) == 0
    assert "python -m fastpgn crypt" in capsys.readouterr().out
    for command in ("encode", "decode"):
        assert crypt_cli.main([command, "--help"]) == 0
        help_text = capsys.readouterr().out
        assert "exit status:" in help_text and "deprecated: the same as --errors raise" in help_text


def test_cli_makes_the_folder_of_its_output_and_counts_in_words(tmp_path, capsys):
    (tmp_path / "g.pgn").write_text("1. e4 e5 1-0\n")
    out = tmp_path / "new" / "deeper" / "g.crypt"
    code, _, err = run_main(["encode", str(tmp_path / "g.pgn"), "-o", str(out)], capsys)
    assert (code, err) == (0, "crypt encode: 1 game read, 1 written, 0 rejected\n")
    assert out.read_text() == "e4,e5.1-0\n"
    code, _, err = run_main(["decode", str(out), "-o", str(tmp_path / "back" / "g.pgn"), "-q"], capsys)
    assert (code, err) == (0, "")
    assert (tmp_path / "back" / "g.pgn").read_text() == "1. e4 e5 1-0\n"
    (tmp_path / "bad.crypt").write_text("e4.e5\n")
    code, out_text, err = run_main(["decode", str(tmp_path / "bad.crypt"), "-o", str(tmp_path / "none.pgn")], capsys)
    assert code == 0 and err.endswith("crypt decode: 1 game read, 0 written, 1 rejected\n")
    assert (tmp_path / "none.pgn").read_text() == ""  # the run finished: OUT holds its games, none


def test_cli_damaged_input(tmp_path, capsys):
    import gzip
    import random

    pgn = "".join(f'[Event "{random.random()}"]\n\n1. e4 e5 1-0\n\n' for _ in range(2000)).encode()
    data = gzip.compress(pgn)
    (tmp_path / "cut.pgn.gz").write_bytes(data[:len(data) // 2])
    code, out, err = run_main(["encode", str(tmp_path / "cut.pgn.gz")], capsys)
    assert code == 1 and 0 < out.count("\n") < 2000
    assert "truncated gz data" in err and "the games after the damage are lost" in err


def test_cli_names_the_line_of_bytes_that_are_not_utf8(tmp_path, capsys):
    (tmp_path / "x.crypt").write_bytes(b"e4,e5\nd4,\xffd5\n")
    code, out, err = run_main(["decode", str(tmp_path / "x.crypt")], capsys)
    assert code == 2
    assert err == (f"{tmp_path / 'x.crypt'}: not UTF-8 text (line 2, column 4); --encoding NAME reads text of another "
                   "encoding (cp1252...)\n")


@pytest.mark.parametrize("extra", [[], ["--strict"], ["--errors", "raise"]])
def test_cli_decode_gives_the_same_in_blocks_of_any_size(extra, tmp_path, capsys, monkeypatch):
    """Blocks cut anywhere (lines longer than a block too): the same PGN, messages and exit code."""
    (tmp_path / "x.crypt").write_bytes("\ufeffe4,e5.Nf3,Nc6.Bb5.1-0\r\n\n[White \"caf\u00e9\"]d4,d5.0-1\n"
                                       "e4.e5\n12:,Nf6.Bc4\ne4,e5.Nf3,Nc6.Bb5,a6.Ba4,Nf6.O-O,Be7.Re1,b5\n"
                                       "d4\xff\nc4\n".encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    outputs = []
    for block in (1 << 20, 7):
        monkeypatch.setattr(crypt_cli, "_BLOCK", block)
        out = tmp_path / f"out-{block}.pgn"
        code, _, err = run_main(["decode", str(tmp_path / "x.crypt"), "-o", str(out), *extra], capsys)
        outputs.append((code, err, out.read_text(encoding="utf-8")))
    assert outputs[0] == outputs[1]
    code, err, pgn = outputs[0]
    assert code == (1 if extra else 2) and "(line 4, column 1)" in err
    assert ("not UTF-8 text (line 7, column 3)" in err) == (not extra)
    # --errors raise stops at line 4, after the games of lines 1 and 3; else line 7 stops it
    # all, before the game of line 6 (one game of lookahead) is written.
    assert pgn.count("[Result ") == (1 if extra else 2) and '[White "caf\u00e9"]' in pgn
    assert ("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6" in pgn) is False


def test_cli_strict_encode_stops_at_the_first_game_the_reader_rejects(tmp_path, capsys):
    (tmp_path / "bad.pgn").write_text('[Event "a"]\n\n1. e4 {open\n\n[Event "c"]\n\n1. d4 0-1\n')
    code, out, err = run_main(["encode", str(tmp_path / "bad.pgn"), "--strict"], capsys)
    assert (code, out) == (1, "")
    assert "game 1" in err


def test_cli_stdin_to_stdout():
    code = "import sys; from fastpgn.cli.crypt import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "encode", "-", "-q"], input=b"1. e4 e5 2. Nf3 1-0\n",
                          capture_output=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"e4,e5.Nf3.1-0\n", b"")
    proc = subprocess.run([sys.executable, "-c", code, "decode", "-", "-q"], input=proc.stdout,
                          capture_output=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"1. e4 e5 2. Nf3 1-0\n", b"")
    proc = subprocess.run([sys.executable, "-c", code, "encode", "-"], input=b"\x00\x01\x02",
                          capture_output=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode().splitlines() == ["<stdin> is not PGN: binary data (PGN byte 0)"]


def test_cli_is_quiet_on_a_closed_pipe(tmp_path):
    source = tmp_path / "big.crypt"
    source.write_text("e4,e5.Nf3,Nc6.Bb5,a6.Ba4,Nf6.O-O,Be7.1-0\n" * 20000)  # far more than a pipe holds
    code = "import sys; from fastpgn.cli.crypt import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run(f'"{sys.executable}" -c "{code}" decode "{source}" -q | head -1', shell=True,
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout == '[Result "1-0"]\n' and proc.stderr == ""
