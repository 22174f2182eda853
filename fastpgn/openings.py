"""Field 10 of the 22-field line: the ECO + opening name -> ``CCCNNN`` code map.

The shipped map (``fastpgn/data/openings.tsv``) is built by
``python -m fastpgn openings DIR`` from the lichess chess-openings list
(``a.tsv`` ... ``e.tsv``: eco, name, pgn; public domain). Numbering: within
each ECO code the distinct names are sorted by code point and numbered from
001, so ``C45`` + the 14th C45 name gives ``C45014``. The file uses the
original parser's map format, one ``CCCNNN│CCC│Name`` per line, so a user who
has the original ``openings_map.txt`` can pass it instead and get identical
lines.

Lookups are exact first. For the shipped map a miss falls back to a
normalised name, so that spellings lichess used in older dumps (``Reti`` /
``Réti``, ``Gruenfeld`` / ``Grünfeld``, ``Sorensen`` / ``Sørensen``, ``:`` /
``,``, duplicate names suffixed ``#2``) resolve to the same code. When the
name exists in the list under exactly one other ECO code (older dumps filed
``Scotch Game: Haxo Gambit`` under C45, the list files it under C44), the
name's code is used, so one opening keeps one code across the years. A name
that is still unknown gives ``?``, as the original does. A user-supplied map
is matched exactly, as the original matches it.
"""

from __future__ import annotations

import threading
import unicodedata
from pathlib import Path

from fastpgn.errors import InputError
from fastpgn.lichess import SEP  # the map's separator is the 22-field line's

UNKNOWN = b"?"

_LETTERS = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L",
                          ":": ",", "-": " ", "'": "", "’": ""})


def normalize(name: str) -> str:
    """The spelling-insensitive form of an opening name.

    >>> normalize("Réti Opening") == normalize("Reti Opening")
    True
    >>> normalize("Grünfeld Defense: Exchange Variation") == normalize("Gruenfeld Defense, Exchange Variation")
    True
    """
    text = unicodedata.normalize("NFKD", name.translate(_LETTERS))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    hash_at = text.rfind(" #")
    if hash_at >= 0 and text[hash_at + 2:].isdigit():
        text = text[:hash_at]
    # German transliterations (ue for ü) fold the same way on both sides.
    text = text.replace("ue", "u").replace("oe", "o").replace("ae", "a")
    return " ".join(text.replace(",", " , ").split())


_MISSES = threading.Lock()   # see OpeningMap.__missing__


class OpeningMap(dict):
    """``bytes(ECO + "│" + Opening) -> bytes(code)``; a miss gives ``?`` (and, if fuzzy, tries the normalised name).

    >>> m = OpeningMap.from_lines(["C45014│C45│Scotch Game: Haxo Gambit"], fuzzy=True)
    >>> m["C45│Scotch Game, Haxo Gambit".encode()]
    b'C45014'
    >>> m[b"C45\\xe2\\x94\\x82Nothing"]
    b'?'
    """

    def __init__(self, *args, fuzzy: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fuzzy = fuzzy
        # The spelling-insensitive index, built on the first miss: a dump
        # whose names all match exactly never pays for it.
        self._normal: dict[tuple[str, str], bytes] | None = None
        self._by_name: dict[str, bytes | None] | None = None

    @classmethod
    def from_lines(cls, lines, fuzzy: bool = False) -> OpeningMap:
        """Read the original map format, ``CCCNNN│CCC│Name`` per line."""
        table = cls(fuzzy=fuzzy)
        for raw in lines:
            line = raw.rstrip("\r\n")
            if len(line) < 8 or line[6] != SEP:
                continue
            table.setdefault(line[7:].encode(), line[:6].encode())
        return table

    def _index(self) -> None:
        normal: dict[tuple[str, str], bytes] = {}
        by_name: dict[str, bytes | None] = {}
        for key, code in list(self.items()):
            if code == UNKNOWN:  # a remembered miss, not an entry
                continue
            eco, _, name = key.decode("utf-8", "replace").partition(SEP)
            norm = normalize(name)
            normal.setdefault((eco, norm), code)
            known = by_name.get(norm, code)
            # None marks a name listed under several ECO codes: no unique answer.
            by_name[norm] = code if known == code else None
        self._normal, self._by_name = normal, by_name

    def __missing__(self, key: bytes) -> bytes:
        # The converter's worker threads share one map: a miss (building the index, remembering the answer)
        # is made under a lock, so no thread iterates the map while another adds to it. Hits never get here.
        with _MISSES:
            code = dict.get(self, key)
            if code is not None:
                return code     # another thread answered it meanwhile
            code = UNKNOWN
            if self.fuzzy:
                if self._normal is None:
                    self._index()
                assert self._normal is not None and self._by_name is not None  # _index sets both
                eco, _, name = key.decode("utf-8", "replace").partition(SEP)
                normal = normalize(name)
                code = self._normal.get((eco, normal)) or self._by_name.get(normal) or UNKNOWN
            # Remember the answer: a dump repeats the same few thousand names.
            self[key] = code
            return code

    def __reduce__(self):
        # Pickled to worker processes: the entries and, once built, the normal index.
        return (_rebuild, (dict(self), self.fuzzy, self._normal, self._by_name))


def _rebuild(entries, fuzzy, normal, by_name):
    table = OpeningMap(entries, fuzzy=fuzzy)
    table._normal = normal
    table._by_name = by_name
    return table


def load(path: str | Path | None = None) -> OpeningMap:
    """The shipped map (fuzzy), or a user's map file in the original format (exact)."""
    if path is None:
        # beside this module (importlib.resources would cost every process ~12 ms of imports)
        text = (Path(__file__).parent / "data" / "openings.tsv").read_text("utf-8")
        return OpeningMap.from_lines(text.splitlines(), fuzzy=True)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        raise InputError(f"{path} is not an openings map: not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read the openings map {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if line.strip() and not (len(line) > 11 and line[6] == SEP and line[10] == SEP):
            raise InputError(f"{path} is not an openings map: line {number} is not CCCNNN{SEP}CCC{SEP}Name",
                             line=number)
    if not any(line.strip() for line in lines):
        raise InputError(f"the openings map {path} is empty")
    return OpeningMap.from_lines(lines, fuzzy=False)


def _chess_openings_rows(source_dir: str | Path, columns: list[str]):
    """The rows of the lichess chess-openings TSVs in ``source_dir`` (file by file, in name order), each cut to
    ``columns``, the columns every file must start with."""
    files = sorted(Path(source_dir).glob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"no .tsv files in {source_dir}")
    for path in files:
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            if header[:len(columns)] != columns:
                raise ValueError(f"{path}: expected columns {', '.join(columns)}, ... (got {header})")
            for row in f:
                yield row.rstrip("\n").split("\t")[:len(columns)]


def build(source_dir: str | Path) -> list[str]:
    """Map lines from the lichess chess-openings TSVs (``eco``, ``name``, ``pgn`` columns)."""
    names: dict[str, set[str]] = {}
    for eco, name in _chess_openings_rows(source_dir, ["eco", "name"]):
        names.setdefault(eco, set()).add(name)
    lines = []
    for eco in sorted(names):
        ordered = sorted(names[eco])
        if len(ordered) > 999:
            raise ValueError(f"{eco}: more than 999 openings")
        for number, name in enumerate(ordered, 1):
            lines.append(f"{eco}{number:03d}{SEP}{eco}{SEP}{name}")
    return lines


def positions(source_dir: str | Path) -> list[str]:
    """The named positions of the lichess chess-openings TSVs, one ``EPD<TAB>ECO<TAB>Name`` line each.

    Each line's ``pgn`` is played from the standard start; the position it
    reaches is the opening's (as lichess's explorer classifies a position:
    exactly, by the position, however it was reached). Sorted by EPD; a
    position named twice keeps its first name in file order (lichess's list
    has none).
    """
    from fastpgn.board import Board

    named: dict[str, tuple[str, str]] = {}
    for eco, name, pgn in _chess_openings_rows(source_dir, ["eco", "name", "pgn"]):
        board = Board()
        for token in pgn.split():
            if not token.endswith("."):
                board.push_san(token)
        named.setdefault(" ".join(board.fen().split()[:4]), (eco, name))
    return [f"{epd}\t{eco}\t{name}" for epd, (eco, name) in sorted(named.items())]


_NAMED: dict[int, tuple[str, str]] = {}


def named_positions() -> dict[int, tuple[str, str]]:
    """The shipped named positions (``fastpgn/data/opening-positions.tsv``) by position key: ``(eco, name)``.

    >>> from fastpgn import position_key
    >>> named_positions()[position_key("rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -")]
    ('B20', 'Sicilian Defense')
    """
    if not _NAMED:
        from fastpgn.board import Board

        text = (Path(__file__).parent / "data" / "opening-positions.tsv").read_text("utf-8")
        table = {}
        for line in text.splitlines():
            epd, eco, name = line.split("\t")
            table[Board(epd + " 0 1").zobrist()] = (eco, name)
        _NAMED.update(table)
    return _NAMED
