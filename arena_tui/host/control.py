"""The organiser's channel to a running server: a Unix socket beside the log.

Why this module exists: ``arena register`` must work while the server runs, and the server
is then the log's only writer (it holds the lock), so the register input has to go
through it, log first like every other input. The channel is a Unix socket,
``<log>.sock``, created mode 0600: only the organiser's account (and root) can connect,
whatever address the HTTP API listens on, and it never leaves the machine. The protocol
is one JSON object a line each way: ``{"op": "register", "entry", "key_sha256"}`` ->
``{"ok": true, "t": ms}`` or ``{"error": "..."}``. The key itself never crosses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
from pathlib import Path
from typing import Any

from arena_tui.host.errors import HostError
from arena_tui.host.session import LogWriteError, Session
from engine import events as ev

ENTRY_NAME = re.compile(r"[a-z0-9_-]{1,32}")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
MAX_PATH = 100  # sun_path holds 108 bytes; leave room
LINE_MAX = 4096


class ControlError(HostError):
    """The running server could not be asked (one line)."""


def socket_path(log: Path) -> Path:
    return log.with_name(log.name + ".sock")


async def register(session: Session, entry: str, key_sha256: str) -> dict[str, Any]:
    """Register ``entry`` through the session (log, then engine), or say why not."""
    eng = session.engine
    if not ENTRY_NAME.fullmatch(entry):
        return {"error": f"entry name {entry!r}: want 1-32 of [a-z0-9_-]"}
    if not SHA256_HEX.fullmatch(key_sha256):
        return {"error": "key_sha256: want 64 lowercase hex digits"}
    if eng.account(entry) is not None:
        return {"error": f"entry {entry!r} is already registered in this season"}
    if eng.over:
        return {"error": f"season {session.season.id} is over: registrations change nothing"}
    try:
        events = await session.submit(
            {"type": "register", "entry": entry, "key_sha256": key_sha256}
        )
    except LogWriteError as exc:
        return {"error": str(exc)}
    for e in events:
        if isinstance(e, ev.Registered) and e.entry == entry:
            return {"ok": True, "t": e.t}
    return {"error": f"the engine ignored the registration of {entry!r}"}


def check_path(path: Path) -> None:
    if len(str(path)) > MAX_PATH:
        raise ControlError(
            f"{path}: too long for a Unix socket ({len(str(path))} > {MAX_PATH} bytes); "
            "put the log in a shorter directory"
        )


async def serve(session: Session, path: Path) -> asyncio.AbstractServer:
    """Listen on ``path`` (a stale socket left by a crash is replaced: we hold the lock)."""
    check_path(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            try:
                doc = json.loads(line)
                ok = isinstance(doc, dict) and doc.get("op") == "register"
                entry, sha = (str(doc.get("entry")), str(doc.get("key_sha256"))) if ok else ("", "")
            except ValueError:
                ok = False
            out = await register(session, entry, sha) if ok else {"error": "unknown request"}
            writer.write(json.dumps(out).encode() + b"\n")
            await writer.drain()
        finally:
            writer.close()

    old = os.umask(0o177)
    try:
        return await asyncio.start_unix_server(handle, path=str(path), limit=LINE_MAX)
    finally:
        os.umask(old)


def call(path: Path, doc: dict[str, Any], timeout_s: float = 30.0) -> dict[str, Any]:
    """Ask the server listening on ``path``; ControlError if it cannot be reached."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(str(path))
            sock.sendall(json.dumps(doc).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(LINE_MAX)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        raise ControlError(
            f"the server holding the log did not answer on {path} ({exc.strerror or exc}); "
            "is it still starting? try again"
        ) from None
    try:
        answer = json.loads(data)
    except ValueError:
        raise ControlError(f"{path}: the server's answer is not JSON") from None
    if not isinstance(answer, dict):
        raise ControlError(f"{path}: the server's answer is not an object")
    return answer
