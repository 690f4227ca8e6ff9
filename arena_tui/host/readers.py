"""``--readers-port``: the child process serving the public reads, as the host runs it.

Why this module exists: the host's side of ``host.follower`` kept apart from the serving
(``server``). The host binds the reader port itself (a port in use is a one-line error at
the start, and port 0 is known at once), then a watcher thread spawns
``python -m arena_tui.host.follower`` (a fresh interpreter, never a fork of the running
loop) in its own session, the listening socket passed down, and writes it its
configuration. From then on the loop tells it each new durable size after each batch: one
non-blocking write of a short line to a pipe, never waited for (a full pipe keeps only
the newest size, sent when the pipe drains), so the child can neither stop nor slow the
orders' durability. The pipe is also how the child learns that the host is gone: its end,
on a clean stop or a ``kill -9`` alike, stops the child.

A child that exits while the host runs is said on stderr in one line and started again
(after 1 s, doubling up to 30 s while it keeps failing within a minute of its start);
the orders and the main port's public reads go on meanwhile, and connections to the
reader port wait in its backlog.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from arena_tui.host.clients import ReaderOptions
from arena_tui.host.session import Session
from engine import Season

FIRST_DELAY_S = 1.0
MAX_DELAY_S = 30.0
STEADY_S = 60.0  # a child that ran this long before exiting is restarted after FIRST_DELAY_S
STOP_WAIT_S = 5.0
NICE = 10  # the child's: on the host's cores, the orders' loop comes first


class Config(msgspec.Struct, forbid_unknown_fields=True):
    """What the host tells the child first (one JSON line on its stdin)."""

    log: str
    season_file: str  # base64 of the season file's bytes, as the host read them
    season_id: str
    rules_sha256: str
    fd: int  # the listening socket, bound by the host
    body_max: int
    default: list[int] | None
    by_path: dict[str, list[int] | None]
    trusted: list[str]
    log_rate: int
    total: list[int] | None
    nice: int = NICE


def config_for(
    log: Path, season_file: bytes, season: Season, fd: int, body_max: int, r: ReaderOptions
) -> bytes:
    """The first line the host writes on the child's stdin."""
    conf = Config(
        log=str(log),
        season_file=base64.b64encode(season_file).decode("ascii"),
        season_id=season.id,
        rules_sha256=season.rules_sha256,
        fd=fd,
        body_max=body_max,
        default=None if r.default is None else list(r.default),
        by_path={p: None if v is None else list(v) for p, v in r.by_path.items()},
        trusted=[str(n) for n in r.trusted],
        log_rate=r.log_rate,
        total=None if r.total is None else list(r.total),
    )
    return msgspec.json.encode(conf) + b"\n"


def reader_options(conf: Config) -> ReaderOptions:
    def limit(v: list[int] | None) -> tuple[int, int] | None:
        return None if v is None else (int(v[0]), int(v[1]))

    return ReaderOptions(
        default=limit(conf.default),
        by_path={p: limit(v) for p, v in conf.by_path.items()},
        trusted=tuple(ipaddress.ip_network(t) for t in conf.trusted),
        log_rate=conf.log_rate,
        total=limit(conf.total),
    )


class ReaderProcess:
    """The reader process of one host run (module docstring)."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        log: Path,
        season_file: bytes,
        body_max: int,
        readers: ReaderOptions,
        note: Callable[[str], None],
    ) -> None:
        self.sock = sock
        self.log = log
        self.season_file = season_file
        self.body_max = body_max
        self.readers = readers
        self.note = note
        self.served: int | None = None  # the child's applied offset, as it last said
        self.pid: int | None = None
        self.started = threading.Event()  # the first child answers
        self.restarts = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: Session | None = None
        self._fd: int | None = None  # the write end of the current child's stdin
        self._blocked = False
        self._want = 0
        self._want_at = 0  # time.monotonic_ns() when the log became durable up to _want
        self._stopping = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://{host}:{port}"

    def lag(self) -> int | None:
        """Bytes the reader port is behind the log's durable size (None: not known yet)."""
        session, served = self._session, self.served
        if session is None or served is None:
            return None
        return max(0, session.durable_size - served)

    # ---- the loop's side ---------------------------------------------------------------

    def start(self, session: Session) -> None:
        """On the host's loop: tell the child every durable size from now on."""
        self._loop = asyncio.get_running_loop()
        self._session = session
        self._want, self._want_at = session.durable_size, time.monotonic_ns()
        session.on_durable = self.tell
        self._thread = threading.Thread(target=self._watch, name="arena-readers", daemon=True)
        self._thread.start()

    def tell(self, size: int) -> None:
        """The log is durable up to ``size`` (the loop, after a batch): never blocks."""
        self._want, self._want_at = size, time.monotonic_ns()
        if self._fd is not None and not self._blocked:
            self._flush()

    def _flush(self) -> None:
        fd, loop = self._fd, self._loop
        assert fd is not None and loop is not None
        try:
            os.write(fd, b"%d %d\n" % (self._want, self._want_at))  # (< PIPE_BUF: atomic)
        except BlockingIOError:  # the child is slow: the newest size, when it drains
            self._blocked = True
            loop.add_writer(fd, self._drained)
        except OSError:  # the child is gone: the watcher starts another
            pass

    def _drained(self) -> None:
        assert self._fd is not None and self._loop is not None
        self._loop.remove_writer(self._fd)
        self._blocked = False
        self._flush()

    def _install(self, fd: int) -> None:
        """A new child's stdin (the loop): the old one closed, the durable size told."""
        self._close_fd()
        if self._stopping.is_set():
            os.close(fd)
            return
        self._fd = fd
        self._flush()

    def _close_fd(self) -> None:
        fd = self._fd
        if fd is None:
            return
        if self._blocked and self._loop is not None:
            self._loop.remove_writer(fd)
        self._blocked = False
        self._fd = None
        with contextlib.suppress(OSError):
            os.close(fd)

    def stop(self) -> None:
        """On the loop, as the host stops: stdin's end stops the child; wait for it."""
        self._stopping.set()
        if self._session is not None:
            self._session.on_durable = lambda size: None
        self._close_fd()
        thread = self._thread
        if thread is not None:
            thread.join(STOP_WAIT_S)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if thread is not None:
            thread.join(STOP_WAIT_S)

    # ---- the watcher thread ------------------------------------------------------------

    def _spawn(self) -> tuple[subprocess.Popen[bytes], int]:
        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "arena_tui.host.follower"],
                stdin=read_end,
                stdout=subprocess.PIPE,
                pass_fds=(self.sock.fileno(),),
                start_new_session=True,  # (the host's Ctrl-C is the host's to pass on)
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        assert self._session is not None
        conf = config_for(
            self.log,
            self.season_file,
            self._session.season,
            self.sock.fileno(),
            self.body_max,
            self.readers,
        )
        with contextlib.suppress(OSError):  # (a child dead at once: said below)
            os.write(write_end, conf)
        os.set_blocking(write_end, False)
        return proc, write_end

    def _watch(self) -> None:
        delay = FIRST_DELAY_S
        while not self._stopping.is_set():
            began = time.monotonic()
            try:
                proc, fd = self._spawn()
            except OSError as exc:
                self.note(f"readers: cannot start the reader process: {exc}")
                return
            self._proc, self.pid = proc, proc.pid
            loop = self._loop
            assert loop is not None
            try:
                loop.call_soon_threadsafe(self._install, fd)
            except RuntimeError:  # the loop has closed: the host is stopping
                os.close(fd)
            self._read(proc)
            code = proc.wait()
            self.served = None
            if self._stopping.is_set():
                return
            delay = FIRST_DELAY_S if time.monotonic() - began > STEADY_S else delay
            self.restarts += 1
            self.note(
                f"readers: the reader process exited (status {code}); starting it again in "
                f"{delay:g} s (orders and the main port go on)"
            )
            self._stopping.wait(delay)
            delay = min(MAX_DELAY_S, delay * 2)

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(b"served "):
                self.served = int(line[7:])
            elif line == b"ready\n":
                if not self.started.is_set():
                    self.note(f"readers: public reads on {self.url} (pid {proc.pid})")
                self.started.set()
