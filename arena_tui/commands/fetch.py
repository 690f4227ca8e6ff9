"""``arena fetch``: whole UTC days of books, trades and asset contexts from Hyperliquid's S3
archives, as version-1 day logs (docs/data.md)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.util.human import plural
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import InfoUrlOpt, JsonOpt, MetaOpt

if TYPE_CHECKING:
    from arena_tui.record.fetch import Plan
    from engine import Market

# record.fetch.PRICE_PER_GB, the --price-per-gb default, written here rather than imported:
# record.fetch brings the archive's parsers, which no --help needs (tests/test_cli_startup.py
# checks that the two agree)
PRICE_PER_GB = 0.09


def parse_day(text: str, what: str) -> dt.date:
    from arena_tui.record.fetch import FetchError

    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise FetchError(f"{what} {text!r}: not a day; use YYYY-MM-DD (UTC)") from None


def size_text(n: int) -> str:
    from arena_tui.record.fetch import GB

    if n >= GB:
        return f"{n / GB:,.2f} GB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):,.1f} MB"
    return f"{n / 1024:,.1f} KB"


def dollars(usd: float) -> str:
    return f"${usd:,.2f}" if usd >= 0.01 or usd == 0 else f"${usd:.4f}"


def plan_text(plan: Plan, price: float) -> str:
    objs, todo = plan.objects(), plan.to_download()
    days = ", ".join(d.day.isoformat() for d in plan.days) or "none"
    text = f"fetch: days to write: {days}"
    if plan.done:
        text += f"; already fetched: {plural(len(plan.done), 'day')}"
    text += (
        f"\nfetch: {plural(len(objs), 'object')}, {size_text(sum(o.size for o in objs))}; to "
        f"download: {plural(len(todo), 'object')}, {size_text(sum(o.size for o in todo))} "
        f"({len(objs) - len(todo):,} in the cache {plan.cache})"
        f"\nfetch: transfer cost about {dollars(plan.cost(price))} at ${price}/GB (S3 data "
        "transfer out, paid by you: the buckets are requester-pays)"
    )
    return text


def _ticker(label: str) -> Any:
    enabled = sys.stderr.isatty()

    def show(done: int, got: int, total: int) -> None:
        if enabled:
            sys.stderr.write(f"\r{label}: {done:,} objects, {size_text(got)} \033[K")
            sys.stderr.flush()

    return show


def fetch_command(
    coins: Annotated[
        str,
        typer.Option("--coins", help="Coins to fetch, comma-separated (exact names: BTC,ETH)."),
    ],
    start: Annotated[str, typer.Option("--from", help="First UTC day, YYYY-MM-DD.", metavar="DAY")],
    end: Annotated[
        str | None,
        typer.Option(
            "--to", help="Last UTC day, YYYY-MM-DD (inclusive). Default: --from.", metavar="DAY"
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory of the day logs (hl-YYYY-MM-DD.jsonl.lz4). Default: the data "
            "directory's history/ (ARENA_DATA_DIR moves it).",
            file_okay=False,
        ),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Download cache: the raw objects, kept so a re-run or a day rebuilt with "
            "another coin downloads nothing twice. Default: the data directory's s3/.",
            file_okay=False,
        ),
    ] = None,
    meta: MetaOpt = None,
    info_url: InfoUrlOpt = None,
    endpoint_url: Annotated[
        str | None,
        typer.Option(
            "--endpoint-url",
            help="Another S3 endpoint (an S3-compatible server or a mirror); AWS_ENDPOINT_URL "
            "works too. Default: AWS's.",
        ),
    ] = None,
    region: Annotated[
        str | None,
        typer.Option("--region", help="AWS region. Default: AWS_REGION, else ap-northeast-1."),
    ] = None,
    price_per_gb: Annotated[
        float,
        typer.Option(
            "--price-per-gb",
            min=0.0,
            help="USD per GB (2^30 bytes) used for the cost shown first: S3's data transfer "
            "out to the internet, which the requester pays.",
        ),
    ] = PRICE_PER_GB,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Download without asking (needed off a terminal).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what it would download and the cost; stop.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Fetch whole UTC days of [bold]l2Book[/], [bold]trades[/] and [bold]activeAssetCtx[/]
    from Hyperliquid's requester-pays S3 buckets into day logs.

    Books come from s3://hyperliquid-archive/market_data (hourly objects, kept
    verbatim), asset contexts from s3://hyperliquid-archive/asset_ctxs (a CSV a
    day, turned into activeAssetCtx messages), trades from the node's fills in
    s3://hl-mainnet-node-data (one print per trade, as the WebSocket sends them).
    One file per UTC day, every coin merged by time; hours the archive lacks are
    gap inputs. It lists the objects and prints the bytes and the transfer cost
    first, and downloads only with --yes or your yes on a terminal. A re-run
    downloads only what is missing; a day is written whole or not at all.

    Credentials: the standard AWS chain (AWS_ACCESS_KEY_ID and
    AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...); --dry-run needs them too (the
    buckets refuse anonymous listing). A dry run needs no meta: the listing
    is the plan. The days written take their markets from meta (--meta FILE
    offline: a saved answer, or a season file such as seasons/season0.toml).
    An empty (0-byte) object is a missing hour, a gap. docs/data.md has the
    formats, the dates they apply to and the costs.

    Example:

    [cyan]arena fetch --coins BTC,ETH --from 2025-10-01 --to 2025-10-07 --yes[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.daykeep import keep_days
    from arena_tui.logs.meta import get_markets, meta_source, parse_coins, select
    from arena_tui.record.assemble import DaySummary, day_name, fetched_coins, write_day
    from arena_tui.record.fetch import (
        FetchError,
        cache_dir,
        client,
        days_between,
        download_all,
        history_dir,
        make_plan,
    )

    wanted = parse_coins(coins)
    first = parse_day(start, "--from")
    days = days_between(first, parse_day(end, "--to") if end else first)
    meta_file, url = meta_source(meta, info_url)
    out_dir = out if out is not None else history_dir()
    root = cache if cache is not None else cache_dir()
    universe: list[Market] | None = None
    if not dry_run or meta is not None or info_url is not None:
        # the markets are written into each day; a dry run writes none, so it asks only
        # when told where (a coin the archive lacks fails its listing anyway)
        universe = get_markets(meta_file, url)
        select(universe, wanted)  # an unknown coin fails before anything is listed

    def coins_of(day: dt.date) -> list[str] | None:
        held = fetched_coins(out_dir / day_name(day))
        if held is not None and set(wanted) <= set(held):
            return None
        return (held or []) + [c for c in wanted if c not in (held or [])]

    s3 = client(endpoint_url, region)
    plan = make_plan(s3, days, coins_of, root)
    if not as_json:  # the plan is the first result: shown before anything is downloaded
        typer.echo(plan_text(plan, price_per_gb))
    for day in plan.days:
        if day.empty:
            named = ", ".join(o.uri for o in day.empty[:3])
            more = f" and {len(day.empty) - 3:,} more" if len(day.empty) > 3 else ""
            sys.stderr.write(
                f"arena: note: {plural(len(day.empty), 'empty object')} (0 bytes) for "
                f"{day.day} in the archive, taken as missing hours (gaps): {named}{more}\n"
            )
        if day.ctx is None:
            sys.stderr.write(
                f"arena: note: no asset contexts for {day.day} in the archive: the day is "
                "written without them (a gap: the last context's rate and mark hold; with "
                "none yet, no funding and the book's mid as the mark)\n"
            )
    doc: dict[str, Any] = {"plan": plan.to_json(price_per_gb), "out": str(out_dir)}
    if dry_run:
        if as_json:
            typer.echo(dumps(doc))
        return
    todo = plan.to_download()
    if todo and not yes:
        if not sys.stdin.isatty():
            raise FetchError(
                f"fetch: not downloading without --yes (about {dollars(plan.cost(price_per_gb))}); "
                "--dry-run shows the plan only"
            )
        if not typer.confirm("Download?", default=False, err=True):
            raise FetchError("fetch: nothing downloaded")
    show = _ticker("fetch: downloading")
    got = download_all(s3, todo, root, show)
    if todo and sys.stderr.isatty():
        sys.stderr.write("\r\033[K")

    def say(text: str) -> None:  # results on stdout, as they come
        if not as_json:
            typer.echo(text)

    say(f"fetch: downloaded {plural(got.objects, 'object')}, {size_text(got.bytes)}")
    written: list[DaySummary] = []
    assert universe is not None  # asked for above unless a dry run
    for day in plan.days:
        markets = sorted(select(universe, day.coins), key=lambda m: m.asset)
        s = write_day(day, markets, root, out_dir)
        keep_days([str(s.path)])  # the day cache, so the first backtest of it is warm
        written.append(s)
        say(
            f"fetch: wrote {s.path}: {' '.join(s.coins)}; {plural(s.books, 'book')}, "
            f"{plural(s.prints, 'print')} in {plural(s.trades, 'trades message')}, "
            f"{plural(s.ctxs, 'context')}, {plural(s.gaps, 'gap')}"
        )
    doc["downloaded"] = {"objects": got.objects, "bytes": got.bytes}
    doc["days"] = [s.to_json() for s in written]
    if as_json:
        typer.echo(dumps(doc))
    else:
        typer.echo(
            f"{plural(len(written), 'day')} written, {plural(len(plan.done), 'day')} already "
            f"there, in {out_dir}"
        )
