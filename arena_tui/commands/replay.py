"""``arena replay``: turn a log into a ranking anyone can check.

Beside the contract's output (the ranking, ``--fills``, ``--scores``), it writes what
people read: ``--quotes`` (every fill with its quote and its order's note) and ``--out``
(the report files a backtest writes, rebuilt from the log alone: ``run.rebuild``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena_tui.run.config import DEFAULT_TWINS
from arena_tui.util.human import Progress, plural, utc_minute
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import (
    CoinsOpt,
    EpochOpt,
    FromOpt,
    JsonOpt,
    SeasonOpt,
    ToOpt,
    TwinsOpt,
)
from arena_tui.util.outputs import OutputError, writing

if TYPE_CHECKING:
    from arena_tui.run.replay import ReplayResult


def pct(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 4 decimals, computed in integers."""
    sign = "-" if ratio_e8 < 0 else ""
    whole, frac = divmod(abs(ratio_e8), 10**6)
    return f"{sign}{whole}.{frac // 100:04d}%"


def utc(ms: int | None) -> str:
    if ms is None:
        return "no mark reached"
    return utc_minute(ms)


def print_table(result: ReplayResult) -> None:
    """A ranked table for people; every number is computed in integers."""
    from arena_tui.report.eligibility import eligible_text, ineligible_reasons
    from engine.units import format_e6

    s = result.season
    state = "final" if result.final else "provisional: the log ends before the season does"
    lines = [
        f"{s.id}  {utc(s.start)} -> {utc(s.end)}  rules_sha256 {s.rules_sha256[:16]}... · paper",
        f"scored at {utc(result.end)} ({state}); {plural(result.inputs, 'input')}"
        f"{' (from the day cache)' if result.cached else ''}, {plural(result.fills, 'fill')}",
        "",
    ]
    if not result.ranking:
        lines.append("no entries registered")
    else:
        width = max(5, *(len(r["entry"]) for r in result.ranking))
        lines.append(
            f"{'rank':>4}  {'entry':<{width}}  {'S':>10}  {'R':>10}  {'MDD':>9}  "
            f"{'equity $':>16}  {'fill days':>9}  {'active':>11}  eligible"
        )
        for r in result.ranking:
            active = f"{r['active_marks']}/{r['marks']}"
            lines.append(
                f"{r['rank'] or '-':>4}  {r['entry']:<{width}}  {pct(r['score']):>10}  "
                f"{pct(r['return']):>10}  {pct(r['mdd']):>9}  {format_e6(r['equity']):>16}  "
                f"{r['fill_days']:>9}  {active:>11}  "
                f"{eligible_text(r['eligible'], ineligible_reasons(r, s.rules))}"
            )
    lines += ["", f"log_sha256    {result.log_sha256}", f"fills_sha256  {result.fills_sha256}"]
    typer.echo("\n".join(lines))


def summary_of_unscored(result: ReplayResult) -> str:
    return (
        f"{plural(result.inputs, 'input')} checked, no window to score\n\n"
        f"log_sha256    {result.log_sha256}"
    )


def write_scores(result: ReplayResult, path: Path) -> None:
    from arena_tui.run.replay import score_row_doc

    rows = sorted(result.score_rows.values(), key=lambda r: (r.day, r.rank))
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(dumps(score_row_doc(r), sort_keys=True) + "\n")


def start_output(path: Path | None, what: str, logs: Sequence[Path]) -> None:
    """Create ``path`` empty now: one that cannot be written fails before the replay, not
    after it. One of the logs being read is refused (it would be overwritten)."""
    if path is None:
        return
    for log in logs:
        try:
            same = path.exists() and log.exists() and path.samefile(log)
        except OSError:
            same = False
        if same:
            raise OutputError(f"{what} {path}: is a log being replayed; it would be overwritten")
    with writing(path, what):
        path.write_bytes(b"")


def start_report(out: Path | None) -> None:
    """Make ``out`` for the report now; a directory holding another kind of report (a
    backtest's, a paper run's) is refused: its report.json would be overwritten."""
    if out is None:
        return
    with writing(out, "--out"):
        out.mkdir(parents=True, exist_ok=True)
        report = out / "report.json"
        if report.exists() and b'"kind":"replay"' not in report.read_bytes()[:64]:
            raise OutputError(
                f"--out {out}: holds the report of a run already; it would be overwritten "
                "(choose another directory)"
            )


def replay_command(
    logs: Annotated[
        list[Path],
        typer.Argument(
            help="Log files in order (plain, .gz or .lz4 JSON Lines; see docs/log-format.md), "
            "or a directory of day logs (choose days with --from/--to/--coins).",
            metavar="LOG",
        ),
    ],
    season: SeasonOpt = None,
    as_json: JsonOpt = False,
    fills: Annotated[
        Path | None,
        typer.Option(
            "--fills",
            help="Write every fill as one JSON line to this file (its SHA-256 is fills_sha256).",
            dir_okay=False,
        ),
    ] = None,
    scores: Annotated[
        Path | None,
        typer.Option(
            "--scores",
            help="Write the daily score rows (one per entry per UTC day) as JSON lines.",
            dir_okay=False,
        ),
    ] = None,
    quotes: Annotated[
        Path | None,
        typer.Option(
            "--quotes",
            help='Write every fill as --fills does plus what it filled against ("quote") '
            'and its order\'s "note", one JSON line each, in the same order.',
            dir_okay=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the report files a backtest writes (report.json, fills.csv, "
            "fills.jsonl, equity.csv, chart.svg, ranking.json, report.html, "
            "rundata.msgpack) into this directory, rebuilt from the log alone.",
            file_okay=False,
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="For a thin run log (arena backtest's): a directory to look for its "
            "source logs in, by SHA-256, when they are not beside it or where they were.",
            file_okay=False,
        ),
    ] = None,
    epoch: EpochOpt = "auto",
    twins: TwinsOpt = DEFAULT_TWINS,
    seed: Annotated[
        int,
        typer.Option("--seed", help="With --out: seed of the verdict's bootstraps and twins."),
    ] = 0,
    day_from: FromOpt = None,
    day_to: ToOpt = None,
    coins: CoinsOpt = None,
    cache: Annotated[
        bool | None,
        typer.Option(
            "--cache/--no-cache",
            help="The day cache (arena cache info). By default a log with a valid day "
            "cache (an earlier backtest, import or --cache wrote it) is replayed from it, "
            "about 9x quicker on a day of books and prints, with the very same result (a "
            ".gz or .lz4 log is read once to hash it unless --cache or an import wrote its "
            "cache); "
            "--cache also caches the logs it reads (that first replay is slower); "
            "--no-cache reads the logs.",
        ),
    ] = None,
) -> None:
    """Replay LOG... through the Season 0 engine and print the ranking.

    Same log + same season = the same fills, marks and scores, on any machine.
    Season 0 is paper trading: the table says so beside the rules hash.

    [bold]--json[/] prints the contract's replay object for programs.

    [bold]--out DIR[/] turns a log (a backtest's run log, a hosted season's) into
    a report: every entry's fills with their quotes and notes, its minute
    marks, and the verdict against control_random when the log has that entry
    (docs/report.md).

    A log started under other rules is refused, naming both hashes.

    A thin run log (what [cyan]arena backtest[/] writes unless --full-log) is merged
    with the logs it names, found beside it, at their recorded paths or under
    --data DIR, each checked by size and SHA-256: the output is the full log's.

    Example: [cyan]arena replay recordings/sample-btc-20250126.jsonl --json[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.catalog import expand_logs
    from arena_tui.logs.logerror import LogError
    from arena_tui.report.judging import check_epoch
    from arena_tui.run.quotes import OrderNotes
    from arena_tui.run.replay import check_only, replay
    from arena_tui.season.file import EmptyWindow, resolve_season

    strategy = next((p for p in logs if p.name.endswith(".py")), None)
    if strategy is not None:
        raise LogError(
            strategy,
            None,
            f"a Python file (a strategy?), not a log: arena backtest {strategy} LOG...",
        )
    logs = expand_logs(logs, day_from, day_to, coins)
    paths = [str(p) for p in logs]
    check_epoch(epoch)  # a bad --epoch fails now, not after the replay
    try:
        chosen = resolve_season(paths, season)
    except EmptyWindow as empty:
        typer.echo(
            "arena: note: the logs span no whole minute, so with no --season the default "
            "window is empty: checking them only, nothing to score",
            err=True,
        )
        start_output(fills, "--fills", logs)
        start_output(scores, "--scores", logs)
        start_output(quotes, "--quotes", logs)
        if out is not None:
            typer.echo("arena: note: no report written to --out: nothing to score", err=True)
        result = check_only(paths, empty.season, None if data is None else str(data))
        typer.echo(dumps(result.to_json()) if as_json else summary_of_unscored(result))
        return
    start_output(scores, "--scores", logs)
    start_report(out)
    fills_f = quotes_f = None
    if fills is not None:
        start_output(fills, "--fills", logs)
        with writing(fills, "--fills"):
            fills_f = fills.open("wb")
    rebuilt = None
    if out is not None:  # (the report's modules only for a report: a replay is quicker)
        from arena_tui.run.rebuild import Rebuilt

        rebuilt = Rebuilt()
    try:
        if quotes is not None:
            start_output(quotes, "--quotes", logs)
            with writing(quotes, "--quotes"):
                quotes_f = quotes.open("wb")
        notes = rebuilt.notes if rebuilt is not None else OrderNotes() if quotes else None
        result = replay(
            paths,
            chosen,
            fills_out=fills_f,
            on_event=None if rebuilt is None else rebuilt.on_event,
            progress=Progress(),
            keep_score_rows=scores is not None,
            notes=notes,
            quotes_out=quotes_f,
            sources_dir=None if data is None else str(data),
            cache="read" if cache is None else "write" if cache else "off",
        )
    finally:
        for f in (fills_f, quotes_f):
            if f is not None:
                f.close()
    if scores is not None:
        with writing(scores, "--scores"):
            write_scores(result, scores)
    if rebuilt is not None and out is not None:
        from arena_tui.logs.thinlog import market_logs
        from arena_tui.report.html import write_html
        from arena_tui.report.judging import Judging
        from arena_tui.report.render import write_files
        from arena_tui.report.rundata import replay_collect
        from arena_tui.report.rundata import save as save_rundata

        with writing(out, "--out"):
            run_log = logs[0] if len(logs) == 1 else None
            sources = None if data is None else str(data)
            judging = Judging(epoch, seed, twins, tuple(market_logs(paths, sources)))
            doc = write_files(rebuilt.result(result, run_log), out, judging=judging, kind="replay")
            # report.html and rundata.msgpack: the run data, gathered in a second pass
            run_data = replay_collect(paths, chosen, verdict=doc["verdict"], data_dir=sources)
            save_rundata(run_data, out)
            write_html(run_data, doc, out)
        typer.echo(f"arena: report written to {out}", err=True)
    if as_json:
        typer.echo(dumps(result.to_json()))
    else:
        print_table(result)
