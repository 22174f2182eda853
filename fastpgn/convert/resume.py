"""The dump converter's resume state: where an interrupted run goes on, and the record of a finished one.

After each complete chunk the converter saves, as JSON beside the chunks
(``.<input>.fastpgn-state.json``), the options of the run and where the next
chunk starts: the block that holds the boundary, the games of that block
already in chunks, and the counts up to there. A finished run saves its
totals (``complete``) in a hidden record instead (``.<input>.fastpgn-done.json``).
The file is ``{"options": {...}, "progress": {...}}``; its field names are
kept as they are, so a state written by an earlier version still resumes.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from fastpgn.errors import InputError

STATE_VERSION = 1


# A resume state's option (the converter's fingerprint) as the command line names it, and its value when the
# state leaves it out (a default).
_OPTION_NAMES = {
    "version": ("the state's version", None), "input": ("the input", None),
    "input_size": ("the input's size in bytes", None), "chunk_size": ("CHUNK_SIZE", None),
    "compression": ("--compression", None), "limit": ("--limit", None),
    "openings_map": ("--openings-map", None), "validate": ("--validate", False), "uci": ("--uci", False),
    "block_size": ("the block size", None), "gzip": ("the gzip library", None), "format": ("--format", "lines"),
    "partition": ("--partition", None), "positions": ("--positions", False), "fens": ("--fens", False),
    "encoding": ("--encoding", None),
}


def differences(saved: dict, now: dict) -> str:
    """How the options of a saved run differ from this run's: each option by its command-line name, its
    value then and now (a filter by its flag).

    >>> differences({"chunk_size": 100, "compression": "gz"}, {"chunk_size": 100, "compression": "zst"})
    '--compression gz then, zst now'
    >>> differences({"where": {"min_elo": 2000}}, {"where": {"min_elo": 2000, "speed": ["blitz"]}})
    '--speed none then, blitz now'
    """
    found = []
    others = sorted((saved.keys() | now.keys()) - _OPTION_NAMES.keys() - {"where"})
    for key in [*_OPTION_NAMES, *others]:
        name, default = _OPTION_NAMES.get(key, (key, None))
        then, current = saved.get(key, default), now.get(key, default)
        if then != current:
            found.append(f"{name} {_shown(then)} then, {_shown(current)} now")
    filters_then, filters_now = saved.get("where") or {}, now.get("where") or {}
    for field in sorted(filters_then.keys() | filters_now.keys()):
        if filters_then.get(field) != filters_now.get(field):
            flag = "--tag" if field == "tags" else "--" + field.replace("_", "-")
            found.append(f"{flag} {_shown(filters_then.get(field))} then, {_shown(filters_now.get(field))} now")
    return "; ".join(found)


def _shown(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):       # --speed's names, --tag's pairs
        return ",".join("=".join(v) if isinstance(v, list) else str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Tally:
    """The counts up to a point of the input, as the resume state records them."""

    games_read: int = 0
    games_rejected: int = 0
    rejects_size: int = 0       # bytes of ``_<input>.rejected.pgn``: a resumed run cuts the file back to this
    games_filtered: int = 0


@dataclass
class ResumeState:
    """Where a run stands: the next chunk, the block it starts in, and the counts up to there.

    ``block_offset`` is the decompressed offset of the block that holds the
    boundary and ``skip_lines`` the games of that block already in chunks;
    a finished run's record (``complete``) holds the totals only.

    >>> s = ResumeState.checkpoint(chunk=3, games_written=300, start=1000, end=2000, lines_done=40, count=90,
    ...                            before=Tally(310, 2, 700, 0), after=Tally(402, 2, 700, 0))
    >>> s.chunk, s.block_offset, s.skip_lines, s.games_read
    (3, 1000, 40, 310)
    """

    chunk: int = 0
    block_offset: int = 0
    skip_lines: int = 0
    games_read: int = 0
    games_written: int = 0
    games_rejected: int = 0
    rejects_size: int = 0
    games_filtered: int = 0     # absent from states saved before filters existed: none then
    complete: bool = False

    @classmethod
    def load(cls, fingerprint: dict, *paths: Path) -> ResumeState | None:
        """The state in the first of ``paths`` that exists, None if none does.

        InputError when it was saved by a run of other options (``fingerprint``) or input.
        """
        for path in paths:
            if path.exists():
                saved = json.loads(path.read_text("utf-8"))
                if saved.get("options") != fingerprint:
                    raise InputError(f"the run in {path.parent} was made with other options or from another "
                                     f"input ({differences(saved.get('options') or {}, fingerprint)}); give the "
                                     "same options to resume it, or --overwrite to start over")
                known = {f.name for f in dataclasses.fields(cls)}
                return cls(**{k: v for k, v in saved["progress"].items() if k in known})
        return None

    def save(self, path: Path, fingerprint: dict) -> None:
        """Write the state to ``path`` whole or not at all (a ``.tmp`` renamed)."""
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"options": fingerprint, "progress": self.progress()}, indent=1), "utf-8")
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)     # a full disk: no half-written state left beside the chunks
            raise

    def progress(self) -> dict:
        """The ``progress`` object of the file, its fields in the order earlier versions wrote them."""
        if self.complete:
            return {"complete": True, "chunk": self.chunk, "games_read": self.games_read,
                    "games_written": self.games_written, "games_rejected": self.games_rejected,
                    "games_filtered": self.games_filtered}
        return {"games_read": self.games_read, "games_rejected": self.games_rejected,
                "rejects_size": self.rejects_size, "games_filtered": self.games_filtered, "chunk": self.chunk,
                "block_offset": self.block_offset, "skip_lines": self.skip_lines,
                "games_written": self.games_written}

    def tally(self) -> Tally:
        return Tally(self.games_read, self.games_rejected, self.rejects_size, self.games_filtered)

    @classmethod
    def checkpoint(cls, *, chunk: int, games_written: int, start: int, end: int, lines_done: int, count: int,
                   before: Tally, after: Tally) -> ResumeState:
        """The state once chunk ``chunk - 1`` is complete, ``lines_done`` of the ``count`` games of the
        block at input bytes ``start``..``end`` in chunks; ``before``/``after`` are the counts before
        and after that block."""
        if lines_done == count:
            # The boundary is this block's end: resume at the next block.
            return cls(chunk=chunk, block_offset=end, skip_lines=0, games_written=games_written,
                       **dataclasses.asdict(after))
        # The boundary is inside this block: resume at it and skip the games already written.
        return cls(chunk=chunk, block_offset=start, skip_lines=lines_done, games_written=games_written,
                   **dataclasses.asdict(before))
