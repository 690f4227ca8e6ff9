"""Running the ``arena`` command as a user does: a real subprocess in the repository (or,
for tests that run many quick commands, ``arena_here``: in this process)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SYNTH = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"  # the shipped sample, 6 h


def sample_season(
    path: Path, minutes: int, *, log: Path = SYNTH, skip_minutes: int = 0, name: str = "short"
) -> Path:
    """A season file at ``path`` (JSON): ``log``'s own season cut to ``minutes`` minutes,
    beginning ``skip_minutes`` after its start; the short seasons tests run on."""
    from arena_tui.season.file import resolve_season, season_doc

    doc = season_doc(resolve_season([str(log)], None))
    doc["id"] = name
    doc["start"] += skip_minutes * 60_000
    doc["end"] = doc["start"] + minutes * 60_000
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def arena(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=timeout,
    )


@contextmanager
def arena_running(
    tmp: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``arena ARGS`` in the background, its stdout and stderr appended to tmp/out.txt and
    tmp/err.txt; killed if it is still running when the block ends."""
    with (tmp / "out.txt").open("ab") as out, (tmp / "err.txt").open("ab") as err:
        cmd = [sys.executable, "-m", "arena_tui.cli", *args]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, env=env)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def until(pred: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll ``pred`` until it holds; fail after ``timeout`` seconds (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@functools.cache
def _arena_command() -> Any:
    from typer.main import get_command

    from arena_tui.cli import app

    return get_command(app)  # built once: typer takes ~0.1 s to build it


_HERE = threading.Lock()  # the working directory and os.environ are the whole process's


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """os.environ exactly ``env`` for the block (as ``subprocess.run(env=...)`` gives a
    child), then exactly what it was; ``None``: untouched."""
    if env is None:
        yield
        return
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


def _main(command: Any, args: Sequence[str]) -> None:
    """``command.main`` as the console script ends it: ``typer.Exit(n)`` (click returns its
    code when not standalone) and a usage error (raised) become ``SystemExit`` with the
    code the script would exit with."""
    import typer

    try:
        code = command.main(list(args), prog_name="arena", standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("Aborted!\n")
        raise SystemExit(1) from None
    except typer.TyperException as exc:  # typer's own click's ClickException: a usage error
        exc.show()  # type: ignore[attr-defined]
        raise SystemExit(exc.exit_code) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


def arena_here(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` in this process, through the same ``run_cli`` as the console script
    (a known error is one line and exit 1; anything else raises): a millisecond instead of
    a second, for tests that run many commands. Its environment is this process's.

    ``cwd`` and ``env`` are ``arena``'s: the directory it runs in and its whole environment
    (``None``: this process's), changed for the call and put back after it."""
    from arena_tui.util.errors import run_cli

    command = _arena_command()
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with (
        _HERE,
        contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext(),
        _environment(env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            run_cli(lambda: _main(command, args), "arena")
        except SystemExit as exc:
            code = exc.code
    assert not isinstance(code, str), code
    return subprocess.CompletedProcess(["arena", *args], code or 0, out.getvalue(), err.getvalue())


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The command failed with exactly one ``arena: error:`` line and no traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("arena: error: ")
    return lines[0]
