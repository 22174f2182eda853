"""Checks of the benchmark tools themselves (run with ``python -m pytest benchmarks``; not in the default run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import compare, make_corpus
from benchmarks.contenders import _line_counts

SOURCE = make_corpus.DEFAULT_SOURCE


def _contender(counts, expected, claims=compare.ALL):
    c = compare.Contender("x", "x", [], Path("x"), 1, claims=frozenset(claims), expected=expected)
    c.counts = counts
    return c


def test_agreement_flags_a_contender_that_extracts_less_than_it_claims():
    expected = {"games": 10, "plies": 700, "evals": 50, "clocks": 600}
    cells, verdict = compare.agreement(_contender(dict(expected, evals=45), expected))
    assert cells["evals"] == "-10.00%" and cells["games"] == "ok"
    assert verdict.startswith("FLAG") and "evals LESS" in verdict
    cells, verdict = compare.agreement(_contender(dict(expected, clocks=None), expected))
    assert "claims clocks, reports none" in verdict
    _, verdict = compare.agreement(_contender({"games": 10, "plies": None, "evals": None, "clocks": None},
                                              expected, claims={"games"}))
    assert verdict == "ok"


def test_line_counts_do_not_count_the_mate_marker_as_an_eval():
    fields = [""] * 22
    fields[5], fields[8], fields[20], fields[21] = "Y", "3", "0.1 0.2 #", "60 59 58"
    assert _line_counts("\u2502".join(fields)) == (3, 2, 3)


@pytest.mark.skipif(not SOURCE.is_dir(), reason="the shared lichess-db corpus is absent")
def test_make_corpus_is_deterministic_and_reidentifies(tmp_path):
    kw = dict(source=SOURCE, want_bz2=False, zstd_level=3, use_oracle=False)
    a = json.loads(make_corpus.build(300_000, 7, tmp_path / "a", **kw).read_text())
    b = json.loads(make_corpus.build(300_000, 7, tmp_path / "b", **kw).read_text())
    c = json.loads(make_corpus.build(300_000, 8, tmp_path / "c", **kw).read_text())
    assert a["sha256"] == b["sha256"] != c["sha256"]
    assert a["bytes"] >= 300_000 and a["totals"]["games"] == len(a["order"])
    data = (tmp_path / "a" / "lichess-300000B-seed7.pgn").read_bytes()
    sites = [line for line in data.split(b"\n") if line.startswith(b"[Site ")]
    assert len(sites) == len(set(sites)) == a["totals"]["games"] == len(compare.game_starts(data))
    starts = compare.game_starts(data) + [len(data)]
    copies = {data[s:e] for s, e in zip(starts, starts[1:])}
    originals, _ = make_corpus.load_games(SOURCE)
    assert len(copies) == len(starts) - 1 and not copies & set(originals)


def test_many_inputs_pieces_are_the_corpus_cut_at_game_starts(tmp_path):
    import zstandard

    from benchmarks import many_inputs

    games = b"".join(b'[Event "g%d"]\n[Site "x"]\n\n1. e4 e5 %d-0\n\n' % (i, i % 2) for i in range(50))
    corpus = tmp_path / "c.pgn"
    corpus.write_bytes(games)
    pieces, size = many_inputs.split(corpus, 7, tmp_path / "work")
    assert size == len(games) and len(pieces) == 7
    texts = [zstandard.ZstdDecompressor().decompressobj().decompress(p.read_bytes()) for p in pieces]
    assert b"".join(texts) == games and all(t.startswith(b"[Event ") for t in texts)
    assert many_inputs.split(corpus, 7, tmp_path / "work") == (pieces, size)     # reused, not rewritten


def test_busiest_player_skips_a_name_that_starts_another(tmp_path):
    def game(white, black):
        return f'[Event "x"]\n[White "{white}"]\n[Black "{black}"]\n\n1. e4 1-0\n\n'

    pgn = tmp_path / "g.pgn"
    # "ann" plays most, but pgn-extract's prefix match would also take "Anna"; "bob" is exact either way
    pgn.write_text(game("ann", "bob") * 3 + game("Anna", "ann") + game("bob", "cy") * 2)
    assert compare.busiest_player(pgn) == ("bob", 5)


def test_py313_with_says_why_when_there_is_none(tmp_path):
    exe, why = compare.py313_with("no_such_module_here", str(tmp_path / "python"))
    assert exe is None and ("no_such_module_here" in why or "no Python 3.13" in why)


def _real_games(tmp_path) -> Path:
    import zstandard

    src = SOURCE / "lichess_db_standard_rated_2022-06.head2499.pgn.zst"
    if not src.exists():
        pytest.skip(f"{src} is absent (the shared corpus is read in place)")
    data = zstandard.ZstdDecompressor().stream_reader(src.open("rb")).read()
    pgn = tmp_path / "games.pgn"
    pgn.write_bytes(data)
    return pgn


@pytest.mark.skipif(compare.pgn_extract() is None, reason="pgn-extract is not installed "
                    "(apt-get install pgn-extract; benchmarks/setup.sh)")
def test_pgn_extract_and_the_converter_keep_the_same_games(tmp_path):
    """The filter pairs compare like with like: on real games, pgn-extract's criteria and the converter's
    flags keep the same games (the comparison's own check, on a small input)."""
    import gzip

    from fastpgn.cli import main as fastpgn_main

    pgn = _real_games(tmp_path)
    player, n = compare.busiest_player(pgn)
    assert n >= 2
    tags = tmp_path / "elo.tags"
    tags.write_text('WhiteElo >= "2000"\nBlackElo >= "2000"\n')
    jobs = {"elo": (["-t", str(tags)], ["--min-elo", "2000"]),
            "player": ([f"-Tp{player}"], ["--player", player]),
            "validate": ([], ["--validate"])}
    for name, (pe_args, our_args) in jobs.items():
        out = tmp_path / f"{name}.pgn"
        compare.subprocess.run([compare.pgn_extract(), "--quiet", "-s", *pe_args, "-o", str(out), str(pgn)], check=True)
        theirs = out.read_bytes().count(b"\n[Event ") + out.read_bytes().startswith(b"[Event ")
        folder = tmp_path / f"conv-{name}"
        assert fastpgn_main([str(pgn), "100000", "-j", "1", "-o", str(folder), "-q", *our_args]) == 0
        ours = sum(len(gzip.decompress(p.read_bytes()).splitlines()) for p in folder.glob("*.part_*"))
        assert ours == theirs > 0, name
    assert theirs == len(compare.game_starts(pgn.read_bytes()))     # every real game's moves are legal


MULTIFRAME = SOURCE / "lichess_db_standard_rated_2022-06.head2499.multiframe.pgn.zst"
SINGLE = SOURCE / "lichess_db_standard_rated_2022-06.head2499.pgn.zst"


@pytest.mark.skipif(not MULTIFRAME.exists(), reason="the shared corpus's file in lichess's framing is absent")
def test_the_frame_table_covers_lichess_framing_and_each_frame_decodes_alone():
    import zstandard

    sizes = make_corpus.pzstd_frames(MULTIFRAME)
    data = MULTIFRAME.read_bytes()
    assert len(sizes) > 1 and sum(12 + s for s in sizes) == len(data)
    pgn, at = b"", 0
    for size in sizes:          # each frame on its own, as a parallel decoder reads them
        at += 12
        pgn += zstandard.ZstdDecompressor().decompressobj().decompress(data[at:at + size])
        at += size
    assert pgn == zstandard.ZstdDecompressor().stream_reader(SINGLE.open("rb")).read()
    assert make_corpus.pzstd_frames(SINGLE) == []


@pytest.mark.skipif(not MULTIFRAME.exists(), reason="the shared corpus's file in lichess's framing is absent")
def test_the_single_stream_floor_reads_every_frame(capsys):
    import zstandard

    from benchmarks.contenders import floor_zstd

    floor_zstd(str(MULTIFRAME), None)
    result = json.loads(capsys.readouterr().out.removeprefix("RESULT "))
    assert result["bytes"] == len(zstandard.ZstdDecompressor().stream_reader(SINGLE.open("rb")).read())
