"""The dump converter's resume state: where an interrupted run goes on, and the record of a finished one.

After each complete chunk the converter saves, as JSON beside the chunks
(``.<input>.fastpgn-state.json``), the options of the run and where the next
chunk starts: the block that holds the boundary, the games of that block
already in chunks, and the counts up to there. A finished run saves its
totals (``complete``) in a hidden record instead (``.<input>.fastpgn-done.json``).
The file is ``{"options": {...}, "progress": {...}}``; its field names are
kept as they are, so a state written by an earlier version still resumes.
A run that ends at damage keeps its state (``--resume`` goes on once the
input is whole) with a ``"damage"`` object beside: the damage's message and
the run's totals, for the folder's readers (``run_record``, the report).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from fastpgn.errors import InputError
from fastpgn.io import output as _output

TYPE_CHECKING = False   # typing's, without importing typing (a reader's start-up)
if TYPE_CHECKING:
    from typing import Any

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


def differences(saved: dict[str, Any], now: dict[str, Any]) -> str:
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


def _shown(value: Any) -> str:
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
    # A multi-frame zstd input decoded on threads: the file byte and decompressed offset of the frame that
    # holds this point, where a resumed run begins decoding (Source.frame_at), and whether movetext came
    # before the point (what the bytes between that frame and this point cannot say: see cut_blocks).
    frame_raw: int = 0
    frame_offset: int = 0
    moves_seen: bool = False


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
    frame_raw: int = 0          # (Tally's; absent from states of one-thread decodes and earlier versions)
    frame_offset: int = 0
    moves_seen: bool = False

    @classmethod
    def load(cls, fingerprint: dict[str, Any], *paths: Path) -> ResumeState | None:
        """The state in the first of ``paths`` that exists, None if none does.

        InputError when it was saved by a run of other options (``fingerprint``) or input.
        """
        for path in paths:
            text = _output.read_own(path)       # (never through a link at its name)
            if text is not None:
                saved = json.loads(text.decode("utf-8"))
                if saved.get("options") != fingerprint:
                    raise InputError(f"the run in {path.parent} was made with other options or from another "
                                     f"input ({differences(saved.get('options') or {}, fingerprint)}); give the "
                                     "same options to resume it, or --overwrite to start over")
                known = {f.name for f in dataclasses.fields(cls)}
                return cls(**{k: v for k, v in saved["progress"].items() if k in known})
        return None

    def save(self, path: Path, fingerprint: dict[str, Any], damage: dict[str, Any] | None = None) -> None:
        """Write the state to ``path`` whole or not at all (a ``.tmp`` renamed; a full disk leaves no half of it);
        ``damage``: the note of a run that ended at damage (``damage_note``)."""
        record = {"options": fingerprint, "progress": self.progress(), **({"damage": damage} if damage else {})}
        _output.replace(path, json.dumps(record, indent=1).encode())

    def progress(self) -> dict[str, Any]:
        """The ``progress`` object of the file, its fields in the order earlier versions wrote them."""
        if self.complete:
            return {"complete": True, "chunk": self.chunk, "games_read": self.games_read,
                    "games_written": self.games_written, "games_rejected": self.games_rejected,
                    "games_filtered": self.games_filtered}
        return {"games_read": self.games_read, "games_rejected": self.games_rejected,
                "rejects_size": self.rejects_size, "games_filtered": self.games_filtered, "chunk": self.chunk,
                "block_offset": self.block_offset, "skip_lines": self.skip_lines,
                "games_written": self.games_written,
                **({"frame_raw": self.frame_raw, "frame_offset": self.frame_offset, "moves_seen": self.moves_seen}
                   if self.frame_offset else {})}

    def tally(self) -> Tally:
        return Tally(self.games_read, self.games_rejected, self.rejects_size, self.games_filtered, self.frame_raw,
                     self.frame_offset, self.moves_seen)

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


def state_name(prefix: str) -> str:
    """The name of the resume state of the input whose chunks are ``PREFIX.part_NNNNNN...``."""
    return f".{prefix}.fastpgn-state.json"


def done_name(prefix: str) -> str:
    """The name of the record of a finished run on that input."""
    return f".{prefix}.fastpgn-done.json"


def damage_note(message: str, totals: ResumeState) -> dict[str, Any]:
    """The ``damage`` object of a run that ended at damage: what the damage is, and what the run counted."""
    return {"message": message, "games_read": totals.games_read, "games_written": totals.games_written,
            "games_rejected": totals.games_rejected, "games_filtered": totals.games_filtered}


@dataclass(frozen=True)
class RunRecord:
    """What an output folder records of one input's conversion.

    ``state``: ``finished`` (the done record's totals), ``damaged`` (the run
    ended at damage: its message and totals) or ``unfinished`` (a state
    without damage: interrupted, or running; no totals, since a checkpoint's
    counts stop at a block's start and its chunks at a chunk boundary).
    """

    state: str
    games_read: int | None = None
    games_written: int | None = None
    games_rejected: int | None = None
    games_filtered: int | None = None
    damage: str | None = None


def run_record(folder: Path, prefix: str) -> RunRecord | None:
    """The record in ``folder`` of the conversion of the input whose chunks are ``PREFIX.part_*``; None when
    there is none (or it cannot be read).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> done = ResumeState(chunk=1, games_read=12, games_written=10, games_rejected=2, complete=True)
    >>> done.save(folder / done_name("x.pgn"), {})
    >>> run_record(folder, "x.pgn")
    RunRecord(state='finished', games_read=12, games_written=10, games_rejected=2, games_filtered=0, damage=None)
    >>> run_record(folder, "y.pgn") is None
    True
    """
    try:
        done = folder / done_name(prefix)
        if done.is_file():
            p = json.loads(done.read_text("utf-8"))["progress"]
            return RunRecord("finished", int(p["games_read"]), int(p["games_written"]), int(p["games_rejected"]),
                             int(p.get("games_filtered", 0)))
        state = folder / state_name(prefix)
        if state.is_file():
            d = json.loads(state.read_text("utf-8")).get("damage")
            if not d:
                return RunRecord("unfinished")
            return RunRecord("damaged", int(d["games_read"]), int(d["games_written"]), int(d["games_rejected"]),
                             int(d["games_filtered"]), str(d["message"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None
