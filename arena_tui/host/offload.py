"""Large public bodies sent from a file by a worker thread, off the event loop.

Why this module exists: the event loop that answers public reads also answers every
entrant's order, so what a reader costs it must not grow with what the reader reads.
Writing a log's megabytes to a socket on the loop (``transport.write`` of each piece) held
it for most of its time under 50 readers (py-spy: two thirds of the loop's samples in the
socket writes), and an entrant's order p50 went from 5 ms to 300 ms.

So ``arena host`` serves HTTP with :class:`OffloadProtocol`, uvicorn's h11 protocol plus
one ASGI extension, ``arena.sendfile``: a response that has sent its start (with its
``Content-Length``) may send ``{"type": "arena.sendfile", "path", "offset", "count"}``.
The protocol tells h11 that ``count`` body bytes were sent (its documented way to let the
caller send data itself, ``send_with_data_passthrough``), then a thread of its own pool
copies the bytes with ``os.sendfile`` (kernel to kernel, no Python bytes) to a duplicate of
the connection's socket: the loop keeps taking requests meanwhile, and the thread holds
the GIL only between system calls. The duplicate keeps the socket itself open until the
thread is done, so a connection the loop closes meanwhile can never see its descriptor
number reused by another connection under the thread. A reader that stops reading for
``IDLE_S`` loses its connection (the thread gives up), as does one that goes away.

Copying bytes still costs the machine CPU, some of it in the kernel's network path on
whatever thread runs there (on loopback, the receiving side's work too, often on the
loop's own thread): at 430 MB/s to 50 readers the orders' p99 was still 70 times idle.
So the pool sends at most :data:`PACE`'s bytes per second, all readers together (the
host's ``--log-rate``): readers share a bounded cost instead of taking what they can.
(Running the threads at the lowest CPU priority instead made it worse: a thread
preempted while holding the GIL kept the loop waiting for it, p99 5.7 s.)

A server without the extension (Starlette's test client) gets the same bytes read in
pieces in the same pool (:func:`pieces`); neither way uses the loop's default executor,
which the session's fsync runs in.
"""

from __future__ import annotations

import asyncio
import os
import select
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

EXTENSION = "arena.sendfile"
STEP = 1 << 18  # bytes one os.sendfile call may move (it returns what fits)
PIECE = 1 << 20  # the fallback's read size
IDLE_S = 30.0  # a reader that takes no byte for this long is dropped
CHECK_S = 0.5  # how often a waiting sender looks whether the server is stopping
THREADS = 16  # bodies sent at once; more wait for a thread (not the loop)


class Pace:
    """The bytes per second the pool may send, all threads together (0: no cap): each
    thread, having sent n bytes, waits until the total so far is due at the rate."""

    def __init__(self, rate: int = 0) -> None:
        self.rate = rate
        self._next = 0.0
        self._lock = threading.Lock()

    def after(self, sent: int) -> float:
        """Seconds to wait after sending ``sent`` bytes."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            self._next = max(now, self._next) + sent / self.rate
            return self._next - now


PACE = Pace()  # (the host sets its rate: --log-rate)
_POOL = ThreadPoolExecutor(THREADS, thread_name_prefix="arena-sendfile")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
App = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


class _Placeholder:
    """What h11 counts as ``count`` bytes of body without their being in memory."""

    __slots__ = ("count",)

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count


def pump(
    out_fd: int,
    path: Path,
    offset: int,
    count: int,
    *,
    idle_s: float = IDLE_S,
    pace: Pace = PACE,
    abort: threading.Event | None = None,
) -> bool:
    """Send ``count`` bytes of ``path`` from ``offset`` to the socket ``out_fd`` (non-
    blocking; closed here). True when all were sent; False if the peer went away, stopped
    reading for ``idle_s``, the file ended first, or ``abort`` was set (the server stops)."""
    try:
        src = os.open(path, os.O_RDONLY)
    except OSError:
        os.close(out_fd)
        return False
    poller = select.poll()
    poller.register(out_fd, select.POLLOUT)
    abort = abort or threading.Event()
    try:
        idle = 0.0
        while count > 0 and not abort.is_set():
            try:
                sent = os.sendfile(out_fd, src, offset, min(count, STEP))
            except BlockingIOError:
                if poller.poll(CHECK_S * 1000):
                    continue
                idle += CHECK_S
                if idle >= idle_s:
                    return False
                continue
            except OSError:
                return False
            if sent == 0:
                return False
            idle = 0.0
            offset += sent
            count -= sent
            wait = pace.after(sent)
            if wait > 0:
                abort.wait(wait)
        return count == 0
    finally:
        os.close(src)
        os.close(out_fd)


async def pieces(path: Path, start: int, end: int) -> AsyncIterator[bytes]:
    """The bytes ``[start, end)`` of ``path`` in pieces read in the pool (the fallback)."""
    loop = asyncio.get_running_loop()
    fd = await loop.run_in_executor(_POOL, os.open, path, os.O_RDONLY)
    try:
        pos = start
        while pos < end:
            piece = await loop.run_in_executor(_POOL, os.pread, fd, min(PIECE, end - pos), pos)
            if not piece:  # (the file never shrinks while the server holds its lock)
                return
            yield piece
            pos += len(piece)
    finally:
        os.close(fd)


class _Corked:
    """A connection's transport that holds an answer's writes until it is whole, then
    writes them at once: the head and a small body in one system call and one segment
    instead of two (on loopback each write also runs the reader's side of TCP)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self._held: list[bytes] | None = None

    def cork(self) -> None:
        self._held = []

    def uncork(self) -> None:
        held, self._held = self._held, None
        if held:
            self.transport.write(b"".join(held))

    def write(self, data: bytes) -> None:
        if self._held is None:
            self.transport.write(data)
        elif data:
            self._held.append(data)

    def close(self) -> None:
        """What is held first: uvicorn closes a connection that must not be kept alive
        (``Connection: close``, HTTP/1.0, the server stopping) inside the answer's last
        write, before the answer is uncorked, and a closed transport drops what it is
        given after (every such answer was lost: the client saw the connection close)."""
        self.uncork()
        self.transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class OffloadProtocol(H11Protocol):
    """uvicorn's h11 protocol with the ``arena.sendfile`` extension (module docstring),
    writing each answer's head and body together (:class:`_Corked`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        inner: App = self.app

        async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            scope.setdefault("extensions", {})[EXTENSION] = {}
            corked = self.transport
            assert isinstance(corked, _Corked)

            async def sending(message: dict[str, Any]) -> None:
                kind = message["type"]
                if kind == "http.response.start":
                    corked.cork()
                    await send(message)
                    return
                if kind == EXTENSION:
                    corked.uncork()
                    await self._sendfile(send, message)
                    return
                try:
                    await send(message)
                finally:
                    corked.uncork()

            try:
                await inner(scope, receive, sending)
            finally:
                corked.uncork()

        self.app = app

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _Corked(transport)  # type: ignore[assignment]  # (delegates)

    async def _sendfile(self, send: Send, message: dict[str, Any]) -> None:
        transport, count = self.transport, int(message["count"])
        while transport.get_write_buffer_size() and not transport.is_closing():
            await asyncio.sleep(0.001)  # (the head first: it is on the wire before the body)
        if transport.is_closing():
            return
        body = h11.Data(data=_Placeholder(count))  # type: ignore[arg-type]  # (h11's way)
        parts: list[Any] = self.conn.send_with_data_passthrough(body) or []
        if len(parts) != 1 or not isinstance(parts[0], _Placeholder):
            raise RuntimeError("arena.sendfile needs a response framed by Content-Length")
        sock = transport.get_extra_info("socket")
        out_fd = os.dup(sock.fileno())
        loop = asyncio.get_running_loop()
        path, offset = Path(message["path"]), int(message["offset"])
        abort = threading.Event()
        job = partial(pump, out_fd, path, offset, count, abort=abort)
        try:
            done = await loop.run_in_executor(_POOL, job)
        except asyncio.CancelledError:  # (the server stops: its thread stops too)
            abort.set()
            raise
        if done:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        transport.abort()  # (the body is cut: the connection cannot carry another answer)
        await asyncio.sleep(0)  # (uvicorn learns the connection is lost before the app ends)
