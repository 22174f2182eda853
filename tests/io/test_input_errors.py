"""An input's own errors are never swallowed, a stray byte rejects a game and never the input, and bytes
that are not UTF-8 are never silent: through the Python readers and the commands, at any block size.

Run once per backend (the test command runs the suite under cython, then python); the kernel tests
compare both kernels directly.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import io
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fastpgn.arrow import read_arrow
from fastpgn.cli import main
from fastpgn.errors import InputDamageError, InputError, NotUTF8Warning, PGNSyntaxError
from fastpgn.io.sources import check_pgn
from fastpgn.reader import read_games, read_headers, read_lines
from helpers import all_lines, chunk_files, decompressed, kernel_params, shared

DUMP = ("data", "lichess-db", "lichess_db_standard_rated_2013-01.head348.pgn.zst")
BLOCK_SIZES = (1, 7, 64, 1000, 1 << 20)


@functools.cache
def _dump() -> bytes:
    return decompressed(shared(*DUMP))


@pytest.fixture(scope="module")
def dump() -> bytes:
    """348 real lichess games, decompressed (255 kB)."""
    return _dump()


def _game_starts(data: bytes) -> list[int]:
    return [0] + [i + 2 for i in range(len(data)) if data.startswith(b"\n\n[Event ", i)]


def _lines_of(data: bytes) -> list[str]:
    return data.decode("utf-8", "surrogateescape").splitlines()


# -- an error of the source: the games before it, then one InputError at its offset ----------------------

@pytest.mark.parametrize("games", [100, 348])
@pytest.mark.parametrize("read", [read_games, read_lines, read_headers])
def test_an_iterable_that_raises_yields_the_games_before_then_one_error(dump, games, read):
    """A generator of lines that fails after whole games: those games, then an InputError at its byte offset."""
    starts = _game_starts(dump)
    text = dump[:starts[games]] if games < len(starts) else dump

    def lines():
        yield from _lines_of(text)
        raise OSError("the network went away")

    reader = read(lines(), errors="skip")
    got = []
    with pytest.raises(InputError) as info:
        for item in reader:
            got.append(item)
    assert len(got) == games and reader.games_read == games and not reader.rejected
    assert str(info.value) == f"cannot read <lines>: the network went away (PGN byte {len(text)})"
    assert isinstance(info.value, InputDamageError) and info.value.offset == len(text) > 0


def test_ten_thousand_games_then_an_error_are_not_read_as_nothing():
    """More than the first MiB that used to be peeked at: still every game, then the error."""
    game = ['[Event "x"]', "", "1. e4 e5 2. Nf3 *", ""]

    def lines():
        for _ in range(10_000):
            yield from game
        raise OSError("disk read error")

    reader = read_games(lines())
    count = 0
    with pytest.raises(InputError, match=r"^cannot read <lines>: disk read error \(PGN byte 320000\)$"):
        for _ in reader:
            count += 1
    assert count == 10_000


def test_a_file_object_whose_read_fails_midway(dump):
    """A binary file object that raises OSError after 100 kB: the whole games before it, then the error."""
    class Failing(io.RawIOBase):
        def __init__(self):
            self.data = io.BytesIO(dump[:100_000])

        def readable(self):
            return True

        def readinto(self, view):
            n = self.data.readinto(view)
            if not n:
                raise OSError(5, "Input/output error")
            return n

    games = []
    with pytest.raises(InputError, match=r"^cannot read .*: Input/output error \(PGN byte 100000\)$"):
        for game in read_games(io.BufferedReader(Failing(), 4096), errors="skip"):
            games.append(game)
    whole = sum(1 for s in _game_starts(dump) if 0 < s <= 100_000)
    assert len(games) == whole


def test_an_iterable_that_fails_at_once_is_an_error_not_an_empty_input():
    def lines():
        raise OSError("no route to host")
        yield  # pragma: no cover

    with pytest.raises(InputError, match=r"cannot read <lines>: no route to host \(PGN byte 0\)"):
        list(read_games(lines()))


def test_read_arrow_yields_the_games_before_an_error_of_the_source(dump):
    pytest.importorskip("pyarrow")
    starts = _game_starts(dump)

    def lines():
        yield from _lines_of(dump[:starts[100]])
        raise OSError("gone")

    reader = read_arrow(lines(), batch_size=64)
    rows = 0
    with pytest.raises(InputError, match="cannot read <lines>: gone"):
        for batch in reader:
            rows += batch.num_rows
    assert rows == 100


@pytest.mark.parametrize("where", [5_000, 2_000_000])
def test_a_text_file_with_a_byte_that_is_not_utf8_reads_as_its_path_does(tmp_path, dump, where):
    """``open(path)`` (strict UTF-8) used to read as empty when the byte was in the first MiB, and to end
    in a bare UnicodeDecodeError later; now it reads as the path does, the byte counted."""
    data = dump * (1 + where // len(dump))
    assert len(data) > where
    at = data.index(b'[White "', where) + 8        # inside a player's name
    data = data[:at] + b"\xe9" + data[at:]
    path = tmp_path / "games.pgn"
    path.write_bytes(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        by_path = read_games(path)
        expected = [(g.headers, g.moves) for g in by_path]
        with open(path, encoding="utf-8") as f:
            by_handle = read_games(f)
            got = [(g.headers, g.moves) for g in by_handle]
            assert f.errors == "strict"        # given back as it was
    assert got == expected and len(got) == data.count(b"[Event ")
    for reader in (by_path, by_handle):
        assert reader.games_not_utf8 == 1 and reader.first_not_utf8 == at
    messages = [str(w.message) for w in caught if issubclass(w.category, NotUTF8Warning)]
    assert len(messages) == 2 and f"(first at PGN byte {at})" in messages[1] and "\n" not in messages[1]


def test_encoding_is_refused_for_text_that_is_decoded_already():
    with pytest.raises(ValueError, match="open a file in binary mode"):
        list(read_games(io.StringIO("1. e4 *\n"), encoding="cp1252"))
    with pytest.raises(ValueError, match="unknown encoding 'klingon'"):
        read_games(b"1. e4 *", encoding="klingon")


# -- damage: one exit rule (1), one message, named once ---------------------------------------------------

def _truncated(tmp_path: Path, dump: bytes) -> dict[str, Path]:
    import zstandard

    blobs = {"zst": zstandard.ZstdCompressor().compress(dump), "bz2": bz2.compress(dump),
             "gz": gzip.compress(dump)}
    out = {}
    for kind, blob in blobs.items():
        for label, size in (("nothing", 20), ("half", len(blob) // 2)):
            path = tmp_path / f"{label}.pgn.{kind}"
            path.write_bytes(blob[:size])
            out[f"{label}.{kind}"] = path
    return out


def test_truncated_input_exits_1_whatever_decoded_and_says_so_once(tmp_path, dump, capsys):
    for name, path in _truncated(tmp_path, dump).items():
        kind = name.split(".")[1]
        results = []
        for jobs in ("1", "2"):
            out = tmp_path / f"{name}-j{jobs}"
            code = main([str(path), "100", "-o", str(out), "-j", jobs, "-q"])
            err = capsys.readouterr().err
            assert code == 1, (name, err)
            assert err.count("\n") == 1 and f"truncated {kind} data in {path} (PGN byte " in err, err
            said = err.replace(str(path), "INPUT")
            assert said.count("truncated") == 1 and "ends" not in said, err
            results.append(([f.read_bytes() for f in chunk_files(out)], sorted(p.name for p in out.iterdir())))
        assert results[0] == results[1], name
        reader = read_lines(path, errors="skip")
        lines = []
        with pytest.raises(InputDamageError, match=f"^truncated {kind} data in {path}"):
            for line in reader:
                lines.append(line)
        assert lines == all_lines(tmp_path / f"{name}-j1")
        if reader.rejected:
            reason = reader.rejected[-1].reason
            assert reason == f"input ends inside this game (truncated {kind} data in {path})"


def test_python_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.pgn"
    path.write_bytes(b'[Event "a"]\n\n1. e4 { never closed\n\n[Event "b"]\n\n1. d4 *\n')
    with pytest.raises(PGNSyntaxError, match=f"^{path}: unterminated comment \\(PGN byte 19, game 1\\)$"):
        list(read_games(path))
    with pytest.raises(PGNSyntaxError, match=r"^unterminated comment \(PGN byte 19, game 1\)$"):
        list(read_lines(path.read_bytes()))     # bytes have no name
    cut = tmp_path / "cut.pgn"
    cut.write_bytes(b'[Event "a"]\n\n1. e4 *\n\n[Event "b"]\n[Site "x')
    with pytest.raises(InputDamageError, match=f"^{cut}: the input ends inside the tags of its last game"):
        list(read_games(cut))
    cut.write_bytes(b'[Event "a"]\n\n1. e4 { never closed\n')     # (the comment open at the end: cut short)
    with pytest.raises(InputDamageError, match=f"^{cut}: the input ends inside a comment of its last game "
                                               r"\(PGN byte 34\)$"):
        list(read_games(cut))


# -- a stray byte: the game that holds it, never the input, at any block size ------------------------------

@pytest.mark.parametrize("kernel", kernel_params("scan._scan"))
@pytest.mark.parametrize("where", ["tag", "comment", "move"])
def test_both_kernels_reject_the_game_that_holds_a_nul(kernel, where):
    game = b'[Event "x"]\n[White "Ann"]\n\n1. e4 { [%clk 0:01:00] good } e5 *\n\n'
    spot = {"tag": game.index(b"Ann") + 1, "comment": game.index(b"good") + 1, "move": game.index(b"e5") + 1}[where]
    bad = game[:spot] + b"\0" + game[spot + 1:]
    data = game + bad + game
    lines, read, rejects = kernel.lines_from_block(data, 0, len(data), openings=kernel.opening_table({}), text=True)[:3]
    assert read == 3 and len(lines) == 2 and len(rejects) == 1
    _reason, error_offset, number, start, end = rejects[0]
    assert number == 2 and data[start:end].rstrip(b"\n") == bad.rstrip(b"\n")
    assert error_offset >= len(game)
    games, read, rejects = kernel.games_from_block(data, 0, len(data))[:3]
    assert read == 3 and len(games) == 2 and [r[2] for r in rejects] == [2]


def _read_everything(data: bytes, block_size: int):
    lines = read_lines(data, errors="skip", block_size=block_size)
    games = read_games(data, errors="skip", block_size=block_size)
    headers = read_headers(data, errors="skip", block_size=block_size)
    return (list(lines), [(r.number, r.offset, r.reason, r.error_offset, r.text) for r in lines.rejected],
            [(g.number, g.offset, g.headers, g.moves, g.clocks) for g in games],
            [(r.number, r.offset) for r in games.rejected], [g.headers for g in headers],
            [r.number for r in headers.rejected])


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_a_stray_control_byte_gives_the_same_output_at_every_block_size(data):
    """Mutations of a real dump (a NUL or another control byte put anywhere, the first 64 KiB included):
    the input is never refused, and every reader's output is the same at block sizes 1, 7, 64, 1000 and
    the default."""
    dump = _dump()
    mutated = bytearray(dump)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(dump) - 1) | st.integers(0, 70_000))
        mutated[at] = data.draw(st.sampled_from([0, 1, 7, 8, 0x0B, 0x0C, 0x1A, 0x1B, 0x7F]))
    mutated = bytes(mutated)
    first = _read_everything(mutated, BLOCK_SIZES[0])
    for block_size in BLOCK_SIZES[1:]:
        assert _read_everything(mutated, block_size) == first, block_size
    lines, rejected = first[0], first[1]
    assert len(lines) + len(rejected) >= 340
    if b"\0" in mutated:
        nul = mutated.index(b"\0")
        assert any(r[1] <= nul < r[1] + len(r[4]) for r in rejected)   # its game is rejected


def test_a_nul_in_the_second_game_rejects_that_game_in_the_converter_at_any_jobs(tmp_path, dump, capsys):
    """It used to refuse the whole input ("is not PGN: binary data", exit 2, nothing written)."""
    starts = _game_starts(dump)
    spot = starts[1] + 100
    data = dump[:spot] + b"\0" + dump[spot + 1:]
    path = tmp_path / "nul.pgn"
    path.write_bytes(data)
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        code = main([str(path), "100", "-o", str(out), "-j", jobs])
        err = capsys.readouterr().err
        assert code == 0, err
        assert "347 games written, 1 rejected (of 348 read)" in err, err
        results.append(([f.read_bytes() for f in chunk_files(out)], (out / "_nul.pgn.rejected.pgn").read_bytes()))
    assert results[0] == results[1]
    assert all_lines(tmp_path / "j1") == list(read_lines(data, errors="skip"))
    assert b"NUL byte in the game (binary data)" in results[0][1]


@pytest.mark.parametrize("block_size", BLOCK_SIZES)
@pytest.mark.parametrize("content", [
    bytes(range(256)) * 40,
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(4000),
    b"PK\x03\x04\x14\x00\x00\x00" + bytes(1000),
    '[Event "x"]\n[White "Ann"]\n\n1. e4 *\n'.encode("utf-16"),
])
def test_binary_input_is_refused_whatever_the_block_size(content, block_size):
    with pytest.raises(InputError, match=r"^<bytes> is not PGN: binary data \(PGN byte \d+\)$"):
        list(read_lines(content, errors="skip", block_size=block_size))


def test_utf16_text_reads_with_its_encoding():
    data = '[Event "x"]\n[White "J\u00e9r\u00f4me"]\n\n1. e4 *\n'.encode("utf-16")
    assert [g.headers["White"] for g in read_games(data, encoding="utf-16")] == ["J\u00e9r\u00f4me"]


def test_the_binary_check_reads_the_same_bytes_whatever_the_pieces():
    """A NUL past the first piece a pipe or decoder gives is still seen (the head is HEAD_SIZE bytes)."""
    data = b"e4 e5 " + bytes(range(1, 256)) * 50 + b"\0"
    chunks = [data[i:i + 100] for i in range(0, len(data), 100)]
    with pytest.raises(InputError, match="binary data"):
        list(read_games(iter(chunks)))
    check_pgn(b'[Event "x"]\n[Site "\0"]\n', "a.pgn")    # PGN with a stray byte: not refused


# -- encodings ---------------------------------------------------------------------------------------------

LATIN = '[Event "Open"]\n[White "M\u00fcller, J\u00fcrgen"]\n[Black "Garc\u00eda"]\n\n1. e4 { f\u00fcr } e5 *\n\n'


def test_encoding_transcodes_and_offsets_count_the_utf8():
    data = (LATIN * 3).encode("cp1252")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        games = list(read_games(data, encoding="cp1252"))
        lines = list(read_lines(data, encoding="Windows-1252"))
        headers = list(read_headers(data, encoding="latin-1"))
    assert [g.headers["White"] for g in games] == ["M\u00fcller, J\u00fcrgen"] * 3
    assert [g.offset for g in games] == [0, len(LATIN.encode()), 2 * len(LATIN.encode())]
    assert all("M\u00fcller, J\u00fcrgen" in line for line in lines) and len(headers) == 3


def test_read_arrow_and_to_parquet_take_the_encoding(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from fastpgn.arrow import to_parquet

    data = LATIN.encode("cp1252")
    assert next(read_arrow(data, encoding="cp1252")).column("black").to_pylist() == ["Garc\u00eda"]
    to_parquet(data, tmp_path / "g.parquet", encoding="cp1252")
    assert pq.read_table(tmp_path / "g.parquet").column("white").to_pylist() == ["M\u00fcller, J\u00fcrgen"]


def test_bytes_that_are_not_utf8_are_counted_and_said_once(tmp_path):
    data = (LATIN * 2).encode("cp1252") + LATIN.encode("utf-8")
    reader = read_games(data)
    with pytest.warns(NotUTF8Warning, match=r"^<bytes>: bytes that are not UTF-8 \(first at PGN byte 24\)"):
        games = list(reader)
    assert len(games) == 3 and games[0].headers["White"] == "M\ufffdller, J\ufffdrgen"
    assert reader.games_not_utf8 == 2 and reader.first_not_utf8 == 24
    assert games[2].headers["White"] == "M\u00fcller, J\u00fcrgen"


def test_the_converter_says_how_many_games_are_not_utf8_and_reads_an_encoding(tmp_path, capsys):
    path = tmp_path / "twic.pgn"
    path.write_bytes((LATIN * 2).encode("cp1252"))
    for jobs in ("1", "2"):
        code = main([str(path), "10", "-o", str(tmp_path / f"plain{jobs}"), "-q", "-j", jobs])
        err = capsys.readouterr().err
        assert code == 0 and err == (
            "fastpgn: 2 games held bytes that are not UTF-8 (first at PGN byte 24); name the "
            "input's encoding to read them as its characters: --encoding cp1252 (or latin-1, ...)\n")
    assert [f.read_bytes() for f in chunk_files(tmp_path / "plain1")] == [
        f.read_bytes() for f in chunk_files(tmp_path / "plain2")]
    code = main([str(path), "10", "-o", str(tmp_path / "cp"), "-q", "--encoding", "cp1252"])
    assert code == 0 and capsys.readouterr().err == ""
    assert all("M\u00fcller, J\u00fcrgen" in line for line in all_lines(tmp_path / "cp"))
    with pytest.raises(SystemExit) as usage:      # (argparse's usage error)
        main([str(path), "10", "-o", str(tmp_path / "x"), "--encoding", "klingon"])
    assert usage.value.code == 2 and "unknown encoding 'klingon'" in capsys.readouterr().err


def test_the_notation_commands_take_an_encoding(tmp_path, capsys):
    path = tmp_path / "twic.pgn"
    path.write_bytes((LATIN * 2).encode("cp1252"))
    code = main(["crypt", "encode", str(path), "--headers", "-o", str(tmp_path / "a.crypt")])
    err = capsys.readouterr().err
    assert code == 0 and "2 games held bytes that are not UTF-8 (first at PGN byte 24)" in err, err
    code = main(["crypt", "encode", str(path), "--headers", "-o", str(tmp_path / "b.crypt"), "--encoding", "cp1252"])
    err = capsys.readouterr().err
    assert code == 0 and "UTF-8" not in err, err
    assert "M\u00fcller" in (tmp_path / "b.crypt").read_text(encoding="utf-8")
    latin_crypt = tmp_path / "latin.crypt"
    latin_crypt.write_bytes((tmp_path / "b.crypt").read_text(encoding="utf-8").encode("latin-1"))
    code = main(["crypt", "decode", str(latin_crypt), "-o", str(tmp_path / "back.pgn")])
    err = capsys.readouterr().err
    assert code == 2 and "not UTF-8 text" in err and "--encoding" in err and err.count("\n") == 1
    code = main(["crypt", "decode", str(latin_crypt), "-o", str(tmp_path / "back.pgn"), "--encoding", "latin-1"])
    assert code == 0, capsys.readouterr().err
    assert "M\u00fcller, J\u00fcrgen" in (tmp_path / "back.pgn").read_text(encoding="utf-8")
    code = main(["icn", str(path), "--encoding", "cp1252", "-o", str(tmp_path / "g.icn")])
    assert code == 0, capsys.readouterr().err
    # lichess-text writes dated games of one player (--me), named as the cp1252 file spells them
    dated = tmp_path / "dated.pgn"
    dated.write_bytes((LATIN.replace("*", "1-0").replace('[Event "Open"]', '[Date "2021.04.07"]') * 2).encode("cp1252"))
    code = main(["lichess-text", "--reverse", str(dated), "--encoding", "cp1252", "--me", "M\u00fcller, J\u00fcrgen",
                 "-o", str(tmp_path / "text")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "text" / "dated.txt").read_text().split() == ["21.04.07W1-0", "1e4e5"] * 2


@pytest.mark.parametrize("command", [["crypt", "encode"], ["icn"], ["lichess-text", "--reverse"]])
def test_the_notation_commands_exit_1_on_damage_whatever_decoded(tmp_path, dump, capsys, command):
    for name, path in _truncated(tmp_path, dump).items():
        code = main([*command, str(path), "-q", "-o", str(tmp_path / "out")] if command[0] != "lichess-text"
                    else [*command, str(path), "-q"])
        err = capsys.readouterr().err
        assert code == 1, (name, err)
        assert err.splitlines()[-1].startswith(f"truncated {name.split('.')[1]} data in {path} (PGN byte "), err
