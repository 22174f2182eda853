#!/usr/bin/env bash
# The benchmarks' set-up: the peers compare.py and bench_board.py run beside fastpgn, installed the way
# .ci/run installs stockfish (Debian packages with apt-get, Python packages with pip). Run it from the
# checkout's root as root (or with sudo for apt-get); every step is optional for the benchmarks, which
# skip a missing peer with a note.
#
#   benchmarks/setup.sh                    # .venv: fastpgn[bench]; apt: pgn-extract zstd time; bench-data/py313
#   PYTHON=/path/to/python benchmarks/setup.sh    # another environment's pip for the Python peers
#   CORPUS=100MB benchmarks/setup.sh       # the corpus in lichess's framing at another size (none: skip it)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}

# C peers and floors from Debian: pgn-extract (tag filters, validation), zstd -dc and pzstd (the zstd
# package has both), /usr/bin/time (peak RSS).
if command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq pgn-extract zstd time
fi

# Python peers: python-chess, the Rust binding, fastchess, pandas, DuckDB (pyproject.toml's [bench] extra).
[ -x "$PYTHON" ] || python3 -m venv .venv
FASTPGN_IMPLEMENTATION=cython "$PYTHON" -m pip install -q -e '.[bench]'

# bulletchess is built for Python 3.13 only: a venv of its own in bench-data/py313 (git-ignored), from
# pyenv's 3.13 or a python3.13 on the PATH; compare.py and bench_board.py find it there (or --py313 PATH).
PY313=${PY313:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python 2>/dev/null | tail -1 || true)}
PY313=${PY313:-$(command -v python3.13 || true)}
if [ -n "$PY313" ]; then
    mkdir -p bench-data
    [ -x bench-data/py313/bin/python ] || "$PY313" -m venv bench-data/py313
    bench-data/py313/bin/python -m pip install -q bulletchess
else
    echo "setup: no Python 3.13 (pyenv install 3.13): bulletchess will be skipped" >&2
fi

# The benchmark corpus and the same PGN in lichess's framing (pzstd -p10 -19, as lichess compresses its dumps:
# independent frames of 32 MiB of PGN), which compare.py's decode-bound rows read. pzstd -19 is slow (about
# 1 MB/s a core: some 20 CPU-minutes for 1 GB), so make_corpus --pzstd makes it once and keeps it while the
# corpus's sha256 is the one it was made from.
CORPUS=${CORPUS:-1GB}
if [ "$CORPUS" != none ]; then
    if command -v pzstd >/dev/null; then
        "$PYTHON" -m benchmarks.make_corpus --size "$CORPUS" --pzstd \
            || echo "setup: no benchmark corpus (the shared corpus beside the checkout, or FASTPGN_SHARED)" >&2
    else
        echo "setup: no pzstd (apt-get install zstd): the rows in lichess's framing will be skipped" >&2
    fi
fi
