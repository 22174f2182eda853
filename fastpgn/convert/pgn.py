"""``--format pgn``: the kept games written back as PGN, each exactly as the input held it.

An extract (pgn-extract's job): the converter's filters, ``--limit``,
``--validate``, several inputs, ``-o -``, chunks, ``--resume`` and the
rejected-games file work as for every format; each kept game is its input
bytes (``fastpgn.reader.game_text``: from its first byte to the end of its
last line), followed by one blank line in the game's own line end. A
block's games are one gzip member, zstd frame or plain run of bytes, as for
the lines; a chunk is ``NAME.part_NNNNNN.pgn.gz``.
"""

from __future__ import annotations

from fastpgn import scan as _scan
from fastpgn.convert.chunks import BlockResult, ChunkFormat, compress, decompress
from fastpgn.errors import rejected_games
from fastpgn.scan.contract import game_text, line_end

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

SUFFIX = {"gz": ".pgn.gz", "zst": ".pgn.zst", "none": ".pgn"}


class PgnPayload(bytes):
    """A block's compressed games, with the length of each game's text (uncompressed): ``split`` cuts at
    those, whatever the games hold."""

    sizes: tuple[int, ...]

    def __new__(cls, data: bytes, sizes: Any) -> PgnPayload:
        self = super().__new__(cls, data)
        self.sizes = tuple(sizes)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (PgnPayload, (bytes(self), self.sizes))


class PgnFormat(ChunkFormat):
    """The kept games' own text (with ``--validate``, the games that replay legally)."""

    def __init__(self, compression: str = "gz") -> None:
        self.compression = compression
        self.suffix = SUFFIX[compression]

    def block(self, data: Any, offset: int, at_stream_start: bool, setup: Any) -> BlockResult:
        kernel = _scan.kernel
        games, read, rejects, filtered = kernel.games_from_block(
            data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where)
        if setup.hook is not None:
            # --validate: the line sink replays the same games with the moves hook; its rejects are the
            # grammar's and the illegal games', numbered alike.
            _, read, rejects, filtered = kernel.lines_from_block(
                data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start, where=setup.where,
                openings=setup.openings, moves_hook=setup.hook)
            illegal = {number for _, _, number, _, _ in rejects}
            games = [g for g in games if g[1] not in illegal]
        view = memoryview(data)
        texts = [game_text(bytes(view[g[-2]:g[-1]]), g[2].get("Result", "*")) for g in games]
        texts = [t + line_end(t) for t in texts]    # the blank line after a game in its own line end
        rejected = rejected_games(rejects, data, offset)
        payload = PgnPayload(compress(b"".join(texts), self.compression), [len(t) for t in texts])
        return BlockResult(payload, len(texts), read, rejected, filtered)

    def split(self, payload: PgnPayload, skip: int, sizes: list[int]) -> list[PgnPayload]:
        text = decompress(payload, self.compression)
        lengths = payload.sizes
        pieces = []
        at = sum(lengths[:skip])
        i = skip
        for size in sizes:
            part = lengths[i:i + size]
            end = at + sum(part)
            pieces.append(PgnPayload(compress(text[at:end], self.compression), part))
            at, i = end, i + size
        return pieces
