"""Inputs: any source opened as PGN (``sources``), the decompressed stream
(``source``), compressed streams (``zstd``, ``bzip2``), game-aligned blocks
(``blocks``), and lichess's Parquet release read as PGN (``lichess_parquet``);
and the one way fastpgn opens its output files, never through a symbolic link
at a name it makes (``output``)."""
