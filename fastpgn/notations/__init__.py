"""The other notations, each a thin converter to and from PGN: compact lichess strings
(``lichess_text``, pgn-transform's), PGN Crypt (``crypt``), the infinite chess
project's ICN (``icn``, ``icn_pgn``)."""
