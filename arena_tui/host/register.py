"""``arena register``: a new entry and its key, through the running server or the log.

Why this module exists: registering must work whether the season's server is running or
not, without two writers ever touching the log. So it takes the log's lock
(``arena_tui.host.lock``): if it gets it, no server is running, and it appends the
``register`` input itself (fsynced; ``t`` = now, never below the log's last ``t``); if a
server holds it, it asks that server over its control socket, and the server logs the
input like any other. Either way the key is made here, printed once by the command, and
only its SHA-256 goes anywhere. The log must exist (``arena host`` writes its header).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_tui.host import control
from arena_tui.host.auth import key_sha256, new_key
from arena_tui.host.errors import HostError
from arena_tui.host.lock import LogLock
from arena_tui.logs.logfile import LogError, iter_raw_lines, not_utf8, read_header
from arena_tui.logs.writer import LogWriter
from arena_tui.season.file import resolve_season


class RegisterError(HostError):
    """A registration that cannot be made (one line)."""


@dataclass(frozen=True)
class Registration:
    entry: str
    key: str
    t: int
    via: str  # "server" or "log"


def register(
    log: Path, entry: str, season_file: Path | None, clock: Callable[[], int]
) -> Registration:
    if not control.ENTRY_NAME.fullmatch(entry):
        raise RegisterError(f"entry name {entry!r}: want 1-32 of [a-z0-9_-] (e.g. alice)")
    if not log.is_file() or log.stat().st_size == 0:
        raise RegisterError(
            f"{log}: no such log; start `arena host --log {log}` once first (it writes the "
            "season's header), then register whether it runs or not"
        )
    key = new_key(entry)
    sha = key_sha256(key)
    lock = LogLock(log)
    if not lock.try_acquire():
        doc = {"op": "register", "entry": entry, "key_sha256": sha}
        answer = control.call(control.socket_path(log), doc)
        if "error" in answer:
            raise RegisterError(str(answer["error"]))
        return Registration(entry, key, int(answer["t"]), "server")
    try:
        t = _append(log, entry, sha, season_file, clock)
    finally:
        lock.release()
    return Registration(entry, key, t, "log")


def _append(
    log: Path, entry: str, sha: str, season_file: Path | None, clock: Callable[[], int]
) -> int:
    season = resolve_season([str(log)], season_file)  # refuses a log of other rules
    if read_header(log).season is None:
        raise RegisterError(f"{log} is not a season's log (its header names no season)")
    last_t, names = _scan(log)
    t = max(clock(), last_t)
    if entry in names:
        raise RegisterError(f"entry {entry!r} is already registered in {log}")
    if t >= season.end:
        raise RegisterError(f"season {season.id} is over: registrations change nothing")
    with LogWriter(log, {}) as writer:
        writer.write(t, arena={"type": "register", "entry": entry, "key_sha256": sha})
    return t


def _scan(log: Path) -> tuple[int, set[str]]:
    """The last ``t`` and the names registered so far (a cheap pass: only register lines
    are decoded)."""
    last_t, names = 0, set()
    for lineno, raw in enumerate(iter_raw_lines(log), start=1):
        if lineno == 1:
            continue
        if b'"register"' in raw:
            arena = _object(log, lineno, raw).get("arena")
            if isinstance(arena, dict) and arena.get("type") == "register":
                names.add(str(arena.get("entry")))
        comma = raw.find(b",")
        head = raw[5:comma] if raw.startswith(b'{"t":') and comma > 5 else b""
        if head.isdigit():
            last_t = int(head)
        else:
            t = _object(log, lineno, raw).get("t")
            last_t = t if type(t) is int else last_t
    return last_t, names


def _object(log: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    """A line the scan must read, or one error naming it (the host refuses such a log)."""
    try:
        doc = json.loads(raw)
    except ValueError:  # also UnicodeDecodeError
        raise LogError(log, lineno, not_utf8(raw) or "not valid JSON") from None
    if not isinstance(doc, dict):
        raise LogError(log, lineno, "not a JSON object")
    return doc
