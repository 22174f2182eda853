"""The filter flags, one vocabulary for every command that reads games (fastpgn.filters.Where's keywords).

``add_filter_arguments`` adds them to a parser; ``FilterParser`` turns them
into ``args.where`` (a Where, or None when none is given) and words a bad
value as one line naming the flag.
"""

from __future__ import annotations

import argparse

from fastpgn.cli._common import Parser

# The filter flags: flag -> fastpgn.filters.Where keyword (docs/filters.md).
FILTER_FLAGS = {
    "--min-elo": "min_elo", "--max-elo": "max_elo", "--elo-of": "elo_of", "--speed": "speed",
    "--time-control": "time_control", "--since": "since", "--until": "until", "--variant": "variant",
    "--player": "player", "--eco": "eco", "--termination": "termination", "--with-evals": "with_evals",
    "--with-clocks": "with_clocks", "--min-plies": "min_plies", "--max-plies": "max_plies", "--tag": "tags",
}


def _filter_value(flag: str):
    """An argparse type that checks one filter flag's value as fastpgn.filters.Where does."""
    from fastpgn.filters import Where

    field = FILTER_FLAGS[flag]

    def check(text: str) -> str:
        try:
            Where(**{field: [text] if field == "tags" else text})
        except ValueError as exc:
            raise argparse.ArgumentTypeError(_flag_words(str(exc))) from None
        return text

    check.__name__ = flag
    return check


def _flag_words(message: str) -> str:
    """A Where error worded with the flags' names: its leading keyword (``min_elo must ...``), and the one
    it is compared with (``min_elo (2500) is above max_elo (2000)``)."""
    for flag, field in FILTER_FLAGS.items():
        if message.startswith(field + " "):
            message = flag + message[len(field):]
        for word in ("after", "above"):
            message = message.replace(f" is {word} {field} (", f" is {word} {flag} (")
    return message


class FilterParser(Parser):
    """A parser with the filter flags (``add_filter_arguments``): builds ``args.where`` from them; a bad
    filter value is one line, ``NAME: ...`` (NAME: ``name``, else the prog)."""

    def parse_known_args(self, args=None, namespace=None):
        from fastpgn.filters import Where

        args, extra = super().parse_known_args(args, namespace)
        fields = {FILTER_FLAGS[f]: getattr(args, FILTER_FLAGS[f], None) for f in FILTER_FLAGS}
        fields = {k: v for k, v in fields.items() if v not in (None, False, [])}
        if "speed" in fields:
            fields["speed"] = ",".join(fields["speed"])
        if "elo_of" in fields and "min_elo" not in fields and "max_elo" not in fields:
            self.exit(2, f"{self.name}: --elo-of {fields['elo_of']} says whose rating --min-elo and --max-elo "
                         "bound: give one of them too\n")
        try:
            args.where = Where(**fields) if fields else None
        except ValueError as exc:
            self.exit(2, f"{self.name}: {_flag_words(str(exc))}\n")
        return args, extra

    def error(self, message: str):
        for flag in FILTER_FLAGS:
            head = f"argument {flag}: "
            if message.startswith(head):
                rest = message[len(head):]
                self.exit(2, f"{self.name}: {rest if rest.startswith(flag) else f'{flag}: {rest}'}\n")
        super().error(message)


def add_filter_arguments(parser: argparse.ArgumentParser, leave_out: tuple[str, ...] = ()) -> None:
    """The filter flags, as one group of ``parser``'s help; ``leave_out``: flags the command uses otherwise (the
    explorer's ``--max-plies`` is how deep it counts)."""
    flt = _Group(parser.add_argument_group(
        "filters", "write only the games that pass every filter given; the others are counted as filtered out "
                   "(games read = written + rejected + filtered out). The text filters ignore the case of A-Z "
                   "(--termination normal, --eco b2); --tag compares exactly. See docs/filters.md."), leave_out)
    flt.add_argument("--min-elo", type=_filter_value("--min-elo"), metavar="N",
                     help="rating at least N (WhiteElo/BlackElo, per --elo-of)")
    flt.add_argument("--max-elo", type=_filter_value("--max-elo"), metavar="N", help="rating at most N")
    flt.add_argument("--elo-of", choices=("white", "black", "both", "either"), default=None,
                     help="whose rating --min-elo/--max-elo test (default both)")
    flt.add_argument("--speed", type=_filter_value("--speed"), action="append", metavar="SPEED",
                     help="ultraBullet, bullet, blitz, rapid, classical or correspondence, by lichess's rule "
                          "on TimeControl (base + 40 x increment seconds); repeat it or give a comma list")
    flt.add_argument("--time-control", type=_filter_value("--time-control"), metavar="TC",
                     help="TimeControl equal to TC (e.g. 180+2)")
    flt.add_argument("--since", type=_filter_value("--since"), metavar="DATE",
                     help="UTCDate (else Date) on or after DATE (YYYY.MM.DD or YYYY-MM-DD)")
    flt.add_argument("--until", type=_filter_value("--until"), metavar="DATE", help="... on or before DATE")
    flt.add_argument("--variant", type=_filter_value("--variant"), metavar="NAME",
                     help="the Variant tag (Standard when absent)")
    flt.add_argument("--player", type=_filter_value("--player"), metavar="NAME",
                     help="White or Black is NAME")
    flt.add_argument("--eco", type=_filter_value("--eco"), metavar="PREFIX", help="ECO starts with PREFIX (B, b2, B20)")
    flt.add_argument("--termination", type=_filter_value("--termination"), metavar="TEXT",
                     help="Termination equal to TEXT (Normal, Time forfeit, Abandoned, Rules infraction, ...)")
    flt.add_argument("--with-evals", action="store_true", help="only games with a [%%eval] on some ply")
    flt.add_argument("--with-clocks", action="store_true", help="only games with a [%%clk] on some ply")
    flt.add_argument("--min-plies", type=_filter_value("--min-plies"), metavar="N", help="at least N plies")
    flt.add_argument("--max-plies", type=_filter_value("--max-plies"), metavar="N", help="at most N plies")
    flt.add_argument("--tag", type=_filter_value("--tag"), action="append", metavar="NAME=VALUE", dest="tags",
                     help="tag NAME present and equal to VALUE, case included; repeatable (all must hold)")


class _Group:
    """An argument group that leaves out the flags named in ``leave_out``."""

    def __init__(self, group, leave_out: tuple[str, ...]) -> None:
        self.group, self.leave_out = group, leave_out

    def add_argument(self, flag: str, *args, **kwargs) -> None:
        if flag not in self.leave_out:
            self.group.add_argument(flag, *args, **kwargs)


__all__ = ["FILTER_FLAGS", "FilterParser", "add_filter_arguments"]
