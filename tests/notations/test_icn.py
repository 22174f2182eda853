"""Infinite Chess Notation: upstream conformance cases, spec examples, quirk
decisions, error positions and round trips (fastpgn.notations.icn)."""

from __future__ import annotations

import json
import math
import pickle
import re

import pytest
from hypothesis import given, settings, strategies as st

from fastpgn.errors import FormatError
from fastpgn.notations import icn
from helpers import CONFORMANCE, NO_KERNEL, ROOT, shared

ICN_DIR = ("conformance", "001-icn")
CASES_FILE = "icn_conformance_cases.generated.json"


def _load_cases() -> list[dict]:
    # Parametrisation happens at collection time, before any fixture can skip,
    # so an absent corpus yields one placeholder that the test turns into a skip.
    path = CONFORMANCE / "001-icn" / CASES_FILE
    if not path.exists():
        return [{"fn": "absent", "input": None, "output": None}]
    return json.loads(path.read_text(encoding="utf-8"))


CASES = _load_cases()
CASE_IDS = [f"{i:02d}-{c['fn'].split('(')[0]}" for i, c in enumerate(CASES)]


def _run(case: dict, *, lenient: bool = False):
    """Call the fastpgn counterpart of the upstream function the case names."""
    fn, args, arg = case["fn"], case.get("args") or {}, case["input"]
    if fn == "ShortToLong_Format":
        return icn.short_to_long(arg, lenient=lenient)
    if fn == "LongToShort_Format":
        options = {"compact_moves": "compact_moves", "make_new_lines": "make_new_lines",
                   "specifyPosition": "specify_position"}
        return icn.long_to_short(arg, **{options[k]: v for k, v in args.items() if k in options})
    if fn == "LongToShort_Format(ShortToLong_Format(x))":
        return icn.long_to_short(icn.short_to_long(arg, lenient=lenient))
    if fn == "GameToPosition":
        halfmoves = math.inf if args["halfmoves"] == "Infinity" else args["halfmoves"]
        return icn.game_to_position(arg, halfmoves)
    if fn == "LongToShort_Format(GameToPosition(legacy,21))":
        return icn.long_to_short(icn.game_to_position(arg, 21))
    if fn == "ShortToLong_CompactMove":
        return icn.short_to_long_compact_move(arg)
    if fn == "LongToShort_CompactMove":
        return icn.long_to_short_compact_move(arg)
    if fn == "generateSpecialRights":
        return icn.generate_special_rights(arg, args["pawnDoublePush"], args["castleWith"])
    if fn == "LongToShort_Position_FromGamerules":
        return icn.long_to_short_position_from_gamerules(arg, args["pawnDoublePush"], args["castleWith"])
    raise AssertionError(f"no fastpgn counterpart for {fn}")


def _outcome(case: dict, *, lenient: bool = False):
    try:
        return _run(case, lenient=lenient)
    except FormatError as exc:
        assert exc.column is not None or case["fn"] == "LongToShort_Format", "error without a position"
        return FormatError


def _expected_upstream(case: dict):
    out = case["output"]
    return FormatError if isinstance(out, dict) and set(out) == {"error"} else out


_K11_K33 = {"specialRights": {}, "startingPosition": {"1,1": "kingsW", "3,3": "kingsB"},
            "shortposition": "K1,1|k3,3"}
_CHECKMATE = {"winConditions": {"white": ["checkmate"], "black": ["checkmate"]}}

# Where fastpgn's default (strict) reading deliberately differs from upstream;
# the module docstring and docs/icn.md carry the same table. Keyed by input.
FIXED = {
    # a piece letter after whitespace starts the next move, it is no promotion
    "w K1,1|k3,3 1,1>2,2 k3,3>4,4": {
        "gameRules": _CHECKMATE, "metadata": {}, "turn": "white", **_K11_K33,
        "moves": ["1,1>2,2", "3,3>4,4"]},
    # JSON with brackets inside is read whole
    '{"a": [1, 2]} K1,1|k3,3': {
        "gameRules": {"a": [1, 2], **_CHECKMATE}, "metadata": {}, **_K11_K33},
    # a second turn or promotion entry is an error, not a win condition or nothing
    "w b K1,1|k3,3": ("turn given twice", 1, 3),
    "w (8|1) (7|2) K1,1|k3,3": ("promotion ranks given twice", 1, 9),
    # brackets inside a comment are part of the comment
    "K1,1|k3,3 1. K1,1 > 2,2 {comment [x]} | k3,3 > 4,4": {
        "gameRules": _CHECKMATE, "metadata": {}, **_K11_K33, "moves": ["1,1>2,2", "3,3>4,4"]},
    # a tag value ends at its closing quote
    '[Event "A [nested] name"] K1,1': {
        "gameRules": _CHECKMATE, "metadata": {"Event": "A [nested] name"},
        "specialRights": {}, "startingPosition": {"1,1": "kingsW"}, "shortposition": "K1,1"},
}
# A long form without "metadata" is written without a tag section.
FIXED_LONG = {json.dumps({"startingPosition": {"1,1": "kingsW"}, "moves": []}): "K1,1\n\n"}


def _fixed(case: dict):
    if case["fn"] == "ShortToLong_Format" and case["input"] in FIXED:
        return FIXED[case["input"]]
    if case["fn"] == "LongToShort_Format":
        return FIXED_LONG.get(json.dumps(case["input"]))
    return None


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_conformance_case(case):
    shared(*ICN_DIR, CASES_FILE)
    fixed = _fixed(case)
    if isinstance(fixed, tuple):
        reason, line, column = fixed
        with pytest.raises(FormatError, match=reason) as err:
            _run(case)
        assert (err.value.line, err.value.column) == (line, column)
        return
    expected = _expected_upstream(case) if fixed is None else fixed
    assert _outcome(case) == expected


PARSE_CASES = [(c, i) for c, i in zip(CASES, CASE_IDS) if "ShortToLong_Format" in c["fn"] or c["fn"] == "absent"]


@pytest.mark.parametrize("case", [c for c, _ in PARSE_CASES], ids=[i for _, i in PARSE_CASES])
def test_lenient_reads_like_upstream(case):
    """With lenient=True every parsing case gives upstream's output, quirks included."""
    shared(*ICN_DIR, CASES_FILE)
    assert _outcome(case, lenient=True) == _expected_upstream(case)


def test_every_marked_quirk_has_a_documented_decision():
    shared(*ICN_DIR, CASES_FILE)
    doc_path = ROOT / "docs" / "icn.md"
    docs = doc_path.read_text(encoding="utf-8")
    for index, case in enumerate(CASES):
        if case.get("quirk"):
            row = re.compile(rf"^\|?\s*{index}\s", re.MULTILINE)
            assert row.search(icn.__doc__), f"case {index} missing from the module's quirk table"
            assert row.search(docs), f"case {index} missing from docs/icn.md"


# --------------------------------------------------------------------------
# The specification's examples.

SPEC_EXAMPLES = [
    "readme_classical_start_position.icn",
    "readme_classical_after_first_move_4_2-4_4.icn",
    "readme_game_long_version.icn",
    "readme_game_compact_version.icn",
    "readme_piece_list_example.icn",
    "readme_position_before_final_move.icn",
]


def _spec(name: str) -> str:
    return shared(*ICN_DIR, name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", SPEC_EXAMPLES)
def test_spec_example_round_trips(name):
    text = _spec(name)
    game = icn.short_to_long(text)
    assert icn.short_to_long(text, lenient=True) == game
    for compact in (0, 1, 2):
        for new_lines in (True, False):
            again = icn.short_to_long(icn.long_to_short(game, compact, new_lines))
            assert again == game


def test_spec_piece_list_example():
    game = icn.short_to_long(_spec("readme_piece_list_example.icn"))
    assert game["startingPosition"] == {
        "3,4": "kingsW", "3,5": "queensW", "3,7": "pawnsW", "9,4": "rooksW",
        "-2,-10": "kingsB", "-2,-9": "queensB", "-3,5": "rooksB"}
    assert "turn" not in game and "moves" not in game


def test_spec_long_and_compact_game_have_the_same_moves():
    pretty = icn.short_to_long(_spec("readme_game_long_version.icn"))
    compact = icn.short_to_long(_spec("readme_game_compact_version.icn"))
    assert pretty["moves"] == compact["moves"]
    assert pretty["moves"][8] == "2,7>1,8Q" and pretty["moves"][9] == "-4,4>2,-2"
    assert pretty["metadata"]["Round"] == "-"
    assert pretty["gameRules"]["cannotPassTurn"] is True


def test_replaying_compact_moves_reaches_the_spec_position():
    """Captures, en passant (move 5), promotion (9) and castling (14) worked
    out from compact moves give the spec's position before the last move,
    pieces in the same order."""
    game = icn.short_to_long(_spec("readme_game_long_version.icn"))
    before = icn.short_to_long(_spec("readme_position_before_final_move.icn"))
    position = icn.game_to_position(game, 21)
    assert icn.long_to_short_position(position["startingPosition"], position["specialRights"]) \
        == before["shortposition"]
    for key in ("turn", "fullMove", "enpassant", "moveRule"):
        assert position[key] == before[key]
    assert position["moves"] == [] and len(game["moves"]) == 22


def test_legacy_and_compact_replays_agree():
    legacy = json.loads(_spec("formatconverter_selftest_legacy_game.json"))
    compact = dict(legacy, moves=[icn.long_to_short_compact_move(m) for m in legacy["moves"]])
    for halfmoves in (0, 1, 5, 13, 14, 21, math.inf):
        assert icn.game_to_position(compact, halfmoves) == icn.game_to_position(legacy, halfmoves)


def test_usage_page_long_form_writes_the_spec_compact_game():
    game = json.loads(_spec("usage_long_format_example.fixed.json"))
    text = icn.long_to_short(game, compact_moves=2)
    assert text.split("\n\n")[-1] == _spec("readme_game_compact_version.icn").split("\n")[1]


def test_game_to_position_leaves_its_input_alone():
    game = icn.short_to_long("w 0/100 1 P5,2+|K5,1|k5,8 5,2>5,4|5,8>5,7")
    snapshot = json.dumps(game)
    icn.game_to_position(game, math.inf)
    assert json.dumps(game) == snapshot
    assert icn.game_to_position({"startingPosition": {"1,1": "kingsW"}}) == \
        {"startingPosition": {"1,1": "kingsW"}}


# --------------------------------------------------------------------------
# Standard chess maps onto ICN cleanly (the future PGN bridge relies on it).

FILES = "abcdefgh"


def _classical() -> dict:
    """The 8x8 start with files a-h as x 1-8 and ranks as y."""
    position = {}
    back_rank = ("rooks", "knights", "bishops", "queens", "kings", "bishops", "knights", "rooks")
    for x, piece in enumerate(back_rank, start=1):
        position[f"{x},1"], position[f"{x},8"] = piece + "W", piece + "B"
        position[f"{x},2"], position[f"{x},7"] = "pawnsW", "pawnsB"
    return position


def _uci(move: str) -> str:
    """e2e4 / e7e8q -> ICN compact (files a-h -> x 1-8, ranks -> y)."""
    sx, sy, ex, ey = FILES.index(move[0]) + 1, move[1], FILES.index(move[2]) + 1, move[3]
    promotion = move[4:]
    return f"{sx},{sy}>{ex},{ey}{promotion.upper() if ey == '8' else promotion}"


def test_classical_setup_matches_the_spec_start():
    start = icn.short_to_long(_spec("readme_classical_start_position.icn"))
    rights = icn.generate_special_rights(_classical(), True, "rooks")
    assert rights == start["specialRights"]
    assert icn.generate_special_rights(start["startingPosition"], True, "rooks") == start["specialRights"]


def test_standard_game_castles_as_a_king_move_and_promotes_with_a_letter():
    moves = [_uci(m) for m in
             "e2e4 d7d5 e4d5 c7c5 d5c6 g8f6 c6b7 e7e6 b7a8q f8e7 g1f3 e8g8 f1c4 a7a5 e1g1".split()]
    game = {"metadata": {"White": "A", "Black": "B", "Result": "*"}, "turn": "white",
            "moveRule": "0/100", "fullMove": 1,
            "gameRules": {"promotionRanks": [8, 1],
                          "promotionsAllowed": {"white": list(icn._DEFAULT_PROMOTIONS),
                                                "black": list(icn._DEFAULT_PROMOTIONS)},
                          "winConditions": {"white": ["checkmate"], "black": ["checkmate"]}},
            "startingPosition": _classical(),
            "specialRights": icn.generate_special_rights(_classical(), True, "rooks"),
            "moves": moves}
    text = icn.long_to_short(game)
    assert text.startswith('[White "A"]\n[Black "B"]\n[Result "*"]\n\nw 0/100 1 (8|1) R1,1+|')
    assert text.endswith("2,7>1,8Q|6,8>5,7|7,1>6,3|5,8>7,8|6,1>3,4|1,7>1,5|5,1>7,1")
    final = icn.game_to_position(icn.short_to_long(text), math.inf)
    board = final["startingPosition"]
    assert (board["7,1"], board["6,1"], board["7,8"], board["6,8"]) == ("kingsW", "rooksW", "kingsB", "rooksB")
    assert board["1,8"] == "queensW"  # b7xa8=Q
    assert "3,5" not in board and "4,5" not in board  # d5xc6 took the c5 pawn en passant
    assert not any(k in final["specialRights"] for k in ("5,1", "8,1", "5,8", "8,8"))
    assert final["fullMove"] == 8 and final["turn"] == "black" and final["moveRule"] == "1/100"


# --------------------------------------------------------------------------
# Malformed ICN: where the error points.

MALFORMED = [
    ("K1,1|k3,3 %", "unexpected character '%'", 1, 11),
    ("K1,1|zz3,3", "unknown piece abbreviation 'zz'", 1, 6),
    ("K1,1|", "expected a piece letter, found end of text", 1, 6),
    ("K1,1||k3,3", "expected a piece letter, found character '|'", 1, 6),
    ("K1,1|k3,3+x", "unexpected character 'x' in the piece list", 1, 11),
    ("K1,1|k1,1", "two pieces on square 1,1", 1, 6),
    ("K1,1 K2,2", "piece list given twice", 1, 6),
    ("3,4 5,6 K1,1", "en passant square given twice", 1, 5),
    ("2 3 K1,1", "fullmove number given twice", 1, 3),
    ("0/x K1,1", "the move rule must be N/M", 1, 3),
    ("(8|1 K1,1", "expected ')' in the promotion ranks, found whitespace", 1, 5),
    ("(8;Q,zz|1) K1,1", "unknown piece abbreviation 'zz'", 1, 6),
    ("(8) K1,1", "expected '|' in the promotion ranks", 1, 3),
    ("(checkmate|) K1,1", "expected a win condition name", 1, 12),
    ("checkmate3 K1,1", "unexpected character '3' in the win conditions", 1, 10),
    ('{"slideLimit": } K1,1', "extra game rules are not valid JSON", 1, 16),
    ("[1, 2] K1,1", "expected '\"' or ':' after the tag name", 1, 5),
    ('[Event "x] K1,1', "unclosed tag value", 1, 8),
    ("[Event: x K1,1", "unclosed tag '['", 1, 1),
    ("[] K1,1", "expected a tag name", 1, 2),
    ("K1,1\n1. 1,1>2,2 {no end", "unclosed comment", 2, 12),
    ("K1,1\n1,1>", "expected the destination square like 3,4, found end of text", 2, 5),
    ("K1,1\n1,1>2", "expected ',' in the destination square, found end of text", 2, 6),
    ("K1,1|k3", "expected ',' in a square, found end of text", 1, 8),
    ("K1,1\n1,1>2,2=", "expected a piece after '='", 2, 9),
    ("K1,1\n1,1>2,2 0-1", "expected ',' in a square, found character '-'", 2, 10),
    ("K1,1\n1,1>2,2 O-O", "expected a square like 3,4, found character '-'", 2, 10),
    ('K1,1\n1,1>2,2 [Result "1-0"]', "metadata tag after the first move", 2, 9),
    ("K1,1\n1,1>2,2 Q", "expected a square like 3,4, found end of text", 2, 10),
]


@pytest.mark.parametrize("text, reason, line, column", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_icn_names_the_position(text, reason, line, column):
    with pytest.raises(FormatError) as err:
        icn.short_to_long(text)
    assert err.value.reason.startswith(reason)
    assert (err.value.line, err.value.column) == (line, column)
    assert str(err.value).endswith(f"(line {line}, column {column})")
    clone = pickle.loads(pickle.dumps(err.value))
    assert (type(clone), str(clone)) == (FormatError, str(err.value))


def test_lenient_drops_what_it_cannot_read():
    text = "w K1,1|k3,3 %% ?? 1. K1,1 > 2,2 ?! | k3,3 > 4,4 0-1"
    with pytest.raises(FormatError, match="unexpected character '%'"):
        icn.short_to_long(text)
    game = icn.short_to_long(text, lenient=True)
    assert game["moves"] == ["1,1>2,2", "3,3>4,4"]
    assert icn.short_to_long("K1,1 K2,2 3,4 5,6", lenient=True)["startingPosition"] == {"1,1": "kingsW"}


def test_lenient_still_rejects_what_upstream_rejects():
    for text in ("K1,1|zz3,3", "[Event x K1,1", "K1,1 1,1>2,2 {open", '{"a": 1 K1,1'):
        with pytest.raises(FormatError):
            icn.short_to_long(text, lenient=True)


def test_promotion_forms():
    moves = icn.short_to_long(
        "K1,1 1,7>1,8Q|2,2>2,1n|3,7>3,8 =AM+|4,7x5,8= q #|5,7>5,8ha{c}|6,7>6,8 Q7,1>7,2")["moves"]
    assert moves == ["1,7>1,8Q", "2,2>2,1n", "3,7>3,8AM", "4,7>5,8q", "5,7>5,8ha", "6,7>6,8", "7,1>7,2"]


def test_compact_move_errors_name_the_column():
    with pytest.raises(FormatError, match="expected ',' in the destination square") as err:
        icn.short_to_long_compact_move("1,2>3")
    assert err.value.column == 6
    with pytest.raises(FormatError, match="unknown piece abbreviation 'zz'") as err:
        icn.short_to_long_compact_move("1,2>3,4zz")
    assert err.value.column == 8
    with pytest.raises(FormatError, match=r"unexpected character '\+' in a compact move"):
        icn.short_to_long_compact_move("1,2>3,4Q+")


def test_replay_errors_say_which_move():
    with pytest.raises(FormatError, match=r"move 2 \(9,9>9,8\): no piece on 9,9"):
        icn.game_to_position({"startingPosition": {"1,1": "kingsW"}, "moves": ["1,1>1,2", "9,9>9,8"]}, 2)
    with pytest.raises(FormatError, match="no castling partner"):
        icn.game_to_position({"startingPosition": {"5,1": "kingsW"}, "moves": ["5,1>7,1"]}, 1)


def test_long_to_short_rejects_unknown_pieces_and_bad_options():
    with pytest.raises(FormatError, match="unknown piece type 'dragonsW'"):
        icn.long_to_short({"startingPosition": {"1,1": "dragonsW"}})
    with pytest.raises(ValueError, match="compact_moves"):
        icn.long_to_short({}, compact_moves=3)


def test_numbers_are_written_as_javascript_writes_them():
    rules = {"a": 1.0, "b": 0.5, "c": 1e21, "d": 1e-7, "e": 0.000001, "f": -2.5e-10, "g": 1e20,
             "i": "é\n", "j": [True, None]}
    text = icn.long_to_short({"gameRules": rules})
    assert text == ('{"a":1,"b":0.5,"c":1e+21,"d":1e-7,"e":0.000001,"f":-2.5e-10,'
                    '"g":100000000000000000000,"i":"é\\n","j":[true,null]} ')
    # JSON has no Infinity: upstream would write null and read back something else.
    with pytest.raises(FormatError, match=r"^gameRules\.h must be a finite number, not Infinity$"):
        icn.long_to_short({"gameRules": {"h": float("inf")}})


# --------------------------------------------------------------------------
# Round trips: long -> short -> long keeps everything, at every compaction.

COORD = st.integers(min_value=-(10**30), max_value=10**30)
PIECE = st.sampled_from(sorted(icn.PIECE_CODES))
FAMILIES = sorted({name[:-1] for name in icn.PIECE_CODES if not name.endswith("N")})
# "w" and "b" alone read as the turn, in upstream too.
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12).filter(lambda s: s not in "wb")
TAG_KEY = st.text(alphabet=st.characters(exclude_characters='":[]', exclude_categories=("Z", "C")),
                  min_size=1, max_size=10)
TAG_VALUE = st.text(alphabet=st.characters(exclude_characters='"', exclude_categories=("Cs",)), max_size=20)
# JavaScript has one number type: an integral float is written without a
# fraction and reads back as an int, equal to the float only below 2**53.
FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: abs(f) < 2**53 or not f.is_integer())
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | FLOATS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)


@st.composite
def long_games(draw, legacy_moves: bool = False):
    position = draw(st.dictionaries(st.tuples(COORD, COORD).map(lambda c: f"{c[0]},{c[1]}"), PIECE,
                                    min_size=1, max_size=8))
    game = {"gameRules": {}, "metadata": draw(st.dictionaries(TAG_KEY, TAG_VALUE, max_size=4))}
    if draw(st.booleans()):
        game["turn"] = draw(st.sampled_from(["white", "black"]))
    if draw(st.booleans()):
        game["enpassant"] = list(draw(st.tuples(COORD, COORD)))
    if draw(st.booleans()):
        game["moveRule"] = f"{draw(st.integers(0, 200))}/{draw(st.integers(0, 10**20))}"
    if draw(st.booleans()):
        game["fullMove"] = draw(st.integers(1, 10**6))
    rules = game["gameRules"]
    if draw(st.booleans()):
        ranks, allowed = [], {}
        for side in ("white", "black"):
            rank = draw(st.none() | COORD)
            ranks.append(rank)
            pieces = [] if rank is None else draw(st.lists(st.sampled_from(FAMILIES), min_size=1,
                                                            max_size=5, unique=True))
            if sorted(pieces) == sorted(icn._DEFAULT_PROMOTIONS):
                pieces = list(icn._DEFAULT_PROMOTIONS)
            allowed[side] = pieces
        rules["promotionRanks"], rules["promotionsAllowed"] = ranks, allowed
    white = draw(st.lists(NAME, min_size=1, max_size=3))
    black = white if draw(st.booleans()) else draw(st.lists(NAME, min_size=1, max_size=3))
    rules["winConditions"] = {"white": white, "black": list(black)}
    rules.update(draw(st.dictionaries(st.text(max_size=6).filter(lambda k: k not in icn._RESERVED_RULES),
                                      JSONISH, max_size=3)))
    game["specialRights"] = {k: True for k in position if draw(st.booleans())}
    game["startingPosition"] = position
    game["shortposition"] = icn.long_to_short_position(position, game["specialRights"])
    if draw(st.booleans()):
        promotion = st.none() | PIECE
        moves = draw(st.lists(st.tuples(COORD, COORD, COORD, COORD, promotion), min_size=1, max_size=6))
        if legacy_moves:
            game["moves"] = [
                {"type": draw(st.none() | PIECE), "startCoords": [a, b], "endCoords": [c, d],
                 "promotion": p, "captured": draw(st.booleans()), "check": draw(st.booleans()),
                 "mate": draw(st.booleans())} for a, b, c, d, p in moves]
        else:
            game["moves"] = [f"{a},{b}>{c},{d}{icn.PIECE_CODES[p] if p else ''}" for a, b, c, d, p in moves]
    return game


@NO_KERNEL
@settings(max_examples=300, deadline=None)
@given(long_games(), st.sampled_from([0, 1, 2]), st.booleans())
def test_long_short_long_round_trip(game, compact, new_lines):
    assert icn.short_to_long(icn.long_to_short(game, compact, new_lines)) == game


@NO_KERNEL
@settings(max_examples=300, deadline=None)
@given(long_games(legacy_moves=True), st.sampled_from([0, 1, 2]), st.booleans())
def test_every_compaction_of_move_objects_reads_back_as_compact_moves(game, compact, new_lines):
    parsed = icn.short_to_long(icn.long_to_short(game, compact, new_lines))
    assert parsed.get("moves") == (
        [icn.long_to_short_compact_move(m) for m in game["moves"]] if "moves" in game else None)
    assert parsed["startingPosition"] == game["startingPosition"]
    assert parsed["metadata"] == game["metadata"]


@settings(max_examples=200, deadline=None)
@given(st.tuples(COORD, COORD, COORD, COORD), st.none() | PIECE)
def test_single_move_round_trip(coords, promotion):
    move = {"startCoords": list(coords[:2]), "endCoords": list(coords[2:])}
    if promotion:
        move["promotion"] = promotion
    text = icn.long_to_short_compact_move(move)
    assert icn.short_to_long_compact_move(text) == {"compact": text, **move}


# --------------------------------------------------------------------------
# Input that is not ICN at all: every reader fails with a FormatError that
# says what and where, never another exception.

def _nested(depth: int, kind: str):
    """A list or object nested ``depth`` deep, built without recursion."""
    value = None
    for _ in range(depth):
        value = [value] if kind == "[" else {"a": value}
    return value


# json.loads read the numbers (and later code met OverflowError) or failed with
# RecursionError or ValueError; now each is a FormatError at the character.
JSON_LINES = [
    ('{"fullMove": 1e999}', "number too large", 14),
    ('{"a": "1e999", "fullMove": 1e999}', "number too large", 28),  # not the text in the string
    ('{"fullMove": Infinity}', "Infinity is not JSON (JSON has no NaN or Infinity)", 14),
    ('{"fullMove": -Infinity}', "-Infinity is not JSON", 14),
    ('{"fullMove": NaN}', "NaN is not JSON", 14),
    ('{"enpassant": [3, 1e999]}', "number too large", 19),
    ('{"a": "1e999", "fullMove": 1' + "0" * 600 + "}", "number of more than 500 digits", 28),
    ("[" * 100_000, "JSON nested deeper than 64 levels", 65),
    ('{"gameRules": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001, "JSON nested deeper than 64 levels", 393),
    ('{"fullMove": 1} x', "not JSON: Extra data", 17),
]


@pytest.mark.parametrize("line, reason, column", JSON_LINES, ids=[r for _, r, _ in JSON_LINES])
def test_json_lines_json_cannot_hold_are_format_errors(line, reason, column):
    with pytest.raises(FormatError) as err:
        icn._read_json(line)
    assert err.value.reason.startswith(reason)
    assert (err.value.line, err.value.column) == (1, column)


def test_deeply_nested_extra_rules_in_the_short_form_are_a_format_error():
    for opener in ("{", '{"a": ', '{"a": ['):
        text = "w " + opener * 100_000 + " K5,1|k5,8"
        for lenient in (False, True):
            with pytest.raises(FormatError) as err:
                icn.short_to_long(text, lenient=lenient)
            assert err.value.line == 1 and err.value.column >= 3
    with pytest.raises(FormatError, match=r"JSON nested deeper than 63 levels \(line 1, column 66\)"):
        icn.short_to_long("w " + "{" * 64 + "}" * 64 + " K5,1")
    inner = icn.short_to_long('w {"a": ' + "[" * 62 + "]" * 62 + "} K5,1")["gameRules"]["a"]
    for _ in range(61):
        [inner] = inner
    assert inner == []  # 63 levels with the rules' own object: the most allowed


def test_numbers_too_long_to_read_are_format_errors():
    digits = "9" * 501
    for text, column in ((f"K{digits},1", 2), (f"K1,1 1,1>{digits},2", 10), (f"{digits} K1,1", 1),
                         (f"0/{digits} K1,1", 3), (f"({digits}|1) K1,1", 2)):
        for lenient in (False, True):
            with pytest.raises(FormatError, match=r"^number of more than 500 digits") as err:
                icn.short_to_long(text, lenient=lenient)
            assert err.value.column == column, (text[:12], lenient)
    assert icn.short_to_long(f"K{'9' * 500},1")["startingPosition"] == {f"{'9' * 500},1": "kingsW"}


WRONG_SHAPES = [
    ([], "a long form must be an object, not a list"),
    ({"gameRules": []}, "gameRules must be an object, not a list"),
    ({"gameRules": {"promotionRanks": 8}}, "gameRules.promotionRanks must be a list, not 8"),
    ({"gameRules": {"winConditions": {"white": [1]}}}, "gameRules.winConditions.white[0] must be text, not 1"),
    ({"moves": [{"startCoords": [1, 2]}]}, "moves[0] has no endCoords"),
    ({"moves": [{"startCoords": [1, 2], "endCoords": [3, float("inf")]}]},
     "moves[0].endCoords[1] must be a whole number, not Infinity"),
    ({"fullMove": float("inf"), "moves": []}, "fullMove must be a whole number, not Infinity"),
    ({"fullMove": "12"}, "fullMove must be a whole number, not '12'"),
    ({"enpassant": [10**600, 1]}, "enpassant[0] has more than 500 digits"),
    ({"moveRule": 100}, 'moveRule must be text like "0/100", not 100'),
    ({"turn": "w"}, 'turn must be "white" or "black", not \'w\''),
    ({"metadata": {"Event": ["x"]}}, "metadata.Event must be text, not a list"),
    ({"startingPosition": {"a1": "kingsW"}}, 'startingPosition has a key that is not a square like "3,4": \'a1\''),
    ({"startingPosition": {"1,1": 5}}, "startingPosition.1,1 must be a piece name, not 5"),
    ({"gameRules": {"extra": _nested(100, "[")}}, "gameRules.extra[0][0]"),
    ({"gameRules": {"extra": {1: 2}}}, "gameRules.extra has a key that is not text: 1"),
    ({"gameRules": {"extra": {1, 2}}}, "gameRules.extra must be a JSON value, not a set"),
]


@pytest.mark.parametrize("obj, reason", WRONG_SHAPES, ids=[r for _, r in WRONG_SHAPES])
def test_a_wrong_shape_is_a_format_error_naming_the_field(obj, reason):
    from fastpgn.notations import icn_pgn

    with pytest.raises(FormatError) as err:
        icn.long_to_short(obj)
    assert err.value.reason.startswith(reason)
    with pytest.raises(FormatError, match="^" + re.escape(reason)):
        icn.game_to_position(obj, math.inf)
    with pytest.raises(FormatError, match="^not an ICN long form: " + re.escape(reason)):
        icn_pgn.long_to_pgn(obj)


def test_replaying_huge_coordinates_keeps_them_exact():
    far = 10**400
    game = {"startingPosition": {f"1,{far}": "pawnsW"}, "turn": "white", "moves": [f"1,{far}>1,{far + 2}"]}
    after = icn.game_to_position(game, math.inf)
    assert after["enpassant"] == [1, far + 1] and after["startingPosition"] == {f"1,{far + 2}": "pawnsW"}


_SHORT_BASE = ('[Event "x"] w 0/100 1 (8;Q,N|1) {"slideLimit": 16, "a": [1, {"b": null}]} '
               "K5,1+|R8,1+|k5,8|P2,2+|p4,4 5,1>7,1|5,8>5,7 {note} 2,2>2,4|4,4x3,3")
_LEGACY_BASE = {
    "metadata": {"White": "A", "Round": 3}, "turn": "white", "moveRule": "0/100", "fullMove": 1,
    "enpassant": [3, 3],
    "gameRules": {"promotionRanks": [8, None], "promotionsAllowed": {"white": ["queens"], "black": []},
                  "winConditions": {"white": ["checkmate"], "black": ["checkmate"]}, "slideLimit": 16},
    "specialRights": {"5,1": True, "8,1": True},
    "startingPosition": {"5,1": "kingsW", "8,1": "rooksW", "5,8": "kingsB", "2,7": "pawnsW"},
    "moves": [{"type": "kingsW", "startCoords": [5, 1], "endCoords": [7, 1], "castle": {"dir": 1, "coord": [8, 1]}},
              {"type": "kingsB", "startCoords": "5,8", "endCoords": [5, 7], "check": True},
              {"startCoords": [2, 7], "endCoords": [2, 8], "promotion": "queensW", "captured": "pawnsB"}],
}


def _base_long_forms() -> list[dict]:
    """Valid long forms: every one the conformance cases hold (when present), and two of ours."""
    games = [icn.short_to_long(_SHORT_BASE), _LEGACY_BASE]
    seen = set()
    for case in CASES:
        if isinstance(case["input"], dict) and ("Format" in case["fn"] or case["fn"] == "GameToPosition"):
            text = json.dumps(case["input"], sort_keys=True)
            if text not in seen:
                seen.add(text)
                games.append(case["input"])
    return games


BASE_LONG_FORMS = _base_long_forms()


def _paths(value, prefix=()):
    """Every place in a JSON value: the value itself, and every key or index below it."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, prefix + (index,))


def _replaced(value, path, new):
    if not path:
        return new
    copy_ = list(value) if isinstance(value, list) else dict(value)
    copy_[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy_


# Values that tripped readers before: huge and non-finite numbers, deep nesting, wrong types.
WILD = st.one_of(
    st.none(), st.booleans(), st.text(max_size=6), st.floats(),
    st.integers(), st.integers(min_value=-(10**600), max_value=10**600), st.just(10**5000),
    st.sampled_from(["3,4", "-1,0", "x,y", "1e999", "NaN", "5/100", "white", "kingsW", "K1,1", ""]),
    st.tuples(st.sampled_from("[{"), st.integers(1, 3000)).map(lambda t: _nested(t[1], t[0])),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                 max_leaves=5),
)
# The same as JSON text, including what Python's json.loads reads but JSON does not hold.
WILD_TEXT = st.one_of(
    st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1" * 5000, "-" + "9" * 501,
                     "1.5", "[]", "{}", '"x"', "true", "null", "[1e999]", '{"a": NaN}', "1e-999", "0.0"]),
    st.tuples(st.sampled_from(["[", '{"a":']), st.integers(1, 100_000)).map(
        lambda t: t[0] * t[1] + "1" + ("]" if t[0] == "[" else "}") * t[1]),
    st.integers(1, 100_000).map(lambda n: "[" * n),
)
_MARK = "\u0000mark"


def _only_format_errors(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except FormatError as exc:
        assert exc.reason and "Error" not in exc.reason  # says what, not which Python exception
        return None


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(BASE_LONG_FORMS), st.data(), WILD)
def test_a_wrong_value_anywhere_in_a_long_form_is_a_format_error(base, data, value):
    from fastpgn.notations import icn_pgn

    path = data.draw(st.sampled_from(list(_paths(base))))
    game = _replaced(base, path, value)
    _only_format_errors(icn.long_to_short, game, data.draw(st.sampled_from([0, 1, 2])), data.draw(st.booleans()))
    _only_format_errors(icn.game_to_position, game, data.draw(st.sampled_from([0, 1, 3, math.inf])))
    _only_format_errors(icn_pgn.long_to_pgn, game)
    if isinstance(game, dict) and isinstance(game.get("moves"), list):
        for move in game["moves"]:
            _only_format_errors(icn.long_to_short_compact_move, move)
    for key in ("startingPosition", "specialRights"):
        if isinstance(game, dict) and key in game:
            _only_format_errors(icn.long_to_short_position, game[key])
            _only_format_errors(icn.generate_special_rights, game[key], True, "rooks")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(BASE_LONG_FORMS), st.data(), WILD_TEXT)
def test_a_wrong_token_anywhere_in_a_json_line_is_one_reported_line(base, data, token):
    from fastpgn.notations import icn_pgn

    path = data.draw(st.sampled_from(list(_paths(base))))
    line = json.dumps(_replaced(base, path, _MARK)).replace(json.dumps(_MARK), token)
    errors = []
    lines = [line, json.dumps(base)]
    out = list(icn_pgn.icn_to_pgn(lines, form="long", on_error=errors.append))
    assert len(out) + len(errors) == 2
    assert all((e.game, e.line) in ((1, 1), (2, 2)) for e in errors)
    # Each line converts (or is refused) as it does alone: a bad line harms no other.
    alone = [list(icn_pgn.icn_to_pgn([text], form="long", on_error=lambda e: None)) for text in lines]
    assert out == alone[0] + alone[1]
    game = _only_format_errors(icn._read_json, line)
    if game is not None:
        _only_format_errors(icn.long_to_short, game)


SHORT_PIECES = st.sampled_from([
    "[", "]", "{", "}", '"', ":", "(", ")", "|", ";", ",", ".", ">", "x", "=", "+", "#", "!", "?", "-", "/",
    " ", "\n", "w", "b", "K", "q", "ha", "zz", "0", "7", "1,1", "3,3>4,4", "12.", "1e999", "NaN",
    "[Event ", '"v"]', '{"a": ', "checkmate", "(8|1)", "0/100",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 4),
                          st.one_of(st.lists(SHORT_PIECES, max_size=6).map("".join),
                                    st.sampled_from(["9" * 600, "{" * 5000, '{"a":' * 5000, "[" * 5000])),
                ), max_size=4))
def test_a_mangled_short_form_is_a_format_error_with_its_place(edits):
    from fastpgn.notations import icn_pgn

    text = _SHORT_BASE
    for at, cut, piece in edits:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut:]
    for lenient in (False, True):
        try:
            game = icn.short_to_long(text, lenient=lenient)
        except FormatError as exc:
            assert exc.line is not None and exc.column is not None
            assert 1 <= exc.line <= text.count("\n") + 1
        else:
            icn._check_long(game)  # what the reader makes has the shape (so the bridge skips the check)
            _only_format_errors(icn.long_to_short, game)
            _only_format_errors(icn.game_to_position, game, math.inf)
    errors = []
    list(icn_pgn.icn_to_pgn(text.splitlines() + ["w K5,1|k5,8 5,1>5,2"], on_error=errors.append))
    assert all(isinstance(e, FormatError) for e in errors)
