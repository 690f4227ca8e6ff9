"""A recording on disk: one version-1 log file per UTC day, by receive time.

Why this module exists: a recorder runs for weeks and is killed, restarted and rebooted
under it; where each line goes, when a day closes, how a closed day is compressed and what
a restart finds are decided here, with no socket and no clock of its own (every call
carries its ``t``), so all of it is tested with made-up times.

- ``hl-YYYY-MM-DD.jsonl`` is the open day. An input goes to the file of its own ``t``'s
  UTC day; the first input of a later day closes the previous file, which is then
  LZ4-compressed to ``hl-YYYY-MM-DD.jsonl.lz4`` in a background thread (so receive times
  stay true): into a hidden temporary file, fsynced, renamed, and only then is the plain
  file removed. A crash at any point leaves either the plain file or a complete ``.lz4``.
  The closed day's cache is then kept (``logs.daykeep``), so its first backtest is warm.
  Days closed by an older arena as ``.jsonl.gz`` are still found and read.
- Files are only ever appended to (``LogWriter`` cuts a torn tail first), never rewritten.
  A day file whose header names other markets is refused rather than mixed.
- The files' names, tail reading and compression are in ``arena_tui.logs.dayfiles``.
- ``open()`` finishes what a crash left (stale temporary files, closed days still plain)
  and returns the ``t`` of the directory's last input, for the restart gap.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs.dayfiles import (
    closed_name,
    compress,
    day_files,
    day_of,
    last_input_t,
    plain_of,
)
from arena_tui.logs.daykeep import keep_days
from arena_tui.logs.logfile import LogError
from arena_tui.logs.writer import LogWriter
from arena_tui.util.outputs import writing

_ENCODER = msgspec.json.Encoder()


class DayLog:
    """Write a recording's inputs to the right day's file; see the module docstring.

    ``background``: compress closed days in a thread (False: at once, for tests).
    ``on_file``: told ``("opened" | "compressed", path)`` and ``("error", message)``, always
    in the caller's thread (a compression's outcome is told at the next ``tick()``).
    """

    def __init__(
        self,
        out: Path,
        header: dict[str, Any],
        *,
        group_fsync_s: float | None = 1.0,
        background: bool = True,
        on_file: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.out = out
        self.header = header
        self.group_fsync_s = group_fsync_s
        self.background = background
        self.on_file: Callable[[str, Any], None] = on_file or (lambda kind, what: None)
        self.day: str | None = None
        self.writer: LogWriter | None = None
        self.bytes_written = 0
        self.opened: list[Path] = []  # this run's day files, in order
        self._cancel = threading.Event()
        self._outcomes: list[tuple[str, Any]] = []  # appended by compression threads
        self._threads: list[threading.Thread] = []

    @property
    def path(self) -> Path | None:
        return None if self.writer is None else self.writer.path

    def open(self, now_ms: int) -> int | None:
        """Tidy up after a crash, open the current day's file; the last input's t, if any."""
        with writing(self.out, "--out"):
            self.out.mkdir(parents=True, exist_ok=True)
        for stale in self.out.glob(".hl-*.jsonl.*.tmp"):
            stale.unlink()
        days = day_files(self.out)
        last_t = None
        for paths in reversed(days.values()):
            last_t = last_input_t(plain_of(paths) if len(paths) > 1 else paths[0])
            if last_t is not None:
                break
        current = day_of(max(now_ms, last_t if last_t is not None else now_ms))
        if days:
            current = max(current, next(reversed(days)))  # never a day before the last file
        self._open_day(current)
        for day, paths in days.items():
            if day < current and any(p.suffix == ".jsonl" for p in paths):
                self._compress_later(plain_of(paths))
        return last_t

    def write_hl(self, t: int, message: bytes) -> None:
        """One market message, verbatim (the caller made sure it is one line of JSON)."""
        self._write(t, b'{"t":%d,"hl":%s}' % (t, message))

    def write_arena(self, t: int, doc: dict[str, Any]) -> None:
        self._write(t, b'{"t":%d,"arena":%s}' % (t, _ENCODER.encode(doc)))

    def _write(self, t: int, line: bytes) -> None:
        day = day_of(t)
        if day != self.day:
            self._roll(day)
        assert self.writer is not None
        try:
            self.writer.write_raw(line)
        except OSError as exc:
            raise LogError(self.writer.path, None, f"cannot write: {exc.strerror or exc}") from None
        self.bytes_written += len(line) + 1

    def _roll(self, day: str) -> None:
        old = self.writer
        self._open_day(day)
        if old is not None:
            old.close()
            self._compress_later(old.path)

    def _open_day(self, day: str) -> None:
        path = self.out / f"hl-{day}.jsonl"
        closed = closed_name(path)
        if closed is not None:
            raise LogError(closed, None, "that day is already closed")
        try:
            writer = LogWriter(path, self.header, group_fsync_s=self.group_fsync_s)
        except OSError as exc:
            raise LogError(path, None, f"cannot open: {exc.strerror or exc}") from None
        had = writer.existing_header
        want = self.header.get("markets")
        if had is not None and msgspec.to_builtins(had.markets) != want:
            writer.close()
            raise LogError(
                path,
                1,
                f"this day's file records {_names(msgspec.to_builtins(had.markets))}, this run "
                f"records {_names(want)}: record the same coins, or into another --out",
            )
        self.writer, self.day = writer, day
        self.opened.append(path)
        self.on_file("opened", path)

    def _compress_later(self, plain: Path) -> None:
        if not self.background:
            self._compress(plain)
            return
        thread = threading.Thread(target=self._compress, args=(plain,), daemon=True)
        self._threads.append(thread)
        thread.start()

    def _compress(self, plain: Path) -> None:
        try:
            done = compress(plain, self._cancel)
        except OSError as exc:  # the plain file stays; the next start tries again
            self._outcomes.append(("error", f"{plain}: cannot compress: {exc.strerror or exc}"))
            return
        if done is not None:
            self._outcomes.append(("compressed", done))
            self._keep(done)
        if not self.background:
            self._report()

    def _keep(self, done: Path) -> None:
        """The closed day's cache (``logs.daykeep``), so its first backtest is warm: in a
        low-priority process of its own when in the background (reading a day holds the
        interpreter for a while, and receive times must stay true), stopped by a close
        that does not wait; at once otherwise."""
        if not self.background:
            keep_days([str(done)])
            return
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "arena_tui.logs.daykeep", str(done)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:  # no cache this time: the first backtest builds it
            return
        while proc.poll() is None:
            if self._cancel.wait(0.2):
                proc.kill()
                proc.wait()
                return

    def _report(self) -> None:
        while self._outcomes:
            self.on_file(*self._outcomes.pop(0))

    def tick(self) -> None:
        """About once a second: the group fsync, and news of finished compressions."""
        if self.writer is not None:
            self.writer.maybe_sync()
        self._report()

    def close(self, finish_compression: bool = True) -> None:
        """Close the open file (fsynced); wait for compression, or cancel it (kept plain)."""
        if self.writer is not None:
            self.writer.close()
        if not finish_compression:
            self._cancel.set()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        self._report()


def _names(markets: Any) -> str:
    if not isinstance(markets, list):
        return "no markets"
    return ",".join(str(m.get("coin")) if isinstance(m, dict) else "?" for m in markets)
