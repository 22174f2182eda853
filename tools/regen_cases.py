"""Write tests/cases/*.expected from the live scanner, for review by a human before committing.

Each case file NAME.pgn gets NAME.expected: the 22-field lines, then one
``#reject<TAB>game<TAB>error byte<TAB>reason`` line per rejected game. A case
that also has NAME.uci.expected gets it rewritten: the same, every game
replayed as the converter's ``--uci`` replays it (UCI moves in field 20, a
game whose moves do not replay rejected).
Run: python tools/regen_cases.py  (then read the diff: it is the spec).
"""

from pathlib import Path

from fastpgn import openings, scan as _scan
from fastpgn.board import moves_hook
from fastpgn.reader import read_lines

CASES = Path(__file__).resolve().parent.parent / "tests" / "cases"


def render(path: Path) -> str:
    reader = read_lines(path, errors="skip")
    lines = list(reader)
    out = [line + "\n" for line in lines]
    for bad in reader.rejected:
        out.append(f"#reject\t{bad.number}\t{bad.error_offset}\t{bad.reason}\n")
    return "".join(out)


def render_uci(path: Path) -> str:
    data = path.read_bytes()
    lines, _read, rejects, _ = _scan.kernel.lines_from_block(data, 0, len(data), openings=openings.load(),
                                                             moves_hook=moves_hook(uci=True))
    out = [lines.decode("utf-8")]
    for reason, error_offset, number, _start, _end in rejects:
        out.append(f"#reject\t{number}\t{error_offset}\t{reason}\n")
    return "".join(out)


if __name__ == "__main__":
    for pgn in sorted(CASES.glob("*.pgn")):
        pgn.with_suffix(".expected").write_text(render(pgn), encoding="utf-8")
        if pgn.with_suffix(".uci.expected").exists():
            pgn.with_suffix(".uci.expected").write_text(render_uci(pgn), encoding="utf-8")
        print(pgn.name)
