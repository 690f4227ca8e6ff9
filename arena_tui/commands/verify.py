"""``arena verify``: check a hosted season's published scores against its published log."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena_tui.util.human import plural, utc_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt
from arena_tui.util.outputs import writing
from arena_tui.util.text import printable

if TYPE_CHECKING:
    from arena_tui.verify.verifier import Outcome, Round, Verifier


def paper_text(paper: bool | None) -> str:
    return "paper" if paper else "not labelled paper"


def summary(out: Outcome) -> str:
    state = "final" if out.final else "provisional: the season is not over"
    lines = [
        f"verified: {plural(out.rows_checked, 'published score row')} "
        f"({plural(out.entries, 'entry', 'entries')}, {plural(out.days, 'day')}) equal the rows "
        "recomputed here from the published log",
        f"season {out.season} ({state}) at {out.url}",
        f"rules {out.rules_sha256} · {paper_text(out.paper)}",
        f"log {out.log_bytes:,} bytes, {plural(out.inputs, 'input')}  log_sha256 {out.log_sha256}",
    ]
    return "\n".join(lines)


def difference_text(out: Outcome) -> str:
    assert out.difference is not None
    lines = [
        f"DIFFERENT: {out.difference.message()}",
        f"season {out.season} at {out.url} · rules {out.rules_sha256} · {paper_text(out.paper)}",
    ]
    if out.rounds:
        lines.append(f"log read: {out.log_bytes:,} bytes, {plural(out.inputs, 'input')}")
    return "\n".join(lines)


def round_line(out: Outcome, r: Round) -> str:
    j = r.judgement
    state = "final" if out.final else ("waiting" if j.waiting else "agrees")
    return (
        f"+{r.new_bytes:,} bytes (log {out.log_bytes:,}, {plural(out.inputs, 'input')}); "
        f"{plural(j.checked, 'row')} agree; {state}"
    )


def verify_command(
    url: Annotated[
        str,
        typer.Argument(help="The host's base URL, e.g. http://127.0.0.1:8000.", metavar="URL"),
    ],
    as_json: JsonOpt = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Keep verifying as the season runs (every --interval seconds) until it is "
            "final and verified; exit 1 at the first difference.",
        ),
    ] = False,
    interval: Annotated[
        float,
        typer.Option("--interval", min=0.1, help="With --follow: seconds between rounds."),
    ] = 5.0,
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            help="Keep the downloaded log and season file in this directory (ID.jsonl and "
            "ID.json), so that `arena replay DIR/ID.jsonl` re-runs the check.",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Check a hosted season: replay its published log here and compare every published
    score row with the one recomputed, as of the same mark.

    It fetches /v1/season and /v1/season/file (the file's rules hash, computed
    here, must be the published rules_sha256 and the log header's), then
    /v1/scores, then /v1/log (read after the scores, it holds every input
    behind them), replays the log with the local engine and compares each
    row's rank, equity, return, mdd, score, eligible, fill_days and
    active_share. The first difference is named (entry, UTC day, field,
    published and recomputed values) and the exit status is 1; 0 when
    every row agrees. A URL that does not answer as an arena host is
    one line, "URL: not an arena host (why)", exit 1, and nothing is
    compared. It proves the scores follow from the log and the
    rules; it cannot prove the log holds what the agents sent
    (docs/verify.md).

    [bold]--json[/] prints one object: ok, url, season, rules_sha256,
    log_sha256, inputs, rows_checked, final, paper, first_difference.

    Example: [cyan]arena host --replay
    recordings/synth-3coins-20261201.jsonl.gz --speed 60 --log
    runs/host/season.jsonl[/], then [cyan]arena verify
    http://127.0.0.1:8000 --follow[/]
    """
    from arena_tui.verify.remote import Remote  # httpx: for this command only
    from arena_tui.verify.verifier import Verifier

    remote = Remote(url)
    with tempfile.TemporaryDirectory(prefix="arena-verify-") as tmp:
        workdir = Path(tmp)
        if keep is not None:
            with writing(keep, "--keep"):
                keep.mkdir(parents=True, exist_ok=True)
            workdir = keep
        verifier = Verifier(remote, workdir, keep=keep is not None)
        try:
            out = _run(verifier, follow, interval, as_json)
        finally:
            verifier.close()
    _report(out, as_json, verifier)
    if out.interrupted:
        raise typer.Exit(130)
    if not out.ok:
        raise typer.Exit(1)


def _run(verifier: Verifier, follow: bool, interval: float, as_json: bool) -> Outcome:
    if not follow:
        return verifier.once()

    def on_round(r: Round) -> None:
        out = verifier.outcome
        assert out is not None
        if r.new_bytes or out.final or not out.ok:
            now = utc_ms(int(time.time() * 1000))
            typer.echo(f"{now}  {round_line(out, r)}", err=as_json)

    try:
        return verifier.follow(interval, on_round)
    except KeyboardInterrupt:
        out = verifier.outcome
        if out is None:
            raise
        out.interrupted = True
        out.final = False
        return out


def _lines(text: str) -> str:
    """``text`` line by line ``printable`` (its newlines kept)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _report(out: Outcome, as_json: bool, verifier: Verifier) -> None:
    if as_json:
        typer.echo(dumps(out.to_json()))
    elif out.interrupted:
        pass
    elif out.ok:  # the season's id and entry names are the server's: printable only
        typer.echo(_lines(summary(out)))
    else:
        typer.echo(_lines(difference_text(out)))
    if out.interrupted:
        typer.echo(
            f"arena: verify: stopped; {plural(out.rows_checked, 'row')} agreed as of the last "
            f"round ({plural(out.rounds, 'round')}, log {out.log_bytes:,} bytes)",
            err=True,
        )
    elif verifier.keep and verifier.log_path is not None and not as_json:
        typer.echo(f"kept: {verifier.log_path} and {verifier.season_path}", err=True)
