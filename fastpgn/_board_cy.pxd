# C-level entry of the Cython board kernel, for other Cython modules (the scanner).
#
#     from fastpgn._board_cy cimport validate_spans
#
# validate_spans(buf, limit, spans, nplies, fen, fenlen, chess960) validates
# one game's SAN moves where they lie in a block: ply i is the bytes
# buf[spans[2 * i]:spans[2 * i + 1]] (the scanner's _Game.moves layout:
# neither empty nor holding whitespace), and buf[0:limit] may be read.
# fen is NULL for the standard start, else the FEN tag's value (fenlen bytes,
# UTF-8). It returns the number of plies, or raises what validate_san raises
# on the same moves joined by single spaces (IllegalMoveError,
# AmbiguousMoveError, InvalidFENError: all ValueError) and returns -1. A game
# from the standard start makes no Python object unless it is rejected.

cdef Py_ssize_t validate_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                               const char* fen, Py_ssize_t fenlen, bint chess960) except -1

# uci_spans(buf, limit, spans, nplies, fen, fenlen, chess960, out): the same, writing
# the UCI moves that san_to_uci returns into ``out`` (room for 3 bytes per
# byte of the moves joined by spaces, plus 16) and returning their length.
cdef Py_ssize_t uci_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                          const char* fen, Py_ssize_t fenlen, bint chess960, char* out) except -1

# The same without the GIL, for games from the standard start (what threads
# need): spans_board() makes a private board (a Python object: keep it while
# it is used, one per thread); play_standard(<void*>board, buf, limit, spans,
# nplies, out) replays on it and returns what validate_spans (out NULL) or
# uci_spans returns, or -1 when a move does not resolve; nothing is raised:
# the caller then runs validate_spans / uci_spans on the game, with the GIL,
# for the error.
cdef object spans_board()
cdef Py_ssize_t play_standard(void* board, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                              Py_ssize_t nplies, char* out) noexcept nogil
