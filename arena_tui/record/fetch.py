"""``arena fetch``'s S3 side: what a range of days needs, what it costs, and the download.

Why this module exists: the archives are requester-pays, so the user pays for every byte;
the plan (objects, bytes, price) comes first and nothing is downloaded before it is shown.
Downloads are resumable and never trusted blindly:

- Every object goes into a download cache (``<data dir>/s3/<bucket>/<key>``, the ETag in
  the file's name), first as ``.part``: a re-run continues a ``.part`` with a ranged GET
  (``If-Match`` the listed ETag), checks the size and, for a single-part ETag, the MD5,
  then renames it into place. A cached object whose size and ETag match the listing is
  never fetched again.
- A day already written with the coins asked for is not even listed again.

Errors are one line (``FetchError``): no credentials, refused credentials, an endpoint that
is not a URL, a bucket or object that is not there, a truncated download. Which missing
data is a gap and which an error is decided in ``plan_day`` (docs/data.md): an empty
(0-byte) object holds no hour of data, so it is taken as a missing hour, never downloaded.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_tui.record.archive import (
    ARCHIVE_BUCKET,
    FILL_LAYOUTS,
    NODE_BUCKET,
    book_prefix,
    ctx_key,
    fills_prefix,
    parse_book_key,
    parse_fills_key,
)
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import data_dir

DEFAULT_REGION = "ap-northeast-1"  # where Hyperliquid's buckets are
PRICE_PER_GB = 0.09  # S3 data transfer out to the internet, first 10 TB a month (USD)
GB = 1 << 30
CHUNK = 1 << 20
NO_CREDENTIALS = (
    "fetch: no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
    "AWS_PROFILE, or run aws configure: the buckets are requester-pays, so anonymous "
    "requests are refused, listing included: --dry-run needs them too)"
)
_REFUSED = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "ExpiredToken",
    "InvalidToken",
    "UnrecognizedClientException",
    "AuthFailure",
    "403",
}


class FetchError(ArenaError):
    """A fetch that cannot go on, in one line."""


def cache_dir() -> Path:
    """The download cache: ``<data dir>/s3`` (``ARENA_DATA_DIR`` moves it)."""
    return data_dir() / "s3"


def history_dir() -> Path:
    """Where fetched days go unless ``--out``: ``<data dir>/history``."""
    return data_dir() / "history"


@dataclass(frozen=True)
class Obj:
    bucket: str
    key: str
    size: int
    etag: str  # without quotes

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    def cached(self, root: Path) -> Path:
        """``<root>/<bucket>/<key>`` with the ETag before the extension: a changed object
        upstream is a new file, never mistaken for the old one."""
        path = root / self.bucket / self.key
        stem, dot, ext = path.name.partition(".")
        return path.with_name(f"{stem}.{self.etag}{dot}{ext}")

    def is_cached(self, root: Path) -> bool:
        try:
            return self.cached(root).stat().st_size == self.size
        except OSError:
            return False


@dataclass
class DayPlan:
    day: dt.date
    coins: list[str]
    books: dict[str, dict[int, Obj]] = field(default_factory=dict)  # coin -> hour -> object
    ctx: Obj | None = None
    fills: dict[int, tuple[str, Obj]] = field(default_factory=dict)  # hour -> (layout, obj)
    empty: list[Obj] = field(default_factory=list)  # 0-byte objects listed: missing hours

    @property
    def compact(self) -> str:
        return self.day.strftime("%Y%m%d")

    def objects(self) -> list[Obj]:
        out = [o for hours in self.books.values() for o in hours.values()]
        out += [self.ctx] if self.ctx is not None else []
        return out + [o for _, o in self.fills.values()]


@dataclass
class Plan:
    days: list[DayPlan]
    done: list[dt.date]  # days already written with these coins: nothing to do
    cache: Path

    def objects(self) -> list[Obj]:
        seen: dict[tuple[str, str], Obj] = {}
        for d in self.days:
            for o in d.objects():
                seen.setdefault((o.bucket, o.key), o)
        return list(seen.values())

    def to_download(self) -> list[Obj]:
        return [o for o in self.objects() if not o.is_cached(self.cache)]

    def cost(self, price_per_gb: float) -> float:
        return sum(o.size for o in self.to_download()) / GB * price_per_gb

    def to_json(self, price_per_gb: float) -> dict[str, Any]:
        objs, todo = self.objects(), self.to_download()
        return {
            "days": [d.day.isoformat() for d in self.days],
            "done": [d.isoformat() for d in self.done],
            "objects": len(objs),
            "bytes": sum(o.size for o in objs),
            "download_objects": len(todo),
            "download_bytes": sum(o.size for o in todo),
            "price_per_gb": price_per_gb,
            "cost_usd": round(self.cost(price_per_gb), 4),
            "cache": str(self.cache),
            "empty": [o.uri for d in self.days for o in d.empty],  # 0 bytes: missing hours
        }


# ---- S3 ----------------------------------------------------------------------------------


def client(endpoint_url: str | None = None, region: str | None = None) -> Any:
    """A boto3 S3 client from the standard credential chain (environment, profile, SSO,
    instance role); ``AWS_ENDPOINT_URL`` or ``endpoint_url`` points it elsewhere (tests)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise FetchError(
            "fetch: boto3 is not installed: pip install 'arena[fetch]' (or boto3)"
        ) from None
    session = boto3.session.Session()
    if session.get_credentials() is None:
        raise FetchError(NO_CREDENTIALS)
    try:
        return session.client(
            "s3",
            endpoint_url=endpoint_url or None,
            region_name=region or session.region_name or DEFAULT_REGION,
            config=Config(retries={"max_attempts": 5, "mode": "standard"}),
        )
    except ValueError as exc:  # botocore: "Invalid endpoint: notaurl", a bad region name
        given = endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
        if given is not None and str(given) in str(exc):
            where = "--endpoint-url" if endpoint_url else "AWS_ENDPOINT_URL"
            raise FetchError(
                f"fetch: {where} {given!r}: not a URL (want http://HOST:PORT or https://HOST)"
            ) from None
        if region and region in str(exc):
            raise FetchError(
                f"fetch: --region {region!r}: not a region name (e.g. {DEFAULT_REGION})"
            ) from None
        raise FetchError(f"fetch: {exc}") from None


def s3_error(exc: Exception, what: str) -> FetchError:
    """A boto3/botocore failure as one line."""
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return FetchError(NO_CREDENTIALS)
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code, msg = str(err.get("Code", "")), str(err.get("Message", "")) or str(exc)
        if code in _REFUSED:
            return FetchError(f"fetch: AWS refused the credentials for {what} ({code}: {msg})")
        if code in ("NoSuchKey", "404", "NotFound"):
            return FetchError(f"fetch: {what}: no such object (it was listed a moment ago)")
        if code == "NoSuchBucket":
            return FetchError(f"fetch: {what}: no such bucket")
        return FetchError(f"fetch: {what}: {code}: {msg}")
    if isinstance(exc, EndpointConnectionError):
        return FetchError(f"fetch: {what}: cannot reach S3 ({exc})")
    return FetchError(f"fetch: {what}: {exc}")


def list_objects(s3: Any, bucket: str, prefix: str) -> Iterator[Obj]:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix, RequestPayer="requester"
        )
        for page in pages:
            for o in page.get("Contents", []):
                yield Obj(bucket, o["Key"], int(o["Size"]), o["ETag"].strip('"'))
    except (ClientError, BotoCoreError) as exc:
        raise s3_error(exc, f"listing s3://{bucket}/{prefix}") from None


# ---- the plan ----------------------------------------------------------------------------


def days_between(first: dt.date, last: dt.date) -> list[dt.date]:
    if last < first:
        raise FetchError(f"fetch: --to {last} is before --from {first}")
    return [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]


def plan_day(s3: Any, day: dt.date, coins: Sequence[str]) -> DayPlan:
    """List one day's objects of the three channels for ``coins``.

    An hour the archive has no object for is a gap (the day is written without it, with a
    gap input), and so is a day without its asset contexts' CSV (the CSVs have stopped
    before the books and fills before); a coin's books or the fills with no object at all
    that day is an error, named, since the archive is uploaded about monthly and the day is
    most likely not there yet. An empty (0-byte) object is not an LZ4 frame and holds no
    data: it counts as no object (a gap), is kept in ``empty`` to be said, and is never
    downloaded.
    """
    p = DayPlan(day, list(coins))
    d = p.compact
    wanted = set(coins)

    def listed(bucket: str, prefix: str) -> Iterator[Obj]:
        for o in list_objects(s3, bucket, prefix):
            if o.size == 0:
                p.empty.append(o)
            else:
                yield o

    for o in listed(ARCHIVE_BUCKET, book_prefix(d)):
        parsed = parse_book_key(o.key)
        if parsed is not None and parsed[1] in wanted:
            p.books.setdefault(parsed[1], {})[parsed[0]] = o
    p.empty = [o for o in p.empty if (parse_book_key(o.key) or (0, ""))[1] in wanted]
    for coin in coins:
        if not p.books.get(coin):
            raise FetchError(
                f"fetch: s3://{ARCHIVE_BUCKET}/{book_prefix(d)}H/l2Book/{coin}.lz4: no object "
                f"for any hour of {day}{_or_empty(p, coin)} (the archive is uploaded about "
                "monthly; is the day there yet, and is the coin's name exact?)"
            )
    key = ctx_key(d)
    found = [o for o in listed(ARCHIVE_BUCKET, key) if o.key == key]
    p.ctx = found[0] if found else None  # none: a day-long gap in the contexts, said
    for layout in reversed(FILL_LAYOUTS):  # oldest first: a newer layout's hour wins
        for o in listed(NODE_BUCKET, fills_prefix(layout, d)):
            hour = parse_fills_key(o.key)
            if hour is not None:
                p.fills[hour] = (layout, o)
    if not p.fills:
        raise FetchError(
            f"fetch: s3://{NODE_BUCKET}/{{{','.join(FILL_LAYOUTS)}}}/hourly/{d}/: no fills "
            f"for any hour of {day}{_or_empty(p, None)} (the node's fills start on 2025-03-22)"
        )
    return p


def _or_empty(p: DayPlan, coin: str | None) -> str:
    """What to add to "no object for any hour of DAY" when the listing held empty (0-byte)
    objects of that coin's books (``coin``) or of the fills (None): ", only N empty ..."."""
    if coin is not None:
        n = sum((parse_book_key(o.key) or (0, ""))[1] == coin for o in p.empty)
    else:
        n = sum(o.bucket == NODE_BUCKET for o in p.empty)
    return f", only {n} empty (0-byte) one{'' if n == 1 else 's'}" if n else ""


def make_plan(
    s3: Any,
    days: Sequence[dt.date],
    coins_of: Callable[[dt.date], list[str] | None],
    cache: Path,
    progress: Callable[[str], None] | None = None,
) -> Plan:
    """``coins_of(day)``: the coins to write that day (None: the day is done already)."""
    plans: list[DayPlan] = []
    done: list[dt.date] = []
    for day in days:
        coins = coins_of(day)
        if coins is None:
            done.append(day)
            continue
        if progress is not None:
            progress(f"listing {day}")
        plans.append(plan_day(s3, day, coins))
    return Plan(plans, done, cache)


# ---- downloading -------------------------------------------------------------------------


@dataclass
class Downloaded:
    objects: int = 0
    bytes: int = 0  # bytes received (a resumed .part's first bytes are not counted again)


def download_all(
    s3: Any,
    objs: Sequence[Obj],
    root: Path,
    progress: Callable[[int, int, int], None] | None = None,
) -> Downloaded:
    """Fetch every object not cached yet; ``progress(done objects, done bytes, total)``."""
    got = Downloaded()
    total = sum(o.size for o in objs)
    for o in objs:
        got.bytes += download(s3, o, root)
        got.objects += 1
        if progress is not None:
            progress(got.objects, got.bytes, total)
    return got


def download(s3: Any, o: Obj, root: Path) -> int:
    """One object into the cache (resuming its ``.part``); the bytes received."""
    from botocore.exceptions import BotoCoreError, ClientError

    path = o.cached(root)
    if o.is_cached(root):
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    if have > o.size:
        part.unlink()
        have = 0
    received = 0
    if have < o.size:
        args: dict[str, Any] = {
            "Bucket": o.bucket,
            "Key": o.key,
            "RequestPayer": "requester",
            "IfMatch": f'"{o.etag}"',
        }
        if have:
            args["Range"] = f"bytes={have}-"
        try:
            with part.open("ab") as f:  # before the GET: an object asked for has a .part
                body = s3.get_object(**args)["Body"]
                for chunk in body.iter_chunks(CHUNK):
                    f.write(chunk)
                    received += len(chunk)
                f.flush()
                os.fsync(f.fileno())
        except (ClientError, BotoCoreError) as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
            if code in ("PreconditionFailed", "412", "InvalidRange", "416"):
                part.unlink(missing_ok=True)  # changed upstream since listed: start over
                raise FetchError(
                    f"fetch: {o.uri}: changed while downloading; run the fetch again"
                ) from None
            raise s3_error(exc, o.uri) from None
    _verify(o, part)
    os.replace(part, path)
    for old in path.parent.glob(path.name.partition(".")[0] + ".*"):
        if old != path and not old.name.endswith(".part"):
            old.unlink(missing_ok=True)  # an older version of the object
    return received


def _verify(o: Obj, part: Path) -> None:
    size = part.stat().st_size
    if size != o.size:
        part.unlink()
        raise FetchError(
            f"fetch: {o.uri}: truncated download ({size:,} of {o.size:,} bytes); "
            "run the fetch again"
        )
    if len(o.etag) == 32 and "-" not in o.etag:  # a single-part upload: the ETag is the MD5
        md5 = hashlib.md5(usedforsecurity=False)
        with part.open("rb") as f:
            while chunk := f.read(CHUNK):
                md5.update(chunk)
        if md5.hexdigest() != o.etag:
            part.unlink()
            raise FetchError(
                f"fetch: {o.uri}: the download does not match its ETag (MD5 {md5.hexdigest()}, "
                f"ETag {o.etag}); run the fetch again"
            )
