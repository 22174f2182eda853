"""The settings a command makes to its own process (fastpgn.cli._process): a user's own setting wins."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys

import pytest

from fastpgn.cli import _process


# OpenBLAS kept to one thread; pyarrow's mimalloc (where it is kept) keeping its freed pages
@pytest.mark.parametrize(("name", "ours", "users"), [("OPENBLAS_NUM_THREADS", "1", "8"),
                                                     ("MIMALLOC_PURGE_DELAY", "-1", "100")])
def test_each_setting_is_made_unless_the_user_chose(monkeypatch, name, ours, users):
    monkeypatch.delenv(name, raising=False)
    _process.settle()
    assert os.environ[name] == ours
    monkeypatch.setenv(name, users)
    _process.settle()
    assert os.environ[name] == users


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the heap is set with glibc's mallopt only")
def test_pyarrows_buffers_come_from_the_kept_heap_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)
    _process.settle()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    _process.settle()
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    # a user who set glibc's heap themselves keeps pyarrow's own allocator too: the heap may not keep buffers
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")
    _process.settle()
    assert "ARROW_DEFAULT_MEMORY_POOL" not in os.environ


def test_a_users_malloc_setting_is_left_alone(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("mallopt called although the user set glibc's malloc")

    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        with monkeypatch.context() as m:
            m.setenv(name, "1")
            m.setattr(ctypes, "CDLL", refuse)
            _process.settle()


def test_a_command_runs_with_them(tmp_path):
    """The converter runs (and converts) with the settings made, in a process of its own."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "x"]\n[Site "https://lichess.org/abcdefgh"]\n\n1. e4 e5 *\n')
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-m", "fastpgn", str(pgn), "10", "--format", "csv", "-q",
                           "-o", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out").glob("*.csv.gz"))) == 1


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the heap is set with glibc's mallopt only")
def test_pyarrow_loaded_after_them_uses_the_system_pool():
    pytest.importorskip("pyarrow")
    chosen = ("ARROW_DEFAULT_MEMORY_POOL", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
    env = {k: v for k, v in os.environ.items() if k not in chosen}
    code = ("from fastpgn.cli import _process; _process.settle(); import pyarrow; "
            "print(pyarrow.default_memory_pool().backend_name)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "system"


def test_a_parquet_conversion_runs_with_them(tmp_path):
    """The Parquet converter, whose pyarrow is loaded after the settings, writes a chunk that reads back whole."""
    pq = pytest.importorskip("pyarrow.parquet")
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "x"]\n[Site "https://lichess.org/abcdefgh"]\n\n1. e4 { [%clk 0:03:00] } e5 *\n' * 3)
    env = {k: v for k, v in os.environ.items() if k not in ("ARROW_DEFAULT_MEMORY_POOL", "MIMALLOC_PURGE_DELAY")}
    done = subprocess.run([sys.executable, "-m", "fastpgn", str(pgn), "10", "--format", "parquet", "-q",
                           "-o", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (chunk,) = (tmp_path / "out").glob("*.parquet")
    table = pq.read_table(chunk)
    assert table.num_rows == 3 and table.column("moves").to_pylist() == [["e4", "e5"]] * 3
