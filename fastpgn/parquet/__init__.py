"""The Parquet files fastpgn writes: the converter's chunks, ``analyse --format parquet``'s,
``to_parquet``'s file and ``fastpgn.spark.convert``'s. The column sink's output
becomes Arrow arrays (``batches``: its buffers wrapped without a copy); pyarrow
encodes each row group's columns with fastpgn's settings (``settings``) but the
per-ply lists, whose pages the kernel writes (``list_chunks``); row groups
encoded apart, on any thread, are joined into one file in order
(``row_groups``); footers and page headers are Thrift's compact protocol
(``thrift``). Nothing here imports ``fastpgn.arrow``, the face above.
"""
