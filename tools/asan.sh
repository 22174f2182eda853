#!/bin/sh
# Build the compiled kernels with AddressSanitizer in a copy of this tree and run the tests that
# drive them hardest (differential, fuzz, the Parquet release reader) under it. `make asan` runs it.
#
#   tools/asan.sh                      the default tests (ASAN_TESTS below)
#   tools/asan.sh tests/scan/test_scan.py   these instead (any pytest arguments)
#
# A heap or stack error aborts the run with ASan's report (the first bad byte, where it was
# allocated) and a non-zero status. CPython and pyarrow keep memory until exit by design, so
# leak detection is off. The interpreter is not built with ASan, so the runtime is preloaded.
# ASAN_KEEP=1 keeps the copy (its path is printed) to rerun a test by hand.
set -eu

PYTHON=${PYTHON:-python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fastpgn-asan.XXXXXX")
[ -n "${ASAN_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT INT TERM
LIBASAN=$(${CC:-gcc} -print-file-name=libasan.so)
# (libstdc++ loaded first too: else ASan cannot find the real __cxa_throw, and pyarrow's first C++
# exception, a file it cannot read, stops the process with a CHECK failure)
LIBSTDCXX=$(${CC:-gcc} -print-file-name=libstdc++.so)
if [ ! -e "$LIBASAN" ]; then
    echo "asan: no libasan.so next to ${CC:-gcc} (install the compiler's AddressSanitizer runtime)" >&2
    exit 2
fi

# The tree as it is now (tracked files and new ones git does not ignore), without built kernels.
cd "$ROOT"
git ls-files -z --cached --others --exclude-standard | (cd "$ROOT" && tar --null -T - -cf -) | tar -xf - -C "$WORK"
cd "$WORK"
echo "asan: building the kernels with -fsanitize=address in $WORK" >&2
CFLAGS="-fsanitize=address -fno-omit-frame-pointer -g -O1" LDFLAGS="-fsanitize=address" \
    FASTPGN_IMPLEMENTATION=cython "$PYTHON" setup.py -q build_ext --inplace -j "${JOBS:-2}" >build.log 2>&1 \
    || { tail -30 build.log >&2; exit 2; }
nm -D fastpgn/scan/_scan_cy*.so | grep -q __asan_report || { echo "asan: the kernels were built without ASan" >&2; exit 2; }

ASAN_TESTS="tests/scan/test_release_differential.py tests/io/test_lichess_parquet.py tests/scan/test_differential.py
    tests/scan/test_columns_differential.py tests/scan/test_csv_sink.py tests/notations/test_compact_differential.py
    tests/board/test_board_differential.py tests/scan/test_scan.py tests/io/test_sources.py tests/test_reader.py
    tests/test_positions.py tests/test_reader_jobs.py tests/scan/test_site_nags.py tests/scan/test_dialects.py
    tests/test_writer.py tests/parquet/test_list_chunks.py tests/convert/test_output_formats.py
    tests/scan/test_positions_differential.py tests/training/test_read_positions.py
    --deselect tests/test_positions.py::test_spark_reads_the_keys_and_runs_the_docs_query"
[ $# -gt 0 ] || set -- $ASAN_TESTS
echo "asan: $*" >&2
# --capture=sys: pytest leaves file descriptor 2 alone, so ASan's report, written there as the process
# dies, is not lost with pytest's captured output.
# The compiled backend, checked to be the one that ran (a fallback to pure Python would prove nothing).
LD_PRELOAD="$LIBASAN $LIBSTDCXX" ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:${ASAN_OPTIONS:-}" \
    FASTPGN_IMPLEMENTATION=cython PYTHONPATH="$WORK" FASTPGN_SHARED="${FASTPGN_SHARED:-$ROOT/../shared}" \
    "$PYTHON" -c 'import sys, fastpgn, pytest; assert fastpgn.BACKEND == "cython", fastpgn.BACKEND; sys.exit(pytest.main(["-q", "-x", "--capture=sys", "-p", "no:cacheprovider", *sys.argv[1:]]))' "$@"
