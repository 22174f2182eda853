"""Every position of a dump as Arrow record batches: one row per position, the position before each move.

``read_positions`` reads any source ``read_arrow`` reads, through the same
block machinery (``jobs``, ``errors``, ``where``, rejects and counts), with
the kernels' positions sink (``fastpgn/scan/positions.py``): each game is
replayed once, as ``read_arrow(uci=True)`` replays it (a game whose moves do
not replay is rejected with the same reason), and each position it passes
through becomes a row, its board a ``fixed_size_list<uint8, 64>``. The
game's own columns (``fastpgn.schema``: ``white_elo``, ``result``,
``speed``, ...) are joined to its rows on request; a per-ply one
(``clock``, ``eval_cp``, ``move_seconds``, ...) gives each row the entry of
the move played from the position (null on a final position). The training
columns (``move_id``, ``polyglot``, the mover's result, ratings and eval) and
``mirror`` are made of a block's rows over whole arrays by
``fastpgn.training.labels``, the sink left as it is; the row filters,
samples and splits (``skip_plies``, ``sample``, ``split``, ...) choose a
block's rows over whole arrays too, by ``fastpgn.training.sampling``. The
layout is in docs/training.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastpgn import schema
from fastpgn.arrow import BATCH_SIZE, ArrowReader
from fastpgn.parquet.batches import record_batch
from fastpgn.reader import _RecordReader
from fastpgn.scan import kernel as _kernel
from fastpgn.scan.positions import POSITION_COLUMNS
from fastpgn.training import vocab
from fastpgn.training.labels import LABEL_TYPES, MIRRORED, NEEDS
from fastpgn.training.sampling import Selection

#: The columns ``read_positions`` gives by default, in order.
DEFAULT_COLUMNS = ("game_id", "game_index", "ply", "board", "white_to_move", "castling", "ep_square", "halfmove",
                   "fullmove", "from_square", "to_square", "promotion", "move")
#: The analysis schema's columns with one entry per ply: a row takes the entry of the move played from it.
PER_PLY = frozenset({"moves", "eval_cp", "eval_mate", "clock", "nags", "win_percent", "judgement", "move_seconds"})
# What the rows' own columns are in Arrow (game_index: the game's number among those yielded, from 0)
_TYPES = {"game_index": "int64", "ply": "int16", "board": "board", "white_to_move": "bool", "castling": "uint8",
          "ep_square": "int8", "halfmove": "uint16", "fullmove": "uint16", "from_square": "uint8",
          "to_square": "uint8", "promotion": "uint8", "move": "string"}
_BLOCK_INDEX = "int32"      # game_index as the sink gives it: the game's row in its block
#: The column naming each row's game's split (``splits=``), made here.
SPLIT_COLUMN = "split"


def _row_type(pa, name: str):
    spec = _TYPES[name]
    return pa.list_(pa.uint8(), 64) if spec == "board" else getattr(pa, {"bool": "bool_", "string": "string"}
                                                                         .get(spec, spec))()


class PositionReader(ArrowReader):
    """Iterate ``pyarrow.RecordBatch`` objects of ``batch_size`` positions; see ``read_positions``.

    Counts as the other readers, in games: ``games_read == games_yielded +
    len(rejected) + games_filtered`` (a game ``where``, ``sample_games`` or
    ``split`` or ``games_per_rating_pair`` drops is filtered); ``positions_yielded`` counts the rows and
    ``positions_filtered`` the rows the row filters (``skip_plies``,
    ``max_ply``, ``min_clock``, ``with_eval``, ``sample``) dropped from the
    games yielded.
    """

    def __init__(self, source, batch_size: int = BATCH_SIZE, *, columns=None, final: bool = False,
                 vocabulary: str = "searchless", mirror: bool = False, skip_plies: int = 0,
                 max_ply: int | None = None, min_clock: float | None = None, with_eval: bool = False,
                 sample: float | None = None, sample_games: float | None = None, seed: int = 0,
                 split: str | None = None, splits: dict | None = None, games_per_rating_pair: int | None = None,
                 rating_bins=None, **options) -> None:
        if isinstance(columns, str):
            raise TypeError("columns must be a list of column names, not a string")
        names = DEFAULT_COLUMNS if columns is None else tuple(columns)
        if len(set(names)) != len(names):
            raise ValueError("a column is named twice in columns")
        self.vocabulary = vocab.checked(vocabulary)
        self.mirror = bool(mirror)
        self.final = bool(final)
        self.names = names
        self.selection = Selection.checked(skip_plies, max_ply, min_clock, with_eval, sample, sample_games, seed,
                                           split, splits, split_column=SPLIT_COLUMN in names,
                                           per_rating_pair=games_per_rating_pair, rating_bins=rating_bins)
        self.positions_yielded = 0
        self.positions_filtered = 0
        game = [name for name in names if name not in _TYPES and name not in LABEL_TYPES and name != SPLIT_COLUMN]
        # what the mover's columns and the selection are made of, read though not asked for
        needs = [need for name in names for need in NEEDS.get(name, ())] + list(self.selection.needs())
        game += dict.fromkeys(need for need in needs if need not in game)
        # game_id always: it is cheap, and the chosen columns are checked against the schema there
        super().__init__(source, batch_size, columns=["game_id", *(n for n in game if n != "game_id")], **options)
        self._without_movetext = False     # (the positions are the moves': a Parquet release's movetext is read)

    def _selected_schema(self):
        pa = self._pa
        full = schema.arrow_schema()
        fields = []
        for name in self.names:
            if name in _TYPES:
                fields.append(pa.field(name, _row_type(pa, name)))
            elif name == SPLIT_COLUMN:
                fields.append(pa.field(name, pa.string()))
            elif name in LABEL_TYPES:
                fields.append(pa.field(name, getattr(pa, LABEL_TYPES[name])()))
            else:
                field = full.field(name)
                fields.append(field.with_type(field.type.value_type) if name in PER_PLY else field)
        return pa.schema(fields, metadata=full.metadata)

    def _maker(self):
        return _Rows(self.names, self.columns, self.schema, self.vocabulary, self.mirror, self.selection)

    def _column_blocks(self) -> Iterator[tuple]:
        scanned = _RecordReader._scanned(self, _kernel.positions_from_block, made=self._maker(),
                                         openings=self._table, final=self.final)
        try:
            yield from scanned
        finally:
            scanned.close()

    def _read(self) -> Iterator:
        # (through the class: ``self`` is the reader's weak proxy, which a bound method would make strong)
        return ArrowReader._batched(self, PositionReader._numbered_blocks(self))

    def _yielded(self, batch) -> None:
        self.positions_yielded += batch.num_rows

    def _numbered_blocks(self) -> Iterator:
        """Each block's batch, its games counted and ``game_index`` numbered among the games yielded."""
        at = self.names.index("game_index") if "game_index" in self.names else -1
        counts: dict = {}       # games yielded so far of each pair of rating bins
        cap = self.selection.per_rating_pair
        for batch, games, games_dropped, rows_dropped, capping in PositionReader._column_blocks(self):
            if capping is not None and cap is not None:
                batch, capped = _capped(batch, at, capping, counts, cap)
                games -= capped
                games_dropped += capped
            if at >= 0:
                batch = _numbered(batch, at, self.games_yielded)
            self.games_yielded += games
            self.games_filtered += games_dropped
            self.positions_filtered += rows_dropped
            yield batch


def _capped(batch, at: int, capping: tuple, counts: dict, cap: int) -> tuple:
    """``batch`` without the games over ``cap`` of their pair of rating bins (``counts``: the games of each
    pair kept so far, updated), its ``game_index`` (column ``at``) renumbered; and how many games it left out."""
    import pyarrow as pa

    from fastpgn.training import labels

    np = labels._np()
    pairs, rows_game = capping
    keep = pairs >= 0       # (a game without both ratings has no pair: left out)
    for pair in np.unique(pairs[keep]).tolist():
        games = np.flatnonzero(pairs == pair)
        room = max(cap - counts.get(pair, 0), 0)
        keep[games[room:]] = False
        counts[pair] = counts.get(pair, 0) + min(room, len(games))
    if keep.all():
        return batch, 0
    rows = keep[rows_game]
    if at >= 0:
        batch = batch.filter(pa.array(rows))
        number = pa.array((np.cumsum(keep) - 1)[rows_game[rows]], type=batch.schema.field(at).type)
        batch = batch.set_column(at, batch.schema.field(at), number)
    else:
        batch = batch.filter(pa.array(rows))
    return batch, int(len(keep) - keep.sum())


def _numbered(batch, at: int, base: int):
    """``batch`` with its block's game rows (column ``at``) as the games' numbers among those yielded."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = pc.add(batch.column(at).cast(pa.int64()), pa.scalar(base, pa.int64()))
    return batch.set_column(at, batch.schema.field(at), column)


class _Rows:
    """What makes ``(a RecordBatch of a block's positions, its games yielded, its games and rows the selection
    dropped)`` of the positions sink's output, on the thread that scanned it (holding no reference to the
    reader)."""

    def __init__(self, names: tuple, game_columns: tuple, out_schema, vocabulary: str = "searchless",
                 mirror: bool = False, selection: Selection | None = None) -> None:
        self.names, self.game_columns, self.schema = names, game_columns, out_schema
        self.vocabulary, self.mirror = vocabulary, mirror
        self.selection = Selection() if selection is None else selection
        self.made = [n for n in names if n in LABEL_TYPES] + ([n for n in names if n in MIRRORED] if mirror else [])

    def __call__(self, output: tuple) -> tuple:
        import pyarrow as pa

        games, rows = output
        ids = games["game_id"]
        count = len(ids) if isinstance(ids, list) else ids[0]
        index = _row_array(pa, "game_index", rows["game_index"], pa.int32())
        table = record_batch({name: games[name] for name in self.game_columns}) if count else None
        ply = _row_array(pa, "ply", rows["ply"], pa.int16())
        made = self._training(pa, rows, table, index, ply) if self.made and len(index) else {}
        selection = self.selection
        kept = which = keys = None
        if count and selection.keyed:
            from fastpgn.training import labels

            np = labels._np()
            kept, which, keys = selection.games(pa, np, table)
            if which is not None:
                made[SPLIT_COLUMN] = pa.array([name for name, _ in selection.splits]).take(
                    pa.array(which)).take(index)
        numbered = index
        if kept is not None and selection.by_game:
            # the games kept numbered among themselves, as game_index counts the games yielded
            numbered = pa.array((np.cumsum(kept) - 1)[np.asarray(index.to_numpy())], type=pa.int32())
        arrays = []
        for name, field in zip(self.names, self.schema):
            if name in made:
                arrays.append(made[name])
            elif name == "game_index":
                arrays.append(numbered)
            elif name in _TYPES:
                arrays.append(_row_array(pa, name, rows[name], field.type))
            elif table is None or name in LABEL_TYPES:
                arrays.append(pa.nulls(len(index), field.type))
            elif name in PER_PLY:
                arrays.append(_at_ply(table.column(name), index, ply))
            elif name == SPLIT_COLUMN:
                arrays.append(pa.nulls(len(index), field.type))
            else:
                arrays.append(table.column(name).take(index))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        if not count:
            return batch, count, 0, 0, None
        keep = None
        yielded, games_dropped, rows_dropped = count, 0, 0
        if selection.by_game or selection.by_row:
            batch, yielded, games_dropped, rows_dropped, keep = self._selected(pa, batch, table, index, ply, count,
                                                                               kept, keys)
        capping = None
        if selection.per_rating_pair is not None:
            # (the cap counts games in input order: the reader's thread applies it, from these)
            from fastpgn.training import labels

            np = labels._np()
            pairs = selection.rating_pairs(pa, np, table)
            if kept is not None and selection.by_game:
                pairs = pairs[kept]
            rows_game = np.asarray(numbered.to_numpy(), dtype=np.int64)
            capping = (pairs, rows_game if keep is None else rows_game[keep])
        return batch, yielded, games_dropped, rows_dropped, capping

    def _selected(self, pa, batch, table, index, ply, count: int, kept, keys) -> tuple:
        """``batch`` with the rows the selection keeps, and the counts: games yielded, games and rows dropped."""
        from fastpgn.training import labels

        np = labels._np()
        selection = self.selection
        games = np.asarray(index.to_numpy(), dtype=np.int64)
        in_kept = np.ones(len(games), dtype=bool) if kept is None or not selection.by_game else kept[games]
        yielded = count if kept is None or not selection.by_game else int(kept.sum())
        keep = in_kept
        rows_dropped = 0
        if selection.by_row and len(games):
            wanted = selection.rows(pa, np, table, index, ply, lambda lists, plies: _at_ply(lists, index, plies),
                                    keys)
            rows_dropped = int((in_kept & ~wanted).sum())
            keep = in_kept & wanted
        if not keep.all():
            batch = batch.filter(pa.array(keep))
        return batch, yielded, count - yielded, rows_dropped, keep

    def _training(self, pa, rows: dict, table, index, ply) -> dict:
        """The training columns asked for (and with ``mirror`` the mirrored row columns), over whole arrays."""
        import pyarrow.compute as pc

        from fastpgn.training import labels

        np = labels._np()
        arrays = {name: _row_array(pa, name, rows[name], _row_type(pa, name))
                  for name in ("white_to_move", "castling", "ep_square", "from_square", "to_square", "promotion")}
        board = np.asarray(_row_array(pa, "board", rows["board"], None).values.to_numpy()).reshape(-1, 64)
        moved = np.asarray(arrays["from_square"].is_valid().to_numpy(zero_copy_only=False), dtype=bool)

        def filled(name: str):
            return np.asarray(pc.fill_null(arrays[name], 0).to_numpy(zero_copy_only=False))

        white = np.asarray(arrays["white_to_move"].to_numpy(zero_copy_only=False), dtype=bool)
        frm, to, promotion = filled("from_square"), filled("to_square"), filled("promotion")
        castling, plies = filled("castling"), np.asarray(ply.to_numpy())
        out = {}
        if "move_id" in self.names:
            out["move_id"] = labels.move_ids(pa, self.vocabulary, board, frm.astype(np.int64),
                                             to.astype(np.int64), promotion, white, moved)
        if "polyglot" in self.names:
            start_ep = labels.fen_ep(pa, table.column("fen"))[np.asarray(index.to_numpy())]
            out["polyglot"] = labels.polyglot_keys(pa, board, white, castling, plies, frm, to, start_ep)
        needed = dict.fromkeys(need for name in self.names if name != "polyglot" for need in NEEDS.get(name, ()))
        game = {name: _at_ply(table.column(name), index, ply) if name in PER_PLY else table.column(name).take(index)
                for name in needed}
        out.update(labels.mover_labels(pa, self.names, white, game))
        if self.mirror:
            move = _row_array(pa, "move", rows["move"], pa.string())
            out.update(labels.mirrored(pa, board, white, castling, filled("ep_square"), frm, to, promotion, move,
                                       moved))
        return out


def _row_array(pa, name: str, values, kind):
    """One of the sink's row columns as an Arrow array: a list (the pure sink; ``board`` bytes) or the compiled
    sink's ``(length, null_count, buffers, children)``, wrapped without a copy."""
    if name == "board":
        if isinstance(values, (bytes, bytearray)):
            flat = pa.Array.from_buffers(pa.uint8(), len(values), [None, pa.py_buffer(values)])
        else:
            length, nulls, buffers, children = values[3][0]
            flat = pa.Array.from_buffers(pa.uint8(), length, [None, pa.py_buffer(buffers[1])])
        return pa.FixedSizeListArray.from_arrays(flat, 64)
    if name == "game_index":
        kind = pa.int32()
    if isinstance(values, list):
        return pa.array(values, type=kind)
    length, nulls, buffers, children = values
    return pa.Array.from_buffers(kind, length, [None if b is None else pa.py_buffer(b) for b in buffers],
                                 null_count=nulls)


def _at_ply(lists, index, ply):
    """Per row, entry ``ply`` of its game's list in ``lists`` (row ``index`` of it); null past its end."""
    import pyarrow as pa
    import pyarrow.compute as pc

    starts = lists.offsets.slice(0, len(lists)).take(index).cast(pa.int64())
    lengths = pc.fill_null(pc.list_value_length(lists).take(index), 0)
    inside = pc.less(ply.cast(pa.int64()), lengths.cast(pa.int64()))
    at = pc.if_else(inside, pc.add(starts, ply.cast(pa.int64())), pa.scalar(None, pa.int64()))
    return lists.values.take(at)


def read_positions(source, *, columns=None, where=None, batch_size: int = BATCH_SIZE, jobs: int | None = None,
                   errors: str = "raise", final: bool = False, openings=None, block_size: int | None = None,
                   encoding: str | None = None, vocabulary: str = "searchless", mirror: bool = False,
                   skip_plies: int = 0, max_ply: int | None = None, min_clock: float | None = None,
                   with_eval: bool = False, sample: float | None = None, sample_games: float | None = None,
                   seed: int = 0, split: str | None = None, splits: dict | None = None,
                   games_per_rating_pair: int | None = None, rating_bins=None) -> PositionReader:
    """Iterate the positions of ``source``'s games as ``pyarrow.RecordBatch`` objects: one row per position.

    A row is the position before a move (``ply`` moves played, 0: the game's
    start) and the move played from it; ``final=True`` adds each game's last
    position (its move columns null). ``columns`` names the columns, in order
    (default ``DEFAULT_COLUMNS``): the rows' own (``game_index``, ``ply``,
    ``board`` as ``fixed_size_list<uint8, 64>``, a1 = 0 ... h8 = 63, 0 empty,
    1-6 white P N B R Q K, 7-12 black; ``white_to_move``, ``castling`` bits
    1 K 2 Q 4 k 8 q, ``ep_square`` or -1, ``halfmove``, ``fullmove``,
    ``from_square``, ``to_square``, ``promotion`` 0 or 2-5 N B R Q, ``move``
    in UCI) and any of the analysis schema's (``fastpgn.schema``), each
    game's value on each of its rows; a per-ply one (``clock``, ``eval_cp``,
    ...) gives the entry of the move played from the position. ``source``,
    ``where``, ``errors``, ``jobs``, ``openings`` and ``encoding`` are
    ``read_arrow``'s; a game whose moves do not replay is rejected as
    ``read_arrow(uci=True)`` rejects it. Counts are in games
    (``games_read == games_yielded + len(rejected) + games_filtered``),
    ``positions_yielded`` in rows; the batches are the same for any ``jobs``.

    The training columns (docs/training.md) are asked for by name too:
    ``move_id`` (uint16, the move's id in ``vocabulary``: ``"searchless"``,
    ``"lc0"``, ``"alphazero"`` or ``"maia2"``, as ``fastpgn.training.vocab``
    numbers it; null on a final row), ``polyglot`` (uint64, the position's
    Polyglot key), and from the side to move's view ``result_mover`` (int8: 1
    win, 0 draw, -1 loss, null for ``*``), ``mover_elo``, ``opponent_elo``,
    ``eval_cp_mover`` and ``eval_mate_mover`` (the eval after the row's move).
    ``mirror=True`` shows each Black-to-move row as python-chess's
    ``board.mirror()`` (ranks flipped, colours swapped; ``castling``,
    ``ep_square``, ``from_square``, ``to_square`` and ``move`` with it), so the
    mover is always White on the board; ``white_to_move`` still says who moves.

    Rows are chosen over whole arrays, each as a function of the game and
    the ply alone, so the same rows come out for any ``jobs``, ``batch_size``
    and split of the input into files (docs/training.md, "Filters, samples
    and splits"): ``skip_plies=N`` drops rows with ``ply < N``, ``max_ply=N``
    those with ``ply >= N``; ``min_clock=S`` keeps rows whose mover had more
    than ``S`` seconds before the move (their ``clock`` after their previous
    move, or the base time on their first; a row with no clock is dropped);
    ``with_eval=True`` keeps rows whose move has an eval; ``sample=F`` keeps
    a fraction ``F`` of the rows and ``sample_games=F`` of the games, by a
    hash of ``seed``, the game's id (its byte offset if it has none) and the
    ply; ``split="train"`` keeps the games hashed into that split of
    ``splits`` (default ``{"train": 0.9, "validation": 0.05, "test":
    0.05}``), and the ``split`` column names each row's. A game dropped whole
    (``sample_games``, ``split``) counts in ``games_filtered``; rows the row
    filters drop count in ``positions_filtered`` and their game stays yielded.
    ``games_per_rating_pair=N`` (Maia-2's balancing) yields at most ``N``
    games of each pair of White's and Black's rating bins (``rating_bins``:
    the edges, default Maia-2's 1100, 1200, ... 2000), the first in input
    order after the other game filters; a game without both ratings is left
    out; those left out count in ``games_filtered``.

    >>> pgn = b'[Site "https://lichess.org/abc"]\\n[WhiteElo "1500"]\\n\\n1. e4 { [%clk 0:01:00] } e5 *\\n'
    >>> batch = next(read_positions(pgn, columns=["game_id", "ply", "move", "ep_square", "white_elo", "clock"]))
    >>> batch.to_pydict()
    {'game_id': ['abc', 'abc'], 'ply': [0, 1], 'move': ['e2e4', 'e7e5'], 'ep_square': [-1, -1], \
'white_elo': [1500, 1500], 'clock': [60.0, None]}
    >>> import numpy as np
    >>> board = next(read_positions(pgn, final=True))["board"]
    >>> np.asarray(board.values).reshape(-1, 8, 8)[2][3]    # the fourth rank after 1. e4 e5 (a4 ... h4)
    array([0, 0, 0, 0, 1, 0, 0, 0], dtype=uint8)
    >>> labels = ["move", "move_id", "mover_elo", "result_mover"]
    >>> next(read_positions(pgn, columns=labels, vocabulary="lc0", mirror=True)).to_pydict()
    {'move': ['e2e4', 'e2e4'], 'move_id': [322, 322], 'mover_elo': [1500, None], 'result_mover': [None, None]}
    >>> next(read_positions(pgn, columns=["ply", "split"], skip_plies=1)).to_pydict()
    {'ply': [1], 'split': ['train']}
    """
    options = {} if block_size is None else {"block_size": block_size}
    return PositionReader(source, batch_size, columns=columns, final=final, errors=errors, where=where,
                          openings=openings, encoding=encoding, jobs=jobs, vocabulary=vocabulary, mirror=mirror,
                          skip_plies=skip_plies, max_ply=max_ply, min_clock=min_clock, with_eval=with_eval,
                          sample=sample, sample_games=sample_games, seed=seed, split=split, splits=splits,
                          games_per_rating_pair=games_per_rating_pair, rating_bins=rating_bins, **options)


__all__ = ["DEFAULT_COLUMNS", "PER_PLY", "POSITION_COLUMNS", "SPLIT_COLUMN", "PositionReader", "read_positions"]
