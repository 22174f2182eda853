"""The position filters, seeded samples and splits of ``read_positions``, decided over whole arrays.

A block's rows and its games' columns come in (numpy and pyarrow arrays, no
loop over rows or games in Python); a mask of the rows and games kept goes
out. Every choice is a function of the game and the ply alone, never of the
block, the batch or the thread, so the same rows come out for any ``jobs``,
``batch_size`` and any split of the input into files.

The hash (docs/training.md, "Filters, samples and splits"), on unsigned 64-bit
integers that wrap::

    mix(z)   = splitmix64's finaliser of z + 0x9E3779B97F4A7C15
    key      = FNV-1a 64 of the game id's UTF-8 bytes; the game's byte_offset when it has no id
    h(x)     = mix(mix(mix(seed) ^ key) ^ x)
    u(x)     = (h(x) >> 11) / 2**53                    (uniform in [0, 1))

``sample`` keeps a row when ``u(ply) < sample``; ``sample_games`` keeps a game
when ``u(GAMES) < sample_games`` and ``splits`` puts a game in the first split
whose running total of fractions is above ``u(SPLIT)``. ``rating_pairs`` gives
each game's pair of rating bins, which ``read_positions`` caps in input order
(``games_per_rating_pair``: a count, not a hash).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

#: The ``x`` of the games' hash for ``sample_games`` and for ``splits`` (no ply is that high).
GAMES = (1 << 64) - 1
SPLIT = (1 << 64) - 2
#: The splits ``split=`` picks from when ``splits`` is not given.
DEFAULT_SPLITS = {"train": 0.9, "validation": 0.05, "test": 0.05}
#: Maia-2's rating bins: below 1100, each 100 from 1100 to 1999, 2000 and above (the edges).
MAIA2_BINS = tuple(range(1100, 2001, 100))
#: Game ids that name no game (PGN's unknown Site): such a game is keyed by its byte offset.
NO_ID = ("", "?")
_FNV_BASIS, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
_MASK = (1 << 64) - 1


def mix_int(z: int) -> int:
    """splitmix64's step on one Python int (the reference the arrays follow).

    >>> hex(mix_int(0))
    '0xe220a8397b1dcdaf'
    """
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def mix(np: Any, z: Any) -> Any:
    """splitmix64's step over a uint64 array."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def game_keys(pa: Any, np: Any, ids: Any, offsets: Any) -> Any:
    """Each game's key (uint64): FNV-1a 64 of its id's bytes, or its byte offset where it has no id."""
    import pyarrow.compute as pc

    ids = ids.cast(pa.string()) if pa.types.is_dictionary(ids.type) else ids
    named = pc.and_(pc.is_valid(ids), pc.invert(pc.fill_null(pc.is_in(ids, value_set=pa.array(NO_ID)), True)))
    text = pc.fill_null(ids, "").cast(pa.large_binary())
    bounds = np.frombuffer(text.buffers()[1], dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    data = np.frombuffer(text.buffers()[2] or b"", dtype=np.uint8)
    starts, lengths = bounds[:-1], np.diff(bounds)
    keys = np.full(len(text), _FNV_BASIS, dtype=np.uint64)
    for at in range(int(lengths.max()) if len(lengths) else 0):     # (a loop over the bytes of an id, not the games)
        live = np.flatnonzero(lengths > at)
        keys[live] = (keys[live] ^ data[starts[live] + at].astype(np.uint64)) * np.uint64(_FNV_PRIME)
    if offsets is None:
        return keys
    offset = np.asarray(pc.fill_null(offsets, 0).cast(pa.int64()).to_numpy(zero_copy_only=False)).astype(np.uint64)
    return np.where(np.asarray(named.to_numpy(zero_copy_only=False), dtype=bool), keys, offset)


def uniform(np: Any, seed: int, keys: Any, x: Any) -> Any:
    """``u(x)`` of the docstring above for games ``keys`` (uint64 arrays; ``x`` an array or an int)."""
    seeded = mix(np, np.array([seed & _MASK], dtype=np.uint64))[0]
    h = mix(np, mix(np, keys ^ seeded) ^ np.asarray(x, dtype=np.uint64))
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def split_of(np: Any, u: Any, splits: dict) -> Any:
    """The index in ``splits`` of each game's split, from its ``u(SPLIT)``."""
    edges = np.cumsum(np.array(list(splits.values()), dtype=np.float64))
    return np.minimum(np.searchsorted(edges, u, side="right"), len(edges) - 1)


@dataclass(frozen=True)
class Selection:
    """What ``read_positions`` keeps of each block: the keywords, checked."""

    skip_plies: int = 0
    max_ply: int | None = None
    min_clock: float | None = None
    with_eval: bool = False
    sample: float | None = None
    sample_games: float | None = None
    seed: int = 0
    split: str | None = None
    splits: tuple = tuple(DEFAULT_SPLITS.items())
    split_column: bool = False
    per_rating_pair: int | None = None
    rating_bins: tuple = MAIA2_BINS

    @classmethod
    def checked(cls, skip_plies=0, max_ply=None, min_clock=None, with_eval=False, sample=None, sample_games=None,
                seed=0, split=None, splits=None, split_column=False, per_rating_pair=None,
                rating_bins=None) -> Selection:
        """The selection, or ``ValueError``/``TypeError`` naming the keyword that is wrong."""
        for name, value in (("skip_plies", skip_plies), ("max_ply", max_ply), ("seed", seed),
                            ("games_per_rating_pair", per_rating_pair)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if skip_plies < 0:
            raise ValueError(f"skip_plies must be 0 or more, not {skip_plies}")
        if per_rating_pair is not None and per_rating_pair < 1:
            raise ValueError(f"games_per_rating_pair must be 1 or more, not {per_rating_pair}")
        bins = MAIA2_BINS if rating_bins is None else tuple(int(edge) for edge in rating_bins)
        if not bins or list(bins) != sorted(set(bins)):
            raise ValueError("rating_bins must be rising ratings: the edges between bins")
        if max_ply is not None and max_ply < 0:
            raise ValueError(f"max_ply must be 0 or more, not {max_ply}")
        if min_clock is not None:
            min_clock = float(min_clock)
        for name, value in (("sample", sample), ("sample_games", sample_games)):
            if value is not None and not 0 < value <= 1:
                raise ValueError(f"{name} must be a fraction above 0 and at most 1, not {value}")
        chosen = dict(DEFAULT_SPLITS if splits is None else splits)
        if not chosen or any(not isinstance(k, str) or not v > 0 for k, v in chosen.items()):
            raise ValueError("splits must map each split's name to a fraction above 0")
        if abs(sum(chosen.values()) - 1) > 1e-9:
            raise ValueError(f"the fractions of splits must add up to 1, not {sum(chosen.values())}")
        if split is not None and split not in chosen:
            raise ValueError(f"split {split!r} is not one of the splits: {', '.join(chosen)}")
        return cls(skip_plies, max_ply, min_clock, bool(with_eval), None if sample is None else float(sample),
                   None if sample_games is None else float(sample_games), seed, split,
                   tuple((k, float(v)) for k, v in chosen.items()), bool(split_column), per_rating_pair, bins)

    @property
    def by_game(self) -> bool:
        """Whether games are dropped whole (they count as ``games_filtered``)."""
        return self.sample_games is not None or self.split is not None

    @property
    def by_row(self) -> bool:
        """Whether rows are dropped inside the games kept (they count as ``positions_filtered``)."""
        return (self.skip_plies > 0 or self.max_ply is not None or self.min_clock is not None or self.with_eval
                or self.sample is not None)

    @property
    def keyed(self) -> bool:
        """Whether the games' keys are needed."""
        return self.by_game or self.sample is not None or self.split_column

    def needs(self) -> tuple:
        """The game columns the selection reads."""
        out = ("game_id",) + (("byte_offset",) if self.keyed else ())
        out += ("clock", "base_seconds") if self.min_clock is not None else ()
        out += ("white_elo", "black_elo") if self.per_rating_pair is not None else ()
        return out + (("eval_cp", "eval_mate") if self.with_eval else ())

    def games(self, pa: Any, np: Any, table: Any) -> tuple:
        """``(kept, split index, keys)`` of the block's games (numpy arrays; None where not asked)."""
        if not self.keyed:
            return None, None, None
        keys = game_keys(pa, np, table.column("game_id"), table.column("byte_offset"))
        kept = np.ones(len(keys), dtype=bool)
        if self.sample_games is not None:
            kept &= uniform(np, self.seed, keys, GAMES) < self.sample_games
        which = None
        if self.split is not None or self.split_column:
            which = split_of(np, uniform(np, self.seed, keys, SPLIT), dict(self.splits))
            if self.split is not None:
                kept &= which == [name for name, _ in self.splits].index(self.split)
        return kept, which, keys

    def rating_pairs(self, pa: Any, np: Any, table: Any) -> Any:
        """Each game's pair of rating bins as one int64 (White's bin * bins + Black's), -1 without both."""
        import pyarrow.compute as pc

        edges = np.array(self.rating_bins, dtype=np.int64)
        found = []
        for name in ("white_elo", "black_elo"):
            column = table.column(name)
            rated = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            elo = np.asarray(pc.fill_null(column, 0).cast(pa.int64()).to_numpy(zero_copy_only=False))
            found.append((np.searchsorted(edges, elo, side="right"), rated))
        (white, white_rated), (black, black_rated) = found
        return np.where(white_rated & black_rated, white * (len(edges) + 1) + black, -1)

    def rows(self, pa: Any, np: Any, table: Any, index: Any, ply: Any, at_ply: Any, keys: Any) -> Any:
        """The mask of the rows kept by the row filters (numpy; rows ``index`` of games ``table``, at ``ply``).

        ``at_ply(column, plies)`` takes a per-ply game column's entry at ``plies``
        for each row; ``keys`` are the games' keys (for ``sample``).
        """
        import pyarrow.compute as pc

        plies = np.asarray(ply.to_numpy(zero_copy_only=False), dtype=np.int64)
        keep = plies >= self.skip_plies
        if self.max_ply is not None:
            keep &= plies < self.max_ply
        if self.with_eval:
            scored = pc.or_(pc.is_valid(at_ply(table.column("eval_cp"), ply)),
                            pc.is_valid(at_ply(table.column("eval_mate"), ply)))
            keep &= np.asarray(pc.fill_null(scored, False).to_numpy(zero_copy_only=False), dtype=bool)
        if self.min_clock is not None:
            keep &= self._clock_before(pa, np, table, index, ply, plies, at_ply) > self.min_clock
        if self.sample is not None:
            rows = np.asarray(index.to_numpy(zero_copy_only=False), dtype=np.int64)
            keep &= uniform(np, self.seed, keys[rows], plies.astype(np.uint64)) < self.sample
        return keep

    @staticmethod
    def _clock_before(pa: Any, np: Any, table: Any, index: Any, ply: Any, plies: Any, at_ply: Any) -> Any:
        """The mover's clock before each row's move (float64; NaN where unknown): its clock after its previous
        move (``clock`` at ply - 2), or on its first move (ply 0 or 1) the base time; unknown where the move
        itself has no clock (a game without clocks, a final row)."""
        import pyarrow.compute as pc

        clocks = table.column("clock")
        earlier = at_ply(clocks, pa.array(np.maximum(plies - 2, 0), type=pa.int64())).cast(pa.float64())
        base = table.column("base_seconds").take(index).cast(pa.float64())
        before = pc.if_else(pa.array(plies >= 2), earlier, base)
        before = pc.if_else(pc.is_valid(at_ply(clocks, ply)), before, pa.scalar(None, pa.float64()))
        return np.asarray(pc.fill_null(before, float("nan")).to_numpy(zero_copy_only=False), dtype=np.float64)
