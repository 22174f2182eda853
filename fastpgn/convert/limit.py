"""The dump converter's ``--limit N``: the run ends with the block that holds the Nth written game.

Only the games up to that one count: those read, rejected and filtered out
after it in the same block are not read as far as the run is concerned (a
resumed or longer run reads them again), and the block's payload is cut
after the Nth game.
"""

from __future__ import annotations

from fastpgn import scan as _scan
from fastpgn.convert.chunks import BlockResult, ChunkFormat
from fastpgn.errors import Rejected

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any


class GameLimit:
    """``--limit limit``: which block ends the run, and what of it counts; ``where`` the run's filter (or None)."""

    def __init__(self, limit: int, fmt: ChunkFormat, where: Any = None) -> None:
        self.limit = limit
        self.format = fmt
        self.where = where
        # Where the last game the run counts ends, once cut has found it: the input's bytes read, for the
        # summary (the reader may have read further ahead).
        self.read_to: int | None = None

    def falls_in(self, written: int, count: int, skip: int) -> bool:
        """Whether the block of ``count`` games written (its first ``skip`` in chunks already) ends the run,
        ``written`` games having been written before it."""
        return written + count - skip >= self.limit

    def cut(self, result: BlockResult, written: int, skip: int, block: Any, data: Any) -> BlockResult:
        """The block's result up to the Nth written game; ``data`` its bytes (None: ``block.data``)."""
        keep = self.limit - written + skip
        if result.filtered:
            read, rejects, filtered = _kept_up_to_line(
                keep, block.data if data is None else data, block.offset, block.at_stream_start, result.rejects,
                _scan.kernel.where_plan(self.where.spec()))
        else:
            (read, rejects), filtered = _games_up_to_line(keep, result.read, result.rejects), 0
        payload, count = result.payload, result.written
        if keep < count:
            payload, count = self.format.split(payload, 0, [keep])[0], keep
        self.read_to = _start_of_game(read + 1, block.data if data is None else data, block.offset,
                                      block.at_stream_start)
        return BlockResult(payload, count, read, rejects, filtered)


def _start_of_game(number: int, data: Any, offset: int, at_stream_start: bool) -> int:
    """The input offset where the block's game ``number`` (from 1) starts, rejected or not; the block's end
    when it holds fewer games."""
    scan = _scan.kernel.games_from_block(data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start)
    starts = [r[0] for r in scan.output if r[1] == number]
    starts += [offset + start for _reason, _at, n, start, _end in scan.rejects if n == number]
    return starts[0] if starts else offset + len(data)


def _games_up_to_line(keep: int, read: int, rejects: list[Rejected]) -> tuple[int, list[Rejected]]:
    """The games of a block up to its ``keep``-th written line: how many, and the rejected among them.

    A block's games are numbered from 1; ``rejects`` holds the rejected
    ones, every other game wrote one line, in order.
    """
    last = keep
    for number in sorted(r.number for r in rejects):
        if number > last:
            break
        last += 1
    return min(last, read), [r for r in rejects if r.number <= last]


def _kept_up_to_line(keep: int, data: Any, offset: int, at_stream_start: bool, rejects: list[Rejected],
                     where: Any) -> tuple[int, list[Rejected], int]:
    """_games_up_to_line for a filtered block: how many games up to its ``keep``-th written line, the
    rejected among them, and the filtered out among them.

    Which games a filter dropped is not in the workers' answer, so the block
    is read again (once a run, where --limit falls) for the numbers of the
    games it kept.
    """
    records = _scan.kernel.games_from_block(data, 0, len(data), base_offset=offset, at_stream_start=at_stream_start,
                                            where=where).output
    rejected = {r.number for r in rejects}    # a moves hook rejects games games_from_block keeps
    written = [r[1] for r in records if r[1] not in rejected]
    last = written[keep - 1] if 0 < keep <= len(written) else (0 if keep <= 0 else None)
    if last is None:
        raise AssertionError("the block holds fewer lines than --limit counts")
    rejects = [r for r in rejects if r.number <= last]
    return last, rejects, last - keep - len(rejects)
