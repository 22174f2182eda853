# C-level entry of the Cython board kernel, for other Cython modules (the scanner).
#
#     from fastpgn.board._board_cy cimport validate_spans
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

from libc.stdint cimport uint64_t

cdef Py_ssize_t validate_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                               const char* fen, Py_ssize_t fenlen, bint chess960) except -1

# uci_spans(buf, limit, spans, nplies, fen, fenlen, chess960, out): the same, writing
# the UCI moves that san_to_uci returns into ``out`` (room for 3 bytes per
# byte of the moves joined by spaces, plus 16) and returning their length.
cdef Py_ssize_t uci_spans(const char* buf, Py_ssize_t limit, const Py_ssize_t* spans, Py_ssize_t nplies,
                          const char* fen, Py_ssize_t fenlen, bint chess960, char* out) except -1

# The same without the GIL (what threads need): spans_board() makes a private
# board (a Python object: keep it while it is used, one per thread);
# play_from(<void*>board, buf, limit, spans, nplies, out, fen, fenlen, chess960)
# replays a game on it from the FEN tag's value (fenlen bytes; NULL: the
# standard start), with Chess960 castling or not, as board.moves_hook() does,
# and returns what validate_spans (out NULL) or uci_spans returns. Nothing is
# raised: -1 when a move does not resolve, -2 when the FEN is not one it reads
# without the GIL (other whitespace, non-ASCII, or an error to word); the
# caller then replays the game with the GIL (the hook, validate_spans or
# uci_spans) for the error or the answer.
cdef object spans_board()

# play_plies: play_from that also notes each ply's position in ``plies`` (NULL: play_from). Per ply i:
# keys[i] the Polyglot key after it (keys not NULL), and its FEN (python-chess's board.fen()) in
# fens[fen_ends[i - 1]:fen_ends[i]] (fens not NULL: room for FEN_ROOM bytes a ply).
cdef enum:
    FEN_ROOM = 112      # the longest FEN _write_fen writes: 71 + 3 + 5 + 3 + 2 * 11, and some
cdef struct Plies:
    uint64_t* keys
    char* fens
    Py_ssize_t* fen_ends
cdef Py_ssize_t play_plies(void* board, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                           Py_ssize_t nplies, char* out, const char* fen, Py_ssize_t fenlen,
                           bint chess960, Plies* plies) noexcept nogil
cdef Py_ssize_t play_from(void* board, const char* buf, Py_ssize_t limit, const Py_ssize_t* spans,
                          Py_ssize_t nplies, char* out, const char* fen, Py_ssize_t fenlen,
                          bint chess960) noexcept nogil
