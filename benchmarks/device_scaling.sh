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
#
# lichess's framing (pzstd -p10 -19: independent frames of 32 MiB), in a call of its own, about 4 minutes:
#     command: bash benchmarks/device_scaling.sh frames   carry: ["bench-data/device"]      timeout_s: 590
# the converter to lines at -j 1 ... 16 with `pzstd -d -p J` in the same rounds, and read_arrow of three header
# columns at jobs=1 ... 16, on the 100 MB corpus's pzstd file ten times over (1 GB, some 30 frames); `prepare`
# copies it (python -m benchmarks.make_corpus --size 100MB --pzstd makes it) and this machine's pzstd, for a
# machine without one. Back under $OUT: frames-scaling.json, frames-readers.json, log.txt. Here, on a small
# file: PY=.venv/bin/python WHEELS=no BUILD=no JOBS=1,2 ROUNDS=1 FRAMED=PATH.pgn.zst benchmarks/device_scaling.sh frames
set -euo pipefail

HERE=bench-data/device
CORPUS=lichess-100MB-seed0.pgn.zst
FRAMED_CORPUS=lichess-100MB-seed0.pgn.pzstd.zst

# The device's set-up, shared by run and frames: the wheels it lacks, the kernels built for it, a check.
device_setup() {
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
    if [ "${BUILD:-yes}" != no ]; then      # BUILD=no: the kernels already built (a try here)
        "$py" setup.py -q build_ext --inplace -j "$(nproc)" > /tmp/build.log 2>&1 \
            || { tail -30 /tmp/build.log; exit 1; }
    fi
    "$py" -c "from fastpgn import scan; assert scan.BACKEND == 'cython', scan.BACKEND"
    echo "== $(nproc) cores, $("$py" --version), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    jobs=${JOBS:-1,2,4,8,16}
    rounds=${ROUNDS:-3}
}

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
    if [ -f "bench-data/$FRAMED_CORPUS" ]; then
        cp "bench-data/$FRAMED_CORPUS" "$HERE/"
        pz=$(command -v pzstd || true)
        [ -z "$pz" ] || cp "$pz" "$HERE/pzstd"      # libc and libstdc++ only: runs where no zstd package is
    else
        echo "device_scaling: no bench-data/$FRAMED_CORPUS (python -m benchmarks.make_corpus --size 100MB" \
             "--pzstd): frames will not run there" >&2
    fi
    du -sh "$HERE"
    ;;
run)
    device_setup
    dump=/tmp/lichess-1GB-x10.pgn.zst
    for _ in $(seq 10); do cat "$HERE/$CORPUS"; done > "$dump"      # zstd frames may follow one another
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
frames)
    framed=${FRAMED:-$HERE/$FRAMED_CORPUS}
    [ -f "$framed" ] || { echo "device_scaling: no $framed (prepare copies it)" >&2; exit 2; }
    pz=$(command -v pzstd || echo "$PWD/$HERE/pzstd")
    [ -x "$pz" ] || { echo "device_scaling: no pzstd here and none in $HERE (prepare copies it)" >&2; exit 2; }
    device_setup
    dump=/tmp/lichess-x10.pgn.pzstd.zst
    # pzstd's files may follow one another: each frame keeps the skippable header that gives its size
    for _ in $(seq 10); do cat "$framed"; done > "$dump"
    echo "== lichess's framing: $(du -h "$dump" | cut -f1), $("$py" -c "import sys; from benchmarks.make_corpus \
import pzstd_frames; print(len(pzstd_frames(sys.argv[1])))" "$dump") frames; the converter and pzstd -d, $jobs"
    "$py" -m benchmarks.scaling "$dump" --jobs "$jobs" --formats lines --pzstd "$pz" --runs "$rounds" \
        --save "$OUT/frames-scaling.json"
    echo "== read_arrow of three header columns, $jobs"
    "$py" -m benchmarks.reader_jobs "$dump" --jobs "$jobs" --readers heads --rounds "$rounds" --json \
        > "$OUT/frames-readers.json"
    cat "$OUT/frames-readers.json"
    ;;
*)
    echo "usage: benchmarks/device_scaling.sh prepare|run|frames (see its first lines)" >&2
    exit 2
    ;;
esac
