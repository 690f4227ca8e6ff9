"""``arena runs``: the runs catalog (``report.runs``): list, show, compare and remove runs.

Why one module: the four subcommands print the same records (``report.runrecord``) with
the same cells and table layout; only what they select differs. S, R and MDD are written
with every digit (``ratio_pct``), as the report writes them, so S = R - MDD adds up.

A run is named by its directory, or by the name ``arena runs list`` prints (the
directory's name, looked up in the index when no such directory is here). ``list`` fits
the terminal: one line a run when the whole table fits, else two (the table's columns,
then the verdict and the data, wrapped), and never cuts a parameter; it shows only the
parameters a run changed from its strategy's defaults (``changed_params``: an older run,
which did not record them, shows them all), and lists sweeps beside runs (kind
``sweep``: the chosen variant's swept values, its held-out S and answers, and the sweep in
a few words). Verdicts are words: a code with no words of its own (an older report with
no text) is spelled out.

A run directory may come from anywhere (copied from someone, report.json edited by hand),
so every text it gives the terminal (entry, strategy and parameter names, the verdict's
words, its data's names) is printed without its control characters (``printable``): none
can move the cursor, recolour the terminal or rewrite a line already shown.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.report.layout import terminal_width, wrap
from arena_tui.util.errors import fail
from arena_tui.util.human import plural, ratio_pct, usd, utc_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt
from arena_tui.util.text import printable

if TYPE_CHECKING:
    from arena_tui.report.runrecord import RunRecord

app = typer.Typer(
    help="The runs catalog: every run directory (and sweep) under the data directory's "
    "runs/ and sweeps/, every run written elsewhere, and folders you name, indexed in "
    "SQLite (runs.sqlite in the data directory) and rebuilt from the directories whenever "
    "it is read. A run is named by its directory or by the name arena runs list prints.",
    no_args_is_help=True,
)

DirsArg = Annotated[
    list[Path],
    typer.Argument(
        metavar="DIR|NAME",
        help="Run directories, or the names arena runs list prints.",
        file_okay=False,
        show_default=False,
    ),
]

LABELS = {"ranked": "ranked?", "money": "money? ", "skill": "skill? ", "floor": "floor: "}
# a report written before the three questions has one code: its words when it has no text
OLD_CODES = {
    "better": "better than the control",
    "worse": "worse than the control",
    "indistinguishable": "indistinguishable from the control",
    "not_enough_blocks": "not enough blocks to tell",
    "no_control": "no control to compare with",
    "no_trades": "no trades to judge",
}
PARAMS_MIN = 16  # below this many columns left for them, list puts the parameters below


def _echo(lines: Sequence[str]) -> None:
    typer.echo("\n".join(printable(line) for line in lines))


def _when(ms: int) -> str:
    return utc_ms(ms)[:16]


def _value(v: object) -> str:
    return json.dumps(v, ensure_ascii=False)


def _params_text(params: dict[str, Any] | None, only: Sequence[str] | None = None) -> str:
    if not params:
        return "-"
    keys = list(params) if only is None else [k for k in only if k in params]
    return " ".join(f"{k}={_value(params[k])}" for k in keys) or "-"


def _cell(value: int | None, fmt: Any) -> str:
    return "-" if value is None else str(fmt(value))


def verdict_words(r: RunRecord) -> str:
    """The verdict in a few words: the summary of its answers, an older report's text, or
    (no text at all) its code spelled out, never a bare ``not_enough_blocks``."""
    if r.verdict_text:
        return r.verdict_text
    if r.verdict:
        return OLD_CODES.get(r.verdict, r.verdict.replace("_", " "))
    return "-"


def _widths(head: list[str], rows: list[list[str]]) -> list[int]:
    return [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]


def _line(cells: list[str], widths: list[int], right: set[int]) -> str:
    return "  ".join(
        c.rjust(w) if i in right else c.ljust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    ).rstrip()


def _table(head: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    rows = [[printable(c) for c in r] for r in rows]  # measured as they will be printed
    widths = _widths(head, rows)
    return [_line(head, widths, right), *(_line(r, widths, right) for r in rows)]


def _record(path: Path) -> RunRecord:
    from arena_tui.report.runrecord import RunsError
    from arena_tui.report.runs import read_any

    try:
        return read_any(path)
    except RunsError as exc:
        fail(str(exc))


def _is_name(arg: Path) -> bool:
    text = str(arg)
    return os.sep not in text and "/" not in text and text not in (".", "..")


def resolve(arg: Path) -> Path:
    """A run named on the command line: a directory, or (none of that name here) the name
    ``arena runs list`` prints, looked up in the index; one line when it is neither, or
    when several runs have that name."""
    from arena_tui.report.runrecord import RunsError
    from arena_tui.report.runs import Catalog

    if arg.exists() or not _is_name(arg):
        return arg
    try:
        with Catalog() as cat:
            found = [r.path for r in cat.refresh() if r.name == arg.name]
    except RunsError as exc:
        fail(str(exc))
    if len(found) == 1:
        return Path(found[0])
    if found:
        fail(f"{arg}: {len(found)} runs have this name ({', '.join(found)}): name one by its path")
    fail(
        f"{arg}: no such directory, and no run of that name in the index "
        "(arena runs list shows them)"
    )


def _run(arg: Path) -> RunRecord:
    """A run (not a sweep) named on the command line."""
    from arena_tui.report.runrecord import RunsError, is_run_dir, is_sweep_dir, read_run

    path = resolve(arg)
    if is_sweep_dir(path) and not is_run_dir(path):
        fail(f"{arg}: a sweep, not a run: arena sweep show {path} prints it")
    try:
        return read_run(path)
    except RunsError as exc:
        fail(str(exc))


# ---- list ---------------------------------------------------------------------------------


def _data_label(r: RunRecord) -> str:
    """The data in a few words: a sweep's days, a run's files (the first and last of
    many)."""
    if r.sweep is not None:
        held = r.sweep.get("holdout_days") or 0
        days = plural(int(r.sweep.get("days") or 0), "day")
        return f"{days}, {held} held out" if held else days
    names = r.sources
    if len(names) > 2:
        return f"{names[0]} .. {names[-1]} ({len(names)} logs)"
    return ",".join(names) or "-"


def sweep_words(r: RunRecord) -> str:
    """A sweep as ``arena sweep show`` would sum it up, in a few words."""
    sw = r.sweep or {}
    if not sw.get("finished"):
        jobs = plural(int(sw.get("jobs") or 0), "job")
        return f"unfinished ({jobs} stored): arena sweep --resume continues it"
    search = f" ({sw['search']})" if sw.get("search") else ""
    tried = f"{plural(int(sw.get('variants') or 0), 'variant')}{search}"
    if not sw.get("chosen"):
        return f"{tried}: none could be chosen"
    return f"{tried}, chose {sw['chosen']}; held out: {verdict_words(r)}"


def _params_cell(r: RunRecord) -> str:
    from arena_tui.report.runrecord import changed_params

    changed = changed_params(r)
    if changed is None:  # an older run: every parameter, its defaults unknown
        return _params_text(r.params)
    return _params_text(changed)


def _list_cells(r: RunRecord, name: str) -> list[str]:
    return [
        _when(r.when),
        name,
        r.kind,
        r.strategy or r.entry or "-",
        _cell(r.score, ratio_pct),
        _params_cell(r),
        _data_label(r),
        sweep_words(r) if r.kind == "sweep" else verdict_words(r),
    ]


LIST_HEAD = ["when (UTC)", "run", "kind", "strategy", "S", "params", "data", "verdict"]


def _pack(words: list[str], room: int) -> list[str]:
    """``words`` joined by spaces into lines of at most ``room``; a word longer than that
    on a line of its own, whole."""
    lines: list[str] = []
    for w in words:
        if lines and len(lines[-1]) + 1 + len(w) <= room:
            lines[-1] += " " + w
        else:
            lines.append(w)
    return lines or ["-"]


def list_lines(records: Sequence[RunRecord], width: int | None) -> list[str]:
    """The list within ``width`` columns (None: no limit): one line a run when the whole
    table fits; else the first columns and the parameters (wrapped in their column, never
    cut), then the verdict and the data on the next line, wrapped."""
    names = [r.name for r in records]
    dup = {n for n in names if names.count(n) > 1}
    rows = [
        [printable(c) for c in _list_cells(r, r.path if r.name in dup else r.name)] for r in records
    ]
    one = _table(LIST_HEAD, rows, {4})
    if width is None or max(len(x) for x in one) <= width:
        return one
    main = LIST_HEAD[:5]
    widths = _widths(main, [r[:5] for r in rows])
    at = sum(widths) + 2 * len(widths)  # where the parameters begin
    room = width - at
    below = room < PARAMS_MIN  # too narrow: the parameters go on the second line too
    head = main if below else [*main, "params"]
    out = [_line(head, [*widths, 0][: len(head)], {4}), "  " + ("params · " if below else "")]
    out[-1] += "verdict · data"
    for row in rows:
        params = row[5]
        detail = f"  {params} · {row[7]} · {row[6]}" if below else f"  {row[7]} · {row[6]}"
        packed = [] if below else _pack(params.split(" "), room)
        out.append(_line(row[:5] + packed[:1], [*widths, 0][: 5 + len(packed[:1])], {4}))
        out += [" " * at + p for p in packed[1:]]
        out += wrap(detail, width, indent="  ")
    return out


@app.command("list")
def list_command(
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[DIR]...",
            help="Folders to look for runs and sweeps in (and remember). Default: every run "
            "indexed (a run is indexed as it is written) and those under the data "
            "directory's runs/ and sweeps/.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List runs and sweeps, newest first: when, name, kind, strategy, S, the
    parameters it changed, data and verdict.

    The parameters: only those that differ from the strategy's defaults, each
    in full ("-": all defaults; a run written before arena recorded the
    defaults shows them all). The verdict in a few words: would it be ranked,
    does it make money, is it skill. A sweep (kind sweep) shows the variant it
    chose, that variant's held-out S and answers, and how many variants it tried.

    The list fits the terminal (COLUMNS): when one line a run does not fit,
    each run takes two, its verdict and data on the second. The run column is
    the name arena runs show, compare and rm accept.

    The index (runs.sqlite in the data directory) is brought up to date first: a
    run changed since it was indexed is read again, one deleted is dropped.

    Example: [cyan]arena runs list runs/ --json[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.report.runrecord import RunsError
    from arena_tui.report.runs import Catalog, default_roots, index_path

    for d in dirs or []:
        if not d.is_dir():
            fail(f"{d}: not a directory")
    try:
        with Catalog() as cat:
            records = cat.refresh(dirs or [])
    except RunsError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(dumps([r.doc() for r in records]))
        return
    if not records:
        where = dirs or default_roots()
        typer.echo(f"no runs found under {', '.join(str(d) for d in where)}")
        return
    sweeps = sum(r.kind == "sweep" for r in records)
    runs = len(records) - sweeps
    count = plural(runs, "run") + (f", {plural(sweeps, 'sweep')}" if sweeps else "")
    _echo([*list_lines(records, terminal_width()), f"{count}; index {index_path()}"])


# ---- show ---------------------------------------------------------------------------------


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


def _params_lines(r: RunRecord, width: int | None) -> list[str]:
    """The parameters a run changed, then the others (its defaults); every one, in full."""
    from arena_tui.report.runrecord import changed_params

    changed = changed_params(r)
    if changed is None or not r.params:  # an older run: its defaults are not recorded
        return wrap(f"params  {r.entry or '-'}: {_params_text(r.params)}", width, "        ")
    rest = [k for k in r.params if k not in changed]
    if not changed:
        return wrap(f"params  {r.entry or '-'}: defaults: {_params_text(r.params)}", width, " " * 8)
    lines = wrap(f"params  {r.entry or '-'}: {_params_text(changed)}", width, " " * 8)
    if rest:
        lines += wrap(f"        defaults: {_params_text(r.params, rest)}", width, "  ")
    return lines


@app.command("show")
def show_command(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="DIR|NAME",
            help="A run directory, or the name arena runs list prints.",
            file_okay=False,
            show_default=False,
        ),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Show one run: its season, rules, data, parameters, every entry's result
    and the verdict (a sweep: what it tried and chose).

    Example: [cyan]arena runs show runs/first[/] (or [cyan]arena runs show first[/])
    """
    r = _record(resolve(run))
    if as_json:
        typer.echo(dumps(r.doc()))
        return
    width = terminal_width()
    if r.kind == "sweep":
        _echo(_sweep_lines(r, width))
        return
    data = _data_text(r)
    out = [
        f"{r.path}",
        f"{r.kind} written {_when(r.when)} UTC · season {r.season} "
        f"(rules {r.rules_sha256[:12]} · paper){'' if r.final else ' · not final'}",
        f"window  {utc_ms(r.start)[:16] if r.start is not None else '-'} -> "
        f"{utc_ms(r.end)[:16] if r.end is not None else '-'} UTC",
        f"data    {data or '-'}",
        *_params_lines(r, width),
        "",
        *_entry_lines(r),
        "",
        *_verdict_lines(r, width),
    ]
    _echo(out)


def _sweep_lines(r: RunRecord, width: int | None) -> list[str]:
    sw = r.sweep or {}
    out = [r.path, *wrap(f"{sweep_words(r)}", width)]
    out.append(f"written {_when(r.when)} UTC · strategy {r.strategy or '-'}")
    out.append(f"data    {_data_label(r)}: {_data_text(r) or '-'}")
    if sw.get("chosen"):
        out += wrap(f"chosen  {sw['chosen']}: {_params_text(r.params)}", width, "        ")
        out.append(f"held-out S {_cell(r.score, ratio_pct)}")
        out += ["", *_verdict_lines(r, width)]
    out += ["", f"arena sweep show {r.path} prints it whole"]
    return out


def _verdict_lines(r: RunRecord, width: int | None) -> list[str]:
    """The verdict as the run's report printed it: its summary, then the three answers and
    the floor, one labelled line each; "no trades to judge" alone; an old run's text."""
    from arena_tui.report.runrecord import ANSWERS

    if r.verdict == "no_trades":
        return ["verdict no trades to judge"]
    lines = wrap(printable(f"verdict {verdict_words(r)}"), width)
    for key in ANSWERS if r.answers else ():
        text = (r.answers or {}).get(key, "-")
        lines += wrap(f"  {LABELS[key]} {printable(text)}", width, indent="          ")
    return lines


def _data_text(r: RunRecord) -> str:
    """A run's data: each source's name and the start of its SHA-256 when known."""
    shas = [*r.source_sha256, *[None] * (len(r.sources) - len(r.source_sha256))]
    return ", ".join(f"{n} ({s[:12]})" if s else n for n, s in zip(r.sources, shas, strict=False))


# ---- compare ------------------------------------------------------------------------------


def compare_doc(records: Sequence[RunRecord]) -> dict[str, Any]:
    from arena_tui.report.runs import differing_params, same_data

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

    Only the strategy parameters whose values differ between runs of the same
    strategy are shown. The data agree when the sources' SHA-256 do (a thin run
    log records them; a --full-log run names its files only), the rules when
    the rules' hashes do.

    Example: [cyan]arena runs compare runs/a runs/b[/]
    """
    if len(runs) < 2:
        fail("compare needs two run directories or more")
    records = [_run(p) for p in runs]
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
                verdict_words(r),
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
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.report.runs import Catalog, removable, remove_run

    found = [resolve(p) for p in runs]
    for p in found:
        why = removable(p)
        if why is not None:
            fail(f"{p}: {why}: nothing removed")
    paths = [p.resolve() for p in found]
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
