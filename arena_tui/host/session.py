"""The engine's one owner: every input is logged, fsynced, then applied, in log order.

Why this module exists: the contract's durability rule ("every accepted request is in the
log, written and fsynced, before the engine sees it and before the answer is sent") and
the engine's single thread are kept in one place. One asyncio task takes inputs from one
queue (requests from the handlers, market data from the feed thread, ticks), stamps each
with ``t = max(its time, the last t)`` so ``t`` never decreases, appends the whole batch,
fsyncs it once in a worker thread (group commit: requests that arrive meanwhile wait for
the next batch), then applies it line by line and resolves each request with the events
its line caused. A restart is a replay: :meth:`Session.open` runs the log through a fresh
engine before anything new is taken (and notes each entry's latest orders and cancels,
from which the server's rate limit rebuilds its window), from the newest checkpoint that
matches the log when there is one (``host.checkpoint``: one is written every
``--checkpoint-every`` of log time, copied here after a batch, encoded between requests
and written in a thread; the log's SHA-256 is kept up to date as it is written, to name
it; after a quick check, the whole prefix is checked behind the start, and a mismatch
stops the host with one line). ``durable_size`` is how
much of the log is whole lines written and fsynced (set after the start-up replay, which
follows the cut of a torn tail, and after each batch's fsync): all ``GET /v1/log`` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import msgspec

from arena_tui.host.checkpoint import FORMAT, Capture, Checkpoints, Meta, capture
from arena_tui.host.metrics import Dials, now_s
from arena_tui.host.prefix import Behind
from arena_tui.host.store import ScoreStore
from arena_tui.host.views import Views
from arena_tui.logs.logfile import TICK_LINE, LogError, LogReader, first_line
from arena_tui.logs.writer import LogWriter
from arena_tui.util.human import Progress
from engine import Engine, Line, MalformedInput, Season
from engine import events as ev
from engine.inputs import Cancel, Gap, Order, tick

MAX_BATCH = 1024
FeedItem = tuple[int, bytes, Line]  # (t, the line's bytes after '{"t":N,', the line)

_LINE = msgspec.json.Decoder(Line)
_ENCODE = msgspec.json.Encoder().encode


class LogWriteError(Exception):
    """The log could not be written: the server stops (one line)."""


class CheckpointMismatch(Exception):
    """The checkpoint this start began from does not match the log (one line)."""


class _Abort:
    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


class _Request:
    __slots__ = ("doc", "future")

    def __init__(self, doc: dict[str, Any], future: asyncio.Future[list[ev.AnyEvent]]) -> None:
        self.doc = doc
        self.future = future


class _Tick:
    __slots__ = ("t",)

    def __init__(self, t: int) -> None:
        self.t = t


_STOP = object()
Item = _Request | _Tick | tuple[int, bytes, Line] | _Abort | object


def settle(freeze: bool = True) -> None:
    """When ``freeze`` (the host's own process): move every object alive now out of the
    garbage collector's full passes, after a collection of the young ones: the season's
    state, its views and the fills they keep.

    A full pass stops the whole process, order path included, for as long as it takes to
    scan what is tracked, which grows with the season (a few dozen ms at four weeks; the
    ``arena_gc_pause_seconds`` dial). What is moved is still freed when nothing refers to it;
    only a cycle of garbage in the old generation at that moment is never freed, a
    bounded cost once an hour of log time (``--checkpoint-every``)."""
    if freeze:
        gc.collect(1)
        gc.freeze()


def count_gap(dials: Dials, gap: Gap) -> None:
    """A ``gap`` input on the dials: one more, and the time it covers."""
    dials.gaps.labels(gap.reason or "unknown").inc()
    dials.gap_seconds.inc(max(0, gap.to - gap.from_) / 1000)


def stamp(item: Item, last_t: int | None, clock: Callable[[], int]) -> tuple[bytes, Line]:
    """An input's line as logged: ``t = max(its time, the last t)`` (a request's time is
    the wall clock's now), its bytes and its decoded line."""
    last = last_t if last_t is not None else -(1 << 62)
    if isinstance(item, _Request):
        t = max(clock(), last)
        raw = b'{"t":%d,"arena":%s}' % (t, _ENCODE(item.doc))
        return raw, _LINE.decode(raw)
    if isinstance(item, _Tick):
        t = max(item.t, last)
        return TICK_LINE % t, tick(t)
    assert isinstance(item, tuple)
    t0, body, line = item
    t = max(t0, last)
    if line.t != t:
        line = msgspec.structs.replace(line, t=t)
    return b'{"t":%d,' % t + body, line


def _told(size: int) -> None:
    """No one follows the log (``Session.on_durable``'s default)."""


class Session:
    """See the module docstring. ``clock``: wall ms, for the ``t`` of requests."""

    def __init__(
        self,
        season: Season,
        log: Path,
        header: dict[str, Any],
        store: ScoreStore,
        *,
        clock: Callable[[], int],
        fsync: bool = True,
        checkpoints: Checkpoints | None = None,
        freeze_gc: bool = False,
    ) -> None:
        self.season = season
        self.coins = [m.coin for m in season.markets]
        self.checkpoints = checkpoints
        self.freeze_gc = freeze_gc  # the host's own process: settle() at start, checkpoints
        self.hasher = hashlib.sha256()  # of the log's bytes so far: a checkpoint's name
        self._hashed = 0
        self.resumed_at: int | None = None  # the checkpoint's offset this start began at
        self.mismatched: str | None = None  # (set by the check behind a quick start)
        self._checkpointed: tuple[int, int | None] = (-1, None)  # (inputs, last_t) of the last
        self._checkpoint_task: asyncio.Task[None] | None = None
        self.log = log
        self.header = header
        self.store = store
        self.clock = clock
        self.fsync = fsync
        self.engine = Engine(season)
        self.views = Views(self.engine)
        self.last_t: int | None = None
        self.requests: dict[str, deque[int]] = {}  # each entry's latest orders' and cancels' t
        self.replayed = 0
        self.written = 0  # lines written this run
        self.applied = 0  # lines of this run the engine has applied
        self.batches = 0
        # bytes of the log that are whole lines written and fsynced: what GET /v1/log serves
        self.durable_size = 0
        self.on_durable: Callable[[int], None] = _told  # each batch's (host.readers): no wait
        self.failure: BaseException | None = None
        self.dials = Dials()  # (this session's own metrics registry: GET /metrics)
        self._f: IO[bytes] | None = None
        self._queue: asyncio.Queue[Item] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # ---- start: the log so far ---------------------------------------------------------

    def open(self, progress: Progress | None = None) -> None:
        """Cut a torn tail (or write the header of a new log), take the newest checkpoint
        that matches the log (if any), replay the rest, open to append."""
        LogWriter(self.log, self.header).close()
        restored = None if self.checkpoints is None else self.checkpoints.load(self.season)
        offset = 0
        if restored is not None:
            meta = restored.meta
            self.engine, self.views, self.hasher = restored.engine, restored.views, restored.hasher
            keep = self.season.rules.rate_limit_requests
            self.requests = {e: deque(ts, maxlen=keep) for e, ts in restored.requests.items()}
            self.last_t, self.replayed, offset = meta.last_t, meta.inputs, meta.offset
            self.resumed_at = offset
            self._checkpointed = (meta.inputs, meta.last_t)
            if isinstance(self.hasher, Behind):
                self.hasher.on_mismatch = self._mismatch
                self.hasher.start()
        self._replay(offset, progress)
        self.store.put(self.views.rows.values())
        settle(self.freeze_gc)
        self._f = open(self.log, "ab")  # noqa: SIM115 - closed in close()
        self.durable_size = self._f.seek(0, os.SEEK_END)  # (a torn tail was cut above)
        if self.durable_size != self._hashed:  # (the lock keeps arena's writers out)
            raise LogError(self.log, None, "the log changed while it was replayed")

    def _logged(self, entry: str, t: int) -> None:
        """An order or cancel of ``entry`` at ``t`` is in the log (the rate limit's past)."""
        mine = self.requests.get(entry)
        if mine is None:
            mine = self.requests[entry] = deque(maxlen=self.season.rules.rate_limit_requests)
        mine.append(t)

    def _replay(self, offset: int, progress: Progress | None) -> None:
        """Apply the log's inputs after byte ``offset`` (0: all of them), hashing them."""
        tail = _Tail(self.log, offset, self.hasher)
        reader = LogReader([self.log], self.coins, hashed=False, opener=tail.open)
        before = self.replayed  # (line numbers go on from the checkpoint's)
        apply, views, logged = self.engine.apply, self.views, self._logged
        try:
            for line in reader:
                try:
                    events = apply(line)
                except MalformedInput as exc:
                    raise reader.error(str(exc)) from None
                views.apply(line, reader.raw, events, live=False)
                if isinstance(line.arena, Order | Cancel):
                    logged(line.arena.entry, line.t)
                self.last_t = line.t
                self.replayed += 1
                if progress is not None and not self.replayed & 0x3FFF:
                    progress.update(self.replayed, line.t)
        except LogError as exc:
            if not offset or not exc.lineno or exc.lineno < 2:
                raise
            raise LogError(exc.path, exc.lineno + before, exc.message) from None
        if progress is not None:
            progress.done()
        views.changed.clear()
        self._hashed = offset + tail.consumed

    # ---- the engine task ---------------------------------------------------------------

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue = asyncio.Queue()

    def _mismatch(self, why: str) -> None:
        """The check behind a quick start found the log's prefix altered (its thread):
        this log's checkpoints go, and the engine task stops with ``why``."""
        if self.checkpoints is not None:
            with contextlib.suppress(OSError):
                self.checkpoints.remove_all()
        self.mismatched = why
        loop, queue = self._loop, self._queue
        if loop is not None and queue is not None:
            with contextlib.suppress(RuntimeError):  # (the loop has closed: stopped anyway)
                loop.call_soon_threadsafe(queue.put_nowait, _Abort(why))

    @property
    def _hash_ready(self) -> bool:
        """Whether the log's running hash is known (it is not while checked behind)."""
        return not isinstance(self.hasher, Behind) or self.hasher.ready

    async def run(self) -> None:
        """Take batches until stopped; a failure to write the log ends it (and the server),
        as does a checkpoint found not to match the log behind a quick start."""
        queue = self._queue
        assert queue is not None
        try:
            if self.mismatched is not None:
                raise CheckpointMismatch(self.mismatched)
            while True:
                batch = [await queue.get()]
                while len(batch) < MAX_BATCH and not queue.empty():
                    batch.append(queue.get_nowait())
                abort = next((b for b in batch if type(b) is _Abort), None)
                if abort is not None:
                    for b in batch:
                        if isinstance(b, _Request) and not b.future.done():
                            b.future.set_exception(LogWriteError("the server is stopping"))
                    raise CheckpointMismatch(abort.why)
                stop = _STOP in batch
                await self._commit([b for b in batch if b is not _STOP])
                if stop:
                    await self._last_checkpoint()
                    return
        except BaseException as exc:
            self.failure = exc
            self._fail_pending(queue)
            raise

    async def _commit(self, batch: list[Item]) -> None:
        if self.engine.over:  # the season is over: only requests still get (their) answer
            batch = [b for b in batch if isinstance(b, _Request)]
        if not batch:
            return
        stamped = []
        for item in batch:
            raw, line = stamp(item, self.last_t, self.clock)
            self.last_t = line.t
            if type(line.arena) is Gap:
                count_gap(self.dials, line.arena)
            stamped.append((raw, line))
        f = self._f
        assert f is not None
        self.written += len(stamped)  # (before the bytes land: a watcher of the file waits
        data = b"".join(raw + b"\n" for raw, _ in stamped)
        try:  # for applied to catch up with it)
            f.write(data)
            f.flush()
            if self.fsync:
                started = now_s()
                await asyncio.to_thread(os.fsync, f.fileno())
                self.dials.fsync.observe(now_s() - started)
        except OSError as exc:
            raise LogWriteError(f"{self.log}: cannot write the log: {exc}") from None
        self.durable_size += len(data)
        self.hasher.update(data)
        self.batches += 1
        apply, views = self.engine.apply, self.views
        for (raw, line), item in zip(stamped, batch, strict=True):
            events = apply(line)  # a MalformedInput here is a bug: the checks come first
            views.apply(line, raw, events, live=True)
            if isinstance(line.arena, Order | Cancel):
                self._logged(line.arena.entry, line.t)
            self.applied += 1
            if isinstance(item, _Request) and not item.future.done():
                item.future.set_result(events)
        if views.changed:
            self.store.put(views.take_changed())
        self.on_durable(self.durable_size)  # (after the answers: the main port shows it first)
        if self.checkpoints is not None and self._checkpoint_task is None and self._hash_ready:
            self._maybe_checkpoint()

    # ---- checkpoints -------------------------------------------------------------------

    def _capture(self) -> Capture:
        inputs = self.replayed + self.applied
        meta = Meta(
            format=FORMAT,
            season=self.season.id,
            rules_sha256=self.season.rules_sha256,
            offset=self.durable_size,
            log_sha256=self.hasher.hexdigest(),
            inputs=inputs,
            last_t=self.last_t,
            head_sha256="",  # (filled from the file where it is written)
            tail_sha256="",
        )
        self._checkpointed = (inputs, self.last_t)
        return capture(meta, self.engine, self.views, self.requests)

    def _maybe_checkpoint(self) -> None:
        """Every ``every_ms`` of log time (and first after a start with no checkpoint):
        copy the state now, encode and write it while orders go on."""
        ck, t, last = self.checkpoints, self.last_t, self._checkpointed[1]
        assert ck is not None
        if t is None or (last is not None and t - last < ck.every_ms):
            return
        cap = self._capture()
        settle(self.freeze_gc)
        self._checkpoint_task = asyncio.get_running_loop().create_task(self._checkpoint(cap))

    async def _checkpoint(self, cap: Capture) -> None:
        ck = self.checkpoints
        assert ck is not None
        try:
            await ck.write(cap)
        except Exception as exc:  # a cache: the log is whole, a restart replays more
            ck.note(f"checkpoint at byte {cap.meta.offset} not written: {exc}")
        finally:
            self._checkpoint_task = None

    async def _last_checkpoint(self) -> None:
        """On a clean stop: wait for a checkpoint being written, then write one of the
        state now if anything was applied since the last."""
        task = self._checkpoint_task
        if task is not None:
            await task
        more = self.replayed + self.applied > self._checkpointed[0]
        if self.checkpoints is not None and more and self._hash_ready:
            await self._checkpoint(self._capture())

    @property
    def taking_orders(self) -> bool:
        """The log is open for appending and no write of it has failed (GET /healthz)."""
        f = self._f
        return self.failure is None and f is not None and not f.closed

    def _fail_pending(self, queue: asyncio.Queue[Item]) -> None:
        while not queue.empty():
            item = queue.get_nowait()
            if isinstance(item, _Request) and not item.future.done():
                item.future.set_exception(LogWriteError("the server stopped"))

    # ---- what goes in ------------------------------------------------------------------

    async def submit(self, doc: dict[str, Any]) -> list[ev.AnyEvent]:
        """Log and apply one arena input; the events it caused, once it is durable."""
        if self.failure is not None:
            raise LogWriteError("the server is stopping")
        assert self._loop is not None and self._queue is not None
        future: asyncio.Future[list[ev.AnyEvent]] = self._loop.create_future()
        self._queue.put_nowait(_Request(doc, future))
        return await future

    def push_tick(self, t: int) -> None:
        assert self._queue is not None
        self._queue.put_nowait(_Tick(t))

    def push_feed(self, items: list[FeedItem]) -> None:
        """Market data from another thread (thread-safe)."""
        loop, queue = self._loop, self._queue
        assert loop is not None and queue is not None

        def put() -> None:
            for item in items:
                queue.put_nowait(item)

        with contextlib.suppress(RuntimeError):  # the loop has closed: the server is gone
            loop.call_soon_threadsafe(put)

    def stop(self) -> None:
        assert self._queue is not None
        self._queue.put_nowait(_STOP)

    def close(self) -> None:
        if self._f is not None and not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


class _Tail:
    """Opens the log for a reader from byte ``offset``: its header line first (a reader
    wants one), then the bytes after ``offset``, each fed to ``hasher`` (the header only
    when ``offset`` is 0: a checkpoint's hash covers it)."""

    def __init__(self, path: Path, offset: int, hasher: Any) -> None:
        self.path = path
        self.offset = offset
        self.hasher = hasher
        self.consumed = 0  # bytes after offset read
        self._f: IO[bytes] | None = None
        self._head = first_line(path) + b"\n" if offset else b""

    def open(self, _: str) -> IO[bytes]:
        self._f = open(self.path, "rb")  # noqa: SIM115 - closed by __exit__
        self._f.seek(self.offset)
        return cast(IO[bytes], self)

    def __enter__(self) -> _Tail:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._f is not None:
            self._f.close()

    def read(self, n: int) -> bytes:
        if self._head:
            head, self._head = self._head, b""
            return head
        assert self._f is not None
        chunk = self._f.read(n)
        self.hasher.update(chunk)
        self.consumed += len(chunk)
        return chunk
