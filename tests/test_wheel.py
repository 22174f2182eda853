"""The package as users get it: ``python -m build`` makes an sdist and a wheel, the wheel installs in a fresh
venv outside the checkout, and there its compiled kernels load and the converter runs.

pip builds a wheel from the sdist, so the sdist must carry every kernel source
(``.pyx``, ``.pxi``, ``.pxd``) and stub (``.pyi``), and the wheel it builds must
hold the same files as one built straight from the checkout. Both builds run
in copies of the tree (tracked files and new ones git does not ignore), so no
build output of the checkout (``build/``, in-place kernels) leaks into them;
each compiles the kernels in build's isolated environment, the two side by side.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import fastpgn
from fastpgn import _backend
from fastpgn.reader import read_lines
from helpers import ROOT, missing_system_package

pytestmark = [
    pytest.mark.slow,
    # The wheel's kernels are compiled whatever backend runs the tests: the cython run of the suite checks it.
    pytest.mark.skipif(_backend.requested() == "python", reason="the wheel test runs in the suite's cython run"),
]

KERNEL_SOURCES = (".pyx", ".pxi", ".pxd", ".pyi")
SAMPLE = ROOT / "data" / "sample.pgn.zst"


def _tree_files() -> list[str]:
    """The checkout's files as a fresh clone plus the work in progress has them (git ls-files)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the wheel test copies a git checkout (git ls-files); this is not one")
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def _copy_tree(files: list[str], to: Path) -> Path:
    for name in files:
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, to / name)
    return to


def _expected_package_files(files: list[str]) -> set[str]:
    """What the wheel must hold of fastpgn/: its sources, stubs, data, and one compiled module per kernel."""
    wanted = set()
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for name in files:
        path = Path(name)
        if path.parts[0] != "fastpgn":
            continue
        if path.suffix in (".py", *KERNEL_SOURCES) or name in (
                "fastpgn/py.typed", "fastpgn/data/openings.tsv", "fastpgn/data/opening-positions.tsv"):
            wanted.add(name)
        if name.endswith("_cy.pyx"):
            wanted.add(name[:-len(".pyx")] + suffix)
    return wanted


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """sdist, the wheel built from it (as pip does) and the wheel built straight from the tree."""
    try:
        import build  # noqa: F401
    except ImportError:
        missing_system_package('build is not installed: pip install -e ".[test]"')
    files = _tree_files()
    tmp = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, FASTPGN_IMPLEMENTATION="cython")    # the kernels must compile: no pure-Python wheel
    env.pop("PYTHONPATH", None)
    runs = {}
    for name, args in (("via-sdist", []), ("direct", ["--wheel"])):
        src = _copy_tree(files, tmp / f"src-{name}")
        log = open(tmp / f"build-{name}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "build", *args, "--outdir", str(tmp / name)], cwd=src, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        runs[name] = (proc, log)
    for name, (proc, log) in runs.items():
        code = proc.wait(timeout=900)
        log.close()
        if code:
            tail = (tmp / f"build-{name}.log").read_text(errors="replace")[-4000:]
            pytest.fail(f"python -m build ({name}) failed with status {code}:\n{tail}")
    sdists = list((tmp / "via-sdist").glob("*.tar.gz"))
    wheels = list((tmp / "via-sdist").glob("*.whl"))
    direct = list((tmp / "direct").glob("*.whl"))
    assert len(sdists) == len(wheels) == len(direct) == 1, (sdists, wheels, direct)
    return {"files": files, "tmp": tmp, "sdist": sdists[0], "wheel": wheels[0], "direct": direct[0]}


def _wheel_names(path: Path) -> set[str]:
    with zipfile.ZipFile(path) as z:
        return {n for n in z.namelist() if not n.endswith("/")}


def test_the_sdist_carries_every_kernel_source(built):
    with tarfile.open(built["sdist"]) as t:
        members = {m.name.split("/", 1)[1] for m in t.getmembers() if m.isfile() and "/" in m.name}
    sources = {n for n in built["files"] if n.startswith("fastpgn/") and n.endswith(KERNEL_SOURCES)}
    assert sources and {n for n in sources if n.endswith(".pyx")}
    assert sources - members == set(), "the sdist lacks kernel sources, so pip cannot build the kernels from it"
    assert {"pyproject.toml", "setup.py", "README.md", "fastpgn/data/openings.tsv",
            "fastpgn/data/opening-positions.tsv"} <= members


def test_the_wheel_holds_every_package_its_data_and_compiled_kernels(built):
    names = _wheel_names(built["wheel"])
    package = {n for n in names if n.startswith("fastpgn/")}
    expected = _expected_package_files(built["files"])
    # scan, board, io, convert, engine, notations, cli: every sub-package of the tree, none left behind
    subpackages = {n for n in expected if n.endswith("/__init__.py") and n.count("/") == 2}
    assert len(subpackages) >= 7, subpackages
    assert package == expected, (f"missing from the wheel: {sorted(expected - package)}; "
                                 f"not expected in it: {sorted(package - expected)}")
    assert any(n.endswith(".dist-info/entry_points.txt") for n in names)


def test_the_sdist_builds_the_wheel_the_checkout_builds(built):
    assert built["wheel"].name == built["direct"].name
    assert _wheel_names(built["wheel"]) == _wheel_names(built["direct"])


def test_the_installed_wheel_runs_with_the_compiled_kernels(built, tmp_path):
    """In a fresh venv outside the checkout: ``fastpgn --version`` says cython and the converter converts."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, command = venv / "bin" / "python", venv / "bin" / "fastpgn"
    # the wheel and its runtime dependencies (zstandard, tqdm), from the index or pip's cache
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", str(built["wheel"])],
                         capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["FASTPGN_IMPLEMENTATION"] = "cython"     # the compiled kernels or an ImportError, never a fallback
    run = tmp_path / "run"
    run.mkdir()

    def there(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=run, env=env, capture_output=True, text=True, timeout=300)

    version = there(str(command), "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"fastpgn {fastpgn.__version__} (backend: cython)"
    where = there(str(python), "-c", "import fastpgn; print(fastpgn.__file__); print(sorted(fastpgn.BACKENDS.items()))")
    assert where.returncode == 0, where.stderr
    file, backends = where.stdout.splitlines()
    assert Path(file).is_relative_to(venv) and not Path(file).is_relative_to(ROOT), file
    assert backends == str(sorted((kernel, "cython") for kernel in fastpgn.BACKENDS))

    games = len(list(read_lines(SAMPLE)))
    converted = there(str(command), str(SAMPLE), "1000", "-o", "out")
    assert converted.returncode == 0, converted.stderr
    assert f"{games:,} games written, 0 rejected (of {games:,} read)" in converted.stderr, converted.stderr
    assert "backend cython" in converted.stderr, converted.stderr
    chunks = sorted((run / "out").glob("sample.pgn.zst.part_*.cri.gz"))
    assert [c.name for c in chunks] == [f"sample.pgn.zst.part_{i:06d}.cri.gz" for i in range(-(-games // 1000))]
    lines = [line for c in chunks for line in gzip.decompress(c.read_bytes()).decode("utf-8").splitlines()]
    assert lines == list(read_lines(SAMPLE))
