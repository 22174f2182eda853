# Which start a game declares (FEN, Variant), and replaying its moves on the compiled board.
#
# Included by scan/_scan_cy.pyx (one compiled module, one translation unit: no call
# between the parts costs more than it did in one file). Shared by the sinks that validate or write UCI moves; board.declared_start is the rule, mirrored here.

cdef inline bint _start_tag(const char *p, Py_ssize_t n) noexcept nogil:
    """FEN, SetUp and Variant: the tags that say where a game starts, all a moves hook reads."""
    return ((n == 3 and memcmp(p, b"FEN", 3) == 0) or (n == 5 and memcmp(p, b"SetUp", 5) == 0)
            or (n == 7 and memcmp(p, b"Variant", 7) == 0))


cdef bint _has_start_tags(const char *buf, _Game game) noexcept nogil:
    cdef Py_ssize_t t
    for t in range(game.ntags):
        if _start_tag(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]):
            return True
    return False


cdef int _variant_kind(const char *p, Py_ssize_t n) noexcept nogil:
    """board.declared_start's reading of a Variant value (lowercased, without spaces, '-' or '_'):
    1 Chess960 (it holds "960" or starts "fischerandom"/"fischerrandom"), 0 standard chess (empty,
    "standard", "chess", "normal", "classical", "fromposition"), -1 any other variant."""
    cdef char key[16]
    cdef int h = 0
    cdef char c, last = 0, before = 0
    cdef bint has_960 = False
    cdef Py_ssize_t i
    for i in range(n):
        c = p[i]
        if c == b' ' or c == b'-' or c == b'_':
            continue
        if 65 <= c <= 90:
            c += 32
        if h < 16:
            key[h] = c
        h += 1
        if before == b'9' and last == b'6' and c == b'0':
            has_960 = True
        before, last = last, c
    if (has_960 or (h >= 12 and memcmp(key, b"fischerandom", 12) == 0)
            or (h >= 13 and memcmp(key, b"fischerrandom", 13) == 0)):
        return 1
    if (h == 0 or (h == 8 and memcmp(key, b"standard", 8) == 0) or (h == 5 and memcmp(key, b"chess", 5) == 0)
            or (h == 6 and memcmp(key, b"normal", 6) == 0) or (h == 9 and memcmp(key, b"classical", 9) == 0)
            or (h == 12 and memcmp(key, b"fromposition", 12) == 0)):
        return 0
    return -1


cdef int _start_of(const char *buf, _Game game, const char **fen, Py_ssize_t *fenlen, bint *chess960) noexcept nogil:
    """The start tags as board.moves_hook reads them: the last FEN's value and whether the last
    Variant names Chess960; -1 when one of those values holds an escape or names a variant the
    board does not play (the hook reads it then, and rejects the game).
    """
    cdef Py_ssize_t t, name, vs, ve
    cdef int kind
    for t in range(game.ntags):
        name = game.tags[4 * t]
        vs, ve = game.tags[4 * t + 2], game.tags[4 * t + 3]
        if game.tags[4 * t + 1] - name == 3 and memcmp(buf + name, b"FEN", 3) == 0:
            if memchr(buf + vs, b'\\', ve - vs) != NULL:
                return -1
            fen[0], fenlen[0] = buf + vs, ve - vs
        elif game.tags[4 * t + 1] - name == 7 and memcmp(buf + name, b"Variant", 7) == 0:
            if memchr(buf + vs, b'\\', ve - vs) != NULL:
                return -1
            kind = _variant_kind(buf + vs, ve - vs)
            if kind < 0:
                return -1           # a variant the board does not play: the hook names it
            chess960[0] = kind == 1
    return 0


cdef list _tag_list(const char *buf, _Game game):
    cdef list tags = []
    cdef Py_ssize_t t
    for t in range(game.ntags):
        if _start_tag(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]):
            tags.append((PyBytes_FromStringAndSize(buf + game.tags[4 * t], game.tags[4 * t + 1] - game.tags[4 * t]),
                         _value(buf, game, t)))
    return tags


cdef bytes _joined_moves(const char *buf, _Game game):
    cdef Out out
    out.cap = game.end - game.start + LINE_SLACK  # the moves and their spaces fit in the game's text
    out.size = 0
    out.data = <char *>malloc(out.cap)
    if out.data == NULL:
        raise MemoryError()
    try:
        _wmoves(&out, buf, game)
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        free(out.data)


cdef inline int _uci_room(Out *uci, _Game game) noexcept nogil:
    """``uci`` emptied, with room for the game's UCI moves (at most 3 bytes a byte of the game, as uci_spans
    asks); -1 when memory is short."""
    uci.size = 0
    return _reserve(uci, 3 * (game.end - game.start) + 16)


cdef struct Positions:
    # What the column sink asks of a replay beside the UCI moves: each ply's Polyglot key (keys), its FEN
    # (fens). After a game replays, ``nplies`` keys in key_buf (uint64), the FENs one after another in
    # fen_buf, where each ends in end_buf (Py_ssize_t).
    bint keys, fens
    Out key_buf, fen_buf, end_buf
    Py_ssize_t nplies


cdef int _positions_room(Positions *pos, Py_ssize_t nplies, Plies *plies) noexcept nogil:
    """``pos`` emptied, with room for ``nplies`` plies, and ``plies`` pointing there; -1 when memory is short."""
    pos.key_buf.size = pos.fen_buf.size = pos.end_buf.size = 0
    pos.nplies = 0
    plies.keys, plies.fens, plies.fen_ends = NULL, NULL, NULL
    if pos.keys:
        if _reserve(&pos.key_buf, 8 * nplies + 8) < 0:
            return -1
        plies.keys = <uint64_t *>pos.key_buf.data
    if pos.fens:
        # FEN_ROOM: the board's bound on what _write_fen writes a ply
        if (_reserve(&pos.fen_buf, FEN_ROOM * nplies + 8) < 0
                or _reserve(&pos.end_buf, <Py_ssize_t>sizeof(Py_ssize_t) * (nplies + 1)) < 0):
            return -1
        plies.fens = pos.fen_buf.data
        plies.fen_ends = <Py_ssize_t *>pos.end_buf.data
    return 0


cdef void _positions_free(Positions *pos) noexcept nogil:
    free(pos.key_buf.data)
    free(pos.fen_buf.data)
    free(pos.end_buf.data)


cdef int _positions_from(Positions *pos, list keys, list fens) except -1:
    """The positions of a game finished with the GIL (``keys`` signed, ``fens`` str or None) into ``pos``."""
    cdef Plies plies
    cdef Py_ssize_t i, at = 0
    cdef bytes text
    cdef list texts = [(<str>fen).encode() for fen in fens] if pos.fens else []
    if _positions_room(pos, len(keys), &plies) < 0:
        raise MemoryError()
    if plies.fens != NULL:
        # the room these FENs take, measured on them (the Python board's FENs, not _write_fen's)
        if _reserve(&pos.fen_buf, sum(len(t) for t in texts) + 8) < 0:
            raise MemoryError()
        plies.fens = pos.fen_buf.data
    for i in range(len(keys)):
        if plies.keys != NULL:
            plies.keys[i] = <uint64_t>(<long long>keys[i])
        if plies.fens != NULL:
            text = texts[i]
            memcpy(plies.fens + at, PyBytes_AS_STRING(text), len(text))
            at += len(text)
            plies.fen_ends[i] = at
    pos.nplies = len(keys)
    return 0


cdef object _game_positions(const char *buf, _Game game, bint fens):
    """``(keys, fens)`` of good game ``game`` with the GIL: fastpgn.board.game_positions on its moves and start tags."""
    from fastpgn.board import game_positions
    return game_positions(_joined_moves(buf, game), _tag_list(buf, game), fens)


cdef enum:
    REPLAY_NONE = 0      # no moves hook
    REPLAY_HOOK = 1      # a moves hook to call for every game
    REPLAY_VALIDATE = 2  # board.moves_hook(): every move checked, field 20 stays the SAN
    REPLAY_UCI = 3       # board.moves_hook(uci=True): field 20 becomes the UCI moves


cdef int _replay_game(const char *buf, Py_ssize_t end, _Game game, int replay, bint board_starts, void *board,
                      Out *uci, Positions *pos=NULL) noexcept nogil:
    """Replay good game ``game`` on ``board`` without the GIL, as ``replay`` asks (not REPLAY_NONE).

    With REPLAY_UCI the UCI moves are left in ``uci`` and ``game.moves_text``
    points at them, and with ``pos`` each ply's position in ``pos``. Returns 0 when done, 1 when the game needs Python (a hook
    of one's own; start tags not read here (``board_starts`` False, or an
    unusual value); a move that does not resolve: the caller finishes it with
    _hook_game, for the answer or the error), -1 when memory is short
    (``game.out_of_memory`` set).
    """
    cdef Py_ssize_t replayed, fenlen = 0
    cdef const char *fen = NULL
    cdef bint chess960 = False
    cdef Plies plies
    if replay == REPLAY_HOOK:
        return 1
    if _has_start_tags(buf, game) and (not board_starts or _start_of(buf, game, &fen, &fenlen, &chess960) < 0):
        return 1
    if replay == REPLAY_UCI:
        if _uci_room(uci, game) < 0:
            game.out_of_memory = True
            return -1
        if pos == NULL:
            replayed = play_from(board, buf, end, game.moves, game.nmoves, uci.data, fen, fenlen, chess960)
        else:
            if _positions_room(pos, game.nmoves, &plies) < 0:
                game.out_of_memory = True
                return -1
            replayed = play_plies(board, buf, end, game.moves, game.nmoves, uci.data, fen, fenlen, chess960, &plies)
            pos.nplies = game.nmoves
        game.moves_text = uci.data
        game.moves_len = replayed
    else:
        replayed = play_from(board, buf, end, game.moves, game.nmoves, NULL, fen, fenlen, chess960)
    if replayed < 0:
        game.moves_text = NULL
        return 1
    return 0


cdef object _hook_game(const char *buf, Py_ssize_t end, _Game game, object moves_hook, int replay, Out *uci,
                       list hook_reasons):
    """Finish good game ``game`` with the GIL: field 20 from the moves hook, or from the compiled board
    (``replay``) for a game from the standard start; a ValueError marks the game bad (BAD_HOOK).

    Returns the object field 20 now points into (keep it until the line is written), or None.
    """
    cdef object replaced = None
    try:
        # a game from the standard start: what the hook would do, on the moves where they lie
        if replay == REPLAY_HOOK or _has_start_tags(buf, game):
            replaced = moves_hook(_joined_moves(buf, game), _tag_list(buf, game))
        elif replay == REPLAY_VALIDATE:
            validate_spans(buf, end, game.moves, game.nmoves, NULL, 0, False)
        else:
            if _uci_room(uci, game) < 0:
                raise MemoryError()
            game.moves_len = uci_spans(buf, end, game.moves, game.nmoves, NULL, 0, False, uci.data)
            game.moves_text = uci.data
    except ValueError as exc:
        # the C record quotes the reason by its index in hook_reasons
        game.fail(BAD_HOOK, game.start, len(hook_reasons), 0)
        hook_reasons.append(getattr(exc, "reason", str(exc)))
    else:
        if replaced is not None:  # None: field 20 stays the SAN, as in the twin
            if type(replaced) is not bytes:
                raise TypeError(f"a moves hook returns bytes, not {type(replaced).__name__}")
            game.moves_text = PyBytes_AS_STRING(replaced)
            game.moves_len = PyBytes_GET_SIZE(replaced)
    return replaced
