"""``arena runs``: the runs catalog (``report.runs``): list, show, compare and remove runs.

Why one module: the four subcommands print the same records (``report.runs.RunRecord``)
with the same cells and table layout; only what they select differs. S, R and MDD are
written with every digit (``ratio_pct``), as the report writes them, so S = R - MDD adds up.

A run directory may come from anywhere (copied from someone, report.json edited by hand),
so every text it gives the terminal (entry, strategy and parameter names, the verdict's
words, its data's names) is printed without its control characters (``printable``): none
can move the cursor, recolour the terminal or rewrite a line already shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from arena_tui.report.layout import terminal_width, wrap
from arena_tui.report.runs import (
    ANSWERS,
    Catalog,
    RunRecord,
    RunsError,
    default_root,
    differing_params,
    index_path,
    read_run,
    removable,
    remove_run,
    same_data,
)
from arena_tui.report.table import usd
from arena_tui.util.errors import fail
from arena_tui.util.human import plural, ratio_pct, utc_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt

app = typer.Typer(
    help="The runs catalog: every run directory under the data directory's runs/ (and "
    "folders you name), indexed in SQLite (runs.sqlite in the data directory) and rebuilt "
    "from the directories whenever it is read.",
    no_args_is_help=True,
)

DirsArg = Annotated[
    list[Path],
    typer.Argument(metavar="DIR", help="Run directories.", file_okay=False, show_default=False),
]


# C0 and C1 control characters and DEL (escape sequences start with one), and the bidi
# controls that reorder what follows them on the line
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
LABELS = {"ranked": "ranked?", "money": "money? ", "skill": "skill? ", "floor": "floor: "}


def printable(text: str) -> str:
    """``text`` without control characters: what a run says, safe to print."""
    return _CONTROL.sub("", text)


def _echo(lines: Sequence[str]) -> None:
    typer.echo("\n".join(printable(line) for line in lines))


def _when(ms: int) -> str:
    return utc_ms(ms)[:16]


def _params_text(params: dict[str, Any] | None, only: Sequence[str] | None = None) -> str:
    if not params:
        return "-"
    keys = list(params) if only is None else [k for k in only if k in params]
    return " ".join(f"{k}={json.dumps(params[k])}" for k in keys) or "-"


PARAMS_WIDTH = 48  # the list's parameters cell; arena runs show prints them all


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(value: int | None, fmt: Any) -> str:
    return "-" if value is None else str(fmt(value))


def _table(head: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    rows = [[printable(c) for c in r] for r in rows]  # measured as they will be printed
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(head), *(line(r) for r in rows)]


def _record(path: Path) -> RunRecord:
    try:
        return read_run(path)
    except RunsError as exc:
        fail(str(exc))


@app.command("list")
def list_command(
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[DIR]...",
            help="Folders to look for runs in (and remember). Default: every run indexed "
            "(a run is indexed as it is written) and those under the data directory's runs/.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first: when, strategy, parameters, data, S, verdict.

    The verdict in a few words: would it be ranked, does it make money, is it
    skill (a run written before these three questions: its verdict as it was).

    The index (runs.sqlite in the data directory) is brought up to date first: a
    run changed since it was indexed is read again, one deleted is dropped.

    Example: [cyan]arena runs list runs/ --json[/]
    """
    for d in dirs or []:
        if not d.is_dir():
            fail(f"{d}: not a directory")
    with Catalog() as cat:
        records = cat.refresh(dirs or [])
    if as_json:
        typer.echo(dumps([r.doc() for r in records]))
        return
    if not records:
        where = ", ".join(str(d) for d in dirs) if dirs else str(default_root())
        typer.echo(f"no runs found under {where}")
        return
    rows = [
        [
            _when(r.when),
            r.name,
            r.kind,
            r.strategy or r.entry or "-",
            _clip(_params_text(r.params), PARAMS_WIDTH),
            ",".join(r.sources) or "-",
            _cell(r.score, ratio_pct),
            r.verdict_text or r.verdict or "-",
        ]
        for r in records
    ]
    head = ["when (UTC)", "run", "kind", "strategy", "params", "data", "S", "verdict"]
    out = _table(head, rows, {6})
    out.append(f"{plural(len(records), 'run')}; index {index_path()}")
    _echo(out)


def _entry_lines(r: RunRecord) -> list[str]:
    rows = [
        [
            str(e.rank or "-"),
            e.entry,
            e.strategy or "-",
            ratio_pct(e.score),
            ratio_pct(e.ret),
            ratio_pct(e.mdd),
            usd(e.equity),
            str(e.fills),
            usd(e.fees),
            usd(e.funding),
            "yes" if e.eligible else "no",
        ]
        for e in r.entries
    ]
    head = [
        "rank",
        "entry",
        "file",
        "S",
        "R",
        "MDD",
        "equity $",
        "fills",
        "fees $",
        "funding $",
        "eligible",
    ]
    return _table(head, rows, {3, 4, 5, 6, 7, 8, 9})


@app.command("show")
def show_command(
    run: Annotated[Path, typer.Argument(metavar="DIR", help="A run directory.", file_okay=False)],
    as_json: JsonOpt = False,
) -> None:
    """Show one run: its season, rules, data, every entry's result and the verdict.

    Example: [cyan]arena runs show runs/first[/]
    """
    r = _record(run)
    if as_json:
        typer.echo(dumps(r.doc()))
        return
    data = _data_text(r)
    out = [
        f"{r.path}",
        f"{r.kind} written {_when(r.when)} UTC · season {r.season} "
        f"(rules {r.rules_sha256[:12]} · paper){'' if r.final else ' · not final'}",
        f"window  {utc_ms(r.start)[:16] if r.start is not None else '-'} -> "
        f"{utc_ms(r.end)[:16] if r.end is not None else '-'} UTC",
        f"data    {data or '-'}",
        f"params  {r.entry or '-'}: {_params_text(r.params)}",
        "",
        *_entry_lines(r),
        "",
        *_verdict_lines(r, terminal_width()),
    ]
    _echo(out)


def _verdict_lines(r: RunRecord, width: int | None) -> list[str]:
    """The verdict as the run's report printed it: its summary, then the three answers and
    the floor, one labelled line each; "no trades to judge" alone; an old run's text."""
    if r.verdict == "no_trades":
        return ["verdict no trades to judge"]
    lines = wrap(printable(f"verdict {r.verdict_text or '-'}"), width)
    for key in ANSWERS if r.answers else ():
        text = (r.answers or {}).get(key, "-")
        lines += wrap(f"  {LABELS[key]} {printable(text)}", width, indent="          ")
    return lines


def _data_text(r: RunRecord) -> str:
    """A run's data: each source's name and the start of its SHA-256 when known."""
    shas = [*r.source_sha256, *[None] * (len(r.sources) - len(r.source_sha256))]
    return ", ".join(f"{n} ({s[:12]})" if s else n for n, s in zip(r.sources, shas, strict=False))


def compare_doc(records: Sequence[RunRecord]) -> dict[str, Any]:
    data = same_data(records)
    if data is None:
        data_names = len({tuple(r.sources) for r in records}) == 1
    return {
        "runs": [r.doc() for r in records],
        "same_data": data if data is not None else None,
        "same_data_names": None if data is not None else data_names,
        "same_rules": len({r.rules_sha256 for r in records}) == 1,
        "same_window": len({(r.start, r.end) for r in records}) == 1,
        "differing_params": differing_params(records),
    }


@app.command("compare")
def compare_command(
    runs: DirsArg,
    as_json: JsonOpt = False,
) -> None:
    """Compare runs: the same table for each, and whether data and rules agree.

    Only the strategy parameters that differ between the runs are shown. The
    data agree when the sources' SHA-256 do (a thin run log records them; a
    --full-log run names its files only), the rules when the rules' hashes do.

    Example: [cyan]arena runs compare runs/a runs/b[/]
    """
    if len(runs) < 2:
        fail("compare needs two run directories or more")
    records = [_record(p) for p in runs]
    doc = compare_doc(records)
    if as_json:
        typer.echo(dumps(doc))
        return
    keys = doc["differing_params"]
    names = [r.name for r in records]
    if len(set(names)) < len(names):
        names = [r.path for r in records]
    rows = []
    for name, r in zip(names, records, strict=True):
        first = next((e for e in r.entries if e.entry == r.entry), None)
        rows.append(
            [
                name,
                r.entry or "-",
                *([_params_text(r.params, keys)] if keys else []),
                _cell(r.score, ratio_pct),
                _cell(r.ret, ratio_pct),
                _cell(r.mdd, ratio_pct),
                _cell(r.equity, usd),
                "-" if first is None else str(first.fills),
                "-" if first is None else usd(first.fees),
                r.verdict_text or r.verdict or "-",
            ]
        )
    head = ["run", "entry", *(["params (differing)"] if keys else [])]
    head += ["S", "R", "MDD", "equity $", "fills", "fees $", "verdict"]
    out = _table(head, rows, set(range(len(head) - 7, len(head) - 1)))
    pairs = list(zip(names, records, strict=True))
    if doc["same_data"] is True:
        data = f"same data ({', '.join(records[0].sources)})"
    elif doc["same_data_names"]:
        data = (
            f"same data file names ({', '.join(records[0].sources)}); their contents are "
            "not hashed in every run log"
        )
    else:
        data = "DIFFERENT data: " + "; ".join(f"{n}: {_data_text(r)}" for n, r in pairs)
    rules = (
        f"same rules ({records[0].rules_sha256[:12]})"
        if doc["same_rules"]
        else "DIFFERENT rules: " + "; ".join(f"{n}: {r.rules_sha256[:12]}" for n, r in pairs)
    )
    window = "same window" if doc["same_window"] else "DIFFERENT windows"
    out += ["", f"{data}; {rules}; {window}"]
    _echo(out)


@app.command("rm")
def rm_command(
    runs: DirsArg,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove run directories (and their rows in the index).

    A directory that is not a run, or holds anything a run does not write (a
    subdirectory, a notebook), is refused and nothing is removed.

    Example: [cyan]arena runs rm runs/old-1 runs/old-2 --dry-run[/]
    """
    for p in runs:
        why = removable(p)
        if why is not None:
            fail(f"{p}: {why}: nothing removed")
    paths = [p.resolve() for p in runs]
    if not dry_run:
        for p in paths:
            remove_run(p)
        with Catalog() as cat:
            cat.forget(str(p) for p in paths)
    if as_json:
        typer.echo(dumps({"dry_run": dry_run, "removed": [str(p) for p in paths]}))
        return
    verb = "would remove" if dry_run else "removed"
    _echo([f"{verb} {p}" for p in paths])
