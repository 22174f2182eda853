"""Write tests/cases/*.expected from the live scanner, for review by a human before committing.

Each case file NAME.pgn gets NAME.expected: the 22-field lines, then one
``#reject<TAB>game<TAB>error byte<TAB>reason`` line per rejected game.
Run: python tools/regen_cases.py  (then read the diff: it is the spec).
"""

from pathlib import Path

from fastpgn.reader import read_lines

CASES = Path(__file__).resolve().parent.parent / "tests" / "cases"


def render(path: Path) -> str:
    reader = read_lines(path, errors="skip")
    lines = list(reader)
    out = [line + "\n" for line in lines]
    for bad in reader.rejected:
        out.append(f"#reject\t{bad.number}\t{bad.error_offset}\t{bad.reason}\n")
    return "".join(out)


if __name__ == "__main__":
    for pgn in sorted(CASES.glob("*.pgn")):
        pgn.with_suffix(".expected").write_text(render(pgn), encoding="utf-8")
        print(pgn.name)
