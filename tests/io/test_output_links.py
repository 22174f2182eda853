"""No symbolic link at a name fastpgn writes is ever written through (fastpgn.io.output).

A shared output folder may hold, at a name a run is about to write, a link to
any file the user can write. Each test plants one, pointing at a victim file
(or folder) outside the output, runs the writer, and checks that the victim is
untouched and that the run either refused in one line or wrote a real file in
the link's place. Also: the names of an input's output files never start with
``.`` (an input named ``.``, ``./``, ``..``), and a full disk leaves no partial
file and gives one line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastpgn.cli import main
from fastpgn.convert import converter as pipeline
from fastpgn.errors import OutputError
from fastpgn.io import output
from helpers import SHARED, fake_engine, first_games, official_schema, release_rows, shared

NAME = "lichess_db_standard_rated_2023-02.head15.pgn.zst"
SRC = SHARED / "data" / "lichess-db" / NAME


@pytest.fixture(autouse=True)
def _corpus():
    """Every test here writes the output of a real dump's first games: skip them without the corpus."""
    shared("data", "lichess-db", NAME)
VICTIM = b"the victim's own bytes: never to be written by fastpgn\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_bytes(VICTIM)
    return path


def plant(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    return link


def assert_safe(code: int, err: str, link: Path, victim: Path) -> None:
    """The victim untouched; the run refused in one line naming the link, or left a real file there."""
    assert victim.read_bytes() == VICTIM
    if code == 0:
        assert not link.is_symlink()
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "symbolic link" in lines[0] and str(link) in lines[0]


def convert(args, capsys) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


# -- the converter --------------------------------------------------------------------------------

FRESH_NAMES = [f".{NAME}.fastpgn-lock", f".{NAME}.fastpgn-probe", f"{NAME}.part_000000.cri.gz",
               f".{NAME}.part_000000.cri.gz.tmp", f".{NAME}.fastpgn-state.json", f".{NAME}.fastpgn-state.json.tmp",
               f".{NAME}.fastpgn-done.json", f".{NAME}.fastpgn-done.json.tmp", f"_{NAME}.rejected.pgn"]


@pytest.mark.parametrize("name", FRESH_NAMES)
@pytest.mark.parametrize("options", [[], ["--overwrite"]])
def test_a_link_in_the_output_folder_is_refused_before_anything_is_written(tmp_path, victim, capsys, name, options):
    out = tmp_path / "out"
    link = plant(out / name, victim)
    code, err = convert([SRC, 5, "-o", out, "-q", *options], capsys)
    assert_safe(code, err, link, victim)
    assert code == 2 and [p for p in out.glob("*.part_*") if not p.is_symlink()] == []    # nothing written
    assert link.is_symlink()        # (nor removed: it is not fastpgn's)


@pytest.mark.parametrize("name", [f"{NAME}.part_000001.cri.gz", f".{NAME}.part_000001.cri.gz.tmp",
                                  f".{NAME}.fastpgn-state.json.tmp", f".{NAME}.fastpgn-done.json",
                                  f".{NAME}.fastpgn-done.json.tmp", f"_{NAME}.rejected.pgn"])
def test_a_link_planted_during_the_run_is_never_written_through(tmp_path, victim, capsys, monkeypatch, name):
    """Planted after the run checked its folder: each file is still opened without following it."""
    src = tmp_path / "mixed.pgn"       # two good games, a bad one (a rejected game), and the rest
    games = first_games(SRC, 15, tmp_path).read_text()
    src.write_text(games.replace("[Event", "1. e4 hello 1-0\n\n[Event", 1))
    name = name.replace(NAME, src.name)
    out = tmp_path / "out"
    claim = pipeline.Converter._claim_output

    def claim_then_plant(self):
        claim(self)
        plant(out / name, victim)

    monkeypatch.setattr(pipeline.Converter, "_claim_output", claim_then_plant)
    code, err = convert([src, 5, "-o", out, "-q"], capsys)
    assert_safe(code, err, out / name, victim)


def _interrupted(out: Path, monkeypatch) -> None:
    """A run of SRC by 5 games stopped after its first chunk, as by Ctrl-C."""
    original = pipeline.ChunkFiles.close

    def close_then_stop(self):
        original(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.ChunkFiles, "close", close_then_stop)
    with pytest.raises(KeyboardInterrupt):
        pipeline.Converter(pipeline.Options(input=str(SRC), chunk_size=5, output_dir=str(out), jobs=1)).run()
    monkeypatch.setattr(pipeline.ChunkFiles, "close", original)
    assert (out / f".{NAME}.fastpgn-state.json").is_file()


@pytest.mark.parametrize("name", [f".{NAME}.part_000001.cri.gz.tmp", f".{NAME}.part_000002.cri.gz.tmp",
                                  f".{NAME}.fastpgn-state.json.tmp", f"_{NAME}.rejected.pgn"])
@pytest.mark.parametrize("when", ["before", "during"])
def test_resume_never_writes_a_chunk_through_a_link(tmp_path, victim, capsys, monkeypatch, name, when):
    out = tmp_path / "out"
    _interrupted(out, monkeypatch)
    if when == "before":
        plant(out / name, victim)
    else:
        claim = pipeline.Converter._claim_output

        def claim_then_plant(self):
            claim(self)
            plant(out / name, victim)

        monkeypatch.setattr(pipeline.Converter, "_claim_output", claim_then_plant)
    code, err = convert([SRC, 5, "-o", out, "-q", "--resume"], capsys)
    assert_safe(code, err, out / name, victim)
    if code == 0:
        assert len([p for p in out.glob("*.part_*.cri.gz") if not p.is_symlink()]) == 3


def test_the_resume_state_is_never_read_through_a_link(tmp_path, victim, capsys, monkeypatch):
    out = tmp_path / "out"
    _interrupted(out, monkeypatch)
    state = out / f".{NAME}.fastpgn-state.json"
    victim.write_bytes(state.read_bytes())      # a state the run would accept, were it followed
    state.unlink()
    plant(state, victim)
    code, err = convert([SRC, 5, "-o", out, "-q", "--resume"], capsys)
    assert code == 2 and "symbolic link" in err and str(state) in err and len(err.strip().splitlines()) == 1


def test_a_hard_link_at_the_lock_is_refused(tmp_path, victim, capsys):
    out = tmp_path / "out"
    out.mkdir()
    os.link(victim, out / f".{NAME}.fastpgn-lock")
    code, err = convert([SRC, 5, "-o", out, "-q"], capsys)
    assert victim.read_bytes() == VICTIM
    assert code == 2 and "hard link" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("folder", ["year=2023", "year=2023/month=02"])
def test_a_link_at_a_month_folder_is_refused(tmp_path, capsys, folder):
    pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    link = plant(out / folder, elsewhere)
    code, err = convert([SRC, 100, "-o", out, "-q", "--format", "parquet", "--partition", "month"], capsys)
    assert code == 2 and "symbolic link" in err and str(link) in err and len(err.strip().splitlines()) == 1
    assert list(elsewhere.iterdir()) == []


# -- to_parquet -----------------------------------------------------------------------------------

def test_to_parquet_replaces_a_link_with_the_file(tmp_path, victim):
    pq = pytest.importorskip("pyarrow.parquet", reason='pyarrow is not installed: pip install -e ".[test]"')
    import fastpgn

    path = plant(tmp_path / "games.parquet", victim)
    reader = fastpgn.to_parquet(SRC, path)
    assert victim.read_bytes() == VICTIM
    assert not path.is_symlink() and pq.read_table(path).num_rows == reader.games_yielded == 15
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.parquet", "victim.txt"]


class _FullDisk:
    """A file on a disk that fills up after ``room`` bytes (a real full disk cannot be made in a test)."""

    def __init__(self, file, room: int) -> None:
        self.file, self.room = file, room

    def write(self, data) -> int:
        if len(data) > self.room:
            self.file.write(bytes(data[:self.room]))
            self.room = 0
            raise OSError(28, "No space left on device")
        self.room -= len(data)
        return self.file.write(data)

    def close(self) -> None:
        self.file.close()

    def __getattr__(self, name):
        return getattr(self.file, name)


@pytest.mark.parametrize("before", [None, b"an older file, kept whole"])
def test_to_parquet_onto_a_full_disk_leaves_no_partial_file(tmp_path, monkeypatch, before):
    pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    import fastpgn

    path = tmp_path / "games.parquet"
    if before is not None:
        path.write_bytes(before)
    create = output.create
    monkeypatch.setattr(output, "create", lambda where: _FullDisk(create(where), 2000))
    with pytest.raises(OutputError) as caught:
        fastpgn.to_parquet(SRC, path)
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if before is None else ["games.parquet"])
    if before is not None:
        assert path.read_bytes() == before


def test_to_parquet_onto_dev_full_is_one_line():
    pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    import fastpgn

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with pytest.raises(OutputError, match=r"^cannot write /dev/full: No space left on device$"):
        fastpgn.to_parquet(SRC, "/dev/full")
    assert fastpgn.to_parquet(SRC, os.devnull).games_yielded == 15      # a device is written as it is


# -- analyse -o -----------------------------------------------------------------------------------

def analyse(args, capsys) -> tuple[int, str]:
    from fastpgn.cli.analyse import main as analyse_main

    code = analyse_main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.fixture
def games(tmp_path) -> tuple[Path, str]:
    engine, _ = fake_engine(tmp_path)
    return first_games(SRC, 3, tmp_path), engine


@pytest.mark.parametrize("fmt", ["pgn", "lines", "parquet", "csv"])
@pytest.mark.parametrize("options", [[], ["--overwrite"]])
def test_analyse_refuses_a_link_at_its_output(tmp_path, victim, games, capsys, fmt, options):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    src, engine = games
    link = plant(tmp_path / f"analysed.{fmt}", victim)
    code, err = analyse([src, "-o", link, "--engine", engine, "--format", fmt, "-q", *options], capsys)
    assert_safe(code, err, link, victim)
    assert code == 2


@pytest.mark.parametrize("name", ["first3.part_000000.parquet", ".first3.part_000000.parquet.tmp"])
def test_analyse_refuses_a_link_among_its_parquet_chunks(tmp_path, victim, games, capsys, name):
    pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    src, engine = games
    folder = tmp_path / "chunks"
    link = plant(folder / name, victim)
    code, err = analyse([src, "-o", f"{folder}/", "--engine", engine, "--format", "parquet", "-q", "--overwrite"],
                        capsys)
    assert_safe(code, err, link, victim)
    assert code == 2


# -- the names of an input's output files ---------------------------------------------------------

@pytest.fixture
def release(tmp_path) -> Path:
    """A small folder in the layout of lichess's Parquet release: data/year=2023/month=02/train-....parquet."""
    pa = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[test]"')
    pq = pytest.importorskip("pyarrow.parquet")
    import fastpgn

    pgn = b"".join(fastpgn.io.sources.open_source(SRC).chunks())
    folder = tmp_path / "data" / "year=2023" / "month=02"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(release_rows(pgn), schema=official_schema()),
                   folder / "train-00000-of-00001.parquet")
    return tmp_path / "data"


@pytest.mark.parametrize("given,cwd", [(".", "."), ("./", "."), ("..", "year=2023")])
def test_a_release_named_by_dot_or_dot_dot_writes_visible_chunks(release, tmp_path, capsys, monkeypatch, given, cwd):
    pd = pytest.importorskip("pandas", reason='pandas is not installed: pip install -e ".[test]"')
    import pyarrow.dataset as ds

    out = tmp_path / "out"
    monkeypatch.chdir(release / cwd)
    code, err = convert([given, 100, "--format", "parquet", "-o", out, "-q"], capsys)
    assert code == 0, err
    assert [p.name for p in sorted(out.iterdir()) if not p.name.startswith(".")] == ["data.part_000000.parquet"]
    assert (out / ".data.fastpgn-done.json").is_file()
    assert ds.dataset(out, format="parquet").count_rows() == 15
    assert len(pd.read_parquet(out)) == 15


def test_a_hidden_input_writes_visible_chunks(tmp_path, capsys):
    src = tmp_path / ".games.pgn.zst"
    src.write_bytes(SRC.read_bytes())
    out = tmp_path / "out"
    code, err = convert([src, 5, "-o", out, "-q"], capsys)
    assert code == 0, err
    assert [p.name for p in sorted(out.glob("*.part_*"))] == [f"games.pgn.zst.part_{i:06d}.cri.gz" for i in range(3)]


# -- the other writers: write_pgn, to_csv, a command's -o, openings -o ---------------------------------

@pytest.mark.parametrize("suffix", [".pgn", ".pgn.gz"])
def test_write_pgn_refuses_a_link_at_its_path(tmp_path, victim, suffix):
    import fastpgn

    link = plant(tmp_path / f"out{suffix}", victim)
    with pytest.raises(OutputError, match="symbolic link"):
        fastpgn.write_pgn(fastpgn.read_games(first_games(SRC, 3, tmp_path)), link)
    assert victim.read_bytes() == VICTIM and link.is_symlink()


def test_to_csv_refuses_a_link_at_its_path(tmp_path, victim):
    from fastpgn.csv_rows import to_csv

    link = plant(tmp_path / "games.csv", victim)
    with pytest.raises(OutputError, match="symbolic link"):
        to_csv(first_games(SRC, 3, tmp_path), link)
    assert victim.read_bytes() == VICTIM and link.is_symlink()


def test_a_command_refuses_a_link_at_its_output(tmp_path, victim, capsys):
    """The text commands' ``-o`` (crypt's here; lichess-text and icn write through the same ``Output``)."""
    link = plant(tmp_path / "games.crypt", victim)
    code, err = convert(["crypt", "encode", first_games(SRC, 3, tmp_path), "--headers", "-o", link], capsys)
    assert_safe(code, err, link, victim)
    assert code == 2


def test_openings_refuses_a_link_at_its_output(tmp_path, victim, capsys):
    tsv = shared("data", "openings")
    link = plant(tmp_path / "openings.tsv", victim)
    code, err = convert(["openings", tsv, "-o", link], capsys)
    assert_safe(code, err, link, victim)
    assert code == 2
