"""The Parquet files fastpgn writes: the converter's chunks, ``analyse --format parquet``'s,
``to_parquet``'s file and ``fastpgn.spark.convert``'s. pyarrow encodes each row group's columns with
``fastpgn.arrow.parquet_writer``'s settings but the per-ply lists, whose pages
the kernel writes (``list_chunks``); row groups encoded apart, on any thread,
are joined into one file in order (``row_groups``); footers and page headers
are Thrift's compact protocol (``thrift``).
"""
