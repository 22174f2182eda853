"""Check that Spark reads the converter's gzip chunks whole: every line, 22 fields each.

The chunks are gzip files made of many independent members; the tests read
them back with the gzip command and Python's gzip module, and this script
does it with Spark (too heavy for the test run: pyspark is about 450 MB and
needs Java 17+). It counts the members of each chunk, then reads all chunks
with ``spark.read.text`` in ``local[2]`` and compares lines and fields with
Python's gzip module.

    pip install pyspark
    python -m fastpgn dump.pgn.zst 100000 -o out/
    python tools/spark_check.py out/*.cri.gz
"""

from __future__ import annotations

import argparse
import gzip
import sys
import zlib

SEPARATOR = "\u2502"


def members(path: str) -> int:
    """How many gzip members the file holds."""
    with open(path, "rb") as f:
        data = f.read()
    count = 0
    while data:
        decoder = zlib.decompressobj(31)
        decoder.decompress(data)
        data = decoder.unused_data
        count += 1
    return count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", nargs="+", help="the converter's .cri.gz chunk files")
    args = parser.parse_args(argv)
    try:
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F
    except ImportError:
        print("spark_check: pyspark is not installed (pip install pyspark)", file=sys.stderr)
        return 2
    expected = []
    for path in args.chunks:
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
            expected += f.read().splitlines()
        print(f"{path}: {members(path)} gzip members")
    spark = SparkSession.builder.master("local[2]").appName("fastpgn-spark-check").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        frame = spark.read.text(args.chunks)
        lines = frame.count()
        widths = {row["n"]: row["count"] for row in
                  frame.select(F.size(F.split("value", SEPARATOR)).alias("n")).groupBy("n").count().collect()}
        seen = sorted(row.value for row in frame.collect())
    finally:
        spark.stop()
    print(f"Spark {spark.version}: {lines:,} lines, fields per line {widths}; Python's gzip: {len(expected):,} lines")
    same = seen == sorted(expected)
    print("the same lines" if same else "the lines differ")
    return 0 if same and widths == {22: len(expected)} else 1


if __name__ == "__main__":
    sys.exit(main())
