#!/usr/bin/env bash
# The many-core figures of docs/performance.md ("Past 2 cores"), in one call on a lent many-core machine:
# the converter (lines, Parquet, CSV) at -j 1, 2, 4, 8, 16, the readers at jobs=1 ... 16, and many inputs at
# once, on a 1 GB .pgn.zst (the 100 MB corpus of make_corpus ten times over).
#
# Here, once (pip, and bench-data/lichess-100MB-seed0.pgn.zst from `python -m benchmarks.make_corpus`):
#     benchmarks/device_scaling.sh prepare
# puts what that machine lacks into bench-data/device/ (git-ignored, about 30 MB): the wheels of zstandard
# and isal for its Python 3.12, and the corpus. Then one call of the device tool (the machine has Python
# 3.12 with Cython and pyarrow, a C compiler, and no network), about 8 minutes:
#     command: bash benchmarks/device_scaling.sh run      carry: ["bench-data/device"]      timeout_s: 590
# What comes back under $OUT: scaling.json, readers.json, many.json (when /usr/bin/time is there) and
# log.txt; each step saves its file as it ends, so a run stopped at its limit still returns the steps done.
# To try the run here first: PY=.venv/bin/python WHEELS=no JOBS=1,2 ROUNDS=1 benchmarks/device_scaling.sh run
set -euo pipefail

HERE=bench-data/device
CORPUS=lichess-100MB-seed0.pgn.zst

case "${1:-}" in
prepare)
    if [ ! -f "bench-data/$CORPUS" ]; then
        echo "device_scaling: bench-data/$CORPUS is missing: python -m benchmarks.make_corpus --size 100MB" >&2
        exit 2
    fi
    mkdir -p "$HERE"
    rm -f "$HERE"/*.whl
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$HERE" "zstandard>=0.22" "isal>=1.6"
    cp "bench-data/$CORPUS" "$HERE/"
    du -sh "$HERE"
    ;;
run)
    OUT=${OUT:-/tmp/device-scaling-out}
    mkdir -p "$OUT"
    exec > >(tee "$OUT/log.txt") 2>&1
    export PYTHONUNBUFFERED=1 FASTPGN_IMPLEMENTATION=cython
    py=${PY:-python3}
    if [ "${WHEELS:-yes}" != no ]; then
        "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            "$HERE"/*.whl
        export PYTHONPATH=/tmp/site
    fi
    "$py" setup.py -q build_ext --inplace -j "$(nproc)" > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
    "$py" -c "from fastpgn import scan; assert scan.BACKEND == 'cython', scan.BACKEND"
    echo "== $(nproc) cores, $("$py" --version), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    dump=/tmp/lichess-1GB-x10.pgn.zst
    for _ in $(seq 10); do cat "$HERE/$CORPUS"; done > "$dump"      # zstd frames may follow one another
    jobs=${JOBS:-1,2,4,8,16}
    rounds=${ROUNDS:-3}
    echo "== the converter, $jobs"
    "$py" -m benchmarks.scaling "$dump" --jobs "$jobs" --formats lines,parquet,csv --runs "$rounds" \
        --save "$OUT/scaling.json"
    echo "== the readers, $jobs"
    "$py" -m benchmarks.reader_jobs "$dump" --jobs "$jobs" --rounds "$rounds" --json > "$OUT/readers.json"
    cat "$OUT/readers.json"
    if [ -x /usr/bin/time ]; then
        echo "== many inputs at once"
        "$py" -c "import sys, zstandard; zstandard.ZstdDecompressor().copy_stream(open(sys.argv[1], 'rb'), \
open(sys.argv[2], 'wb'))" "$dump" /tmp/lichess-1GB-x10.pgn
        "$py" -m benchmarks.many_inputs /tmp/lichess-1GB-x10.pgn --pieces 16 --jobs "$(nproc)" \
            --at-once 1,4,16 --processes 4 --runs "$rounds" --save "$OUT/many.json"
    else
        echo "(no /usr/bin/time there: many inputs left out)"
    fi
    ;;
*)
    echo "usage: benchmarks/device_scaling.sh prepare|run (see its first lines)" >&2
    exit 2
    ;;
esac
