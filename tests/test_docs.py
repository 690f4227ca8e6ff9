"""The documents work as written: every command and code block of README.md and docs/*.md
runs here, as a reader would run it, or a marker says why it cannot.

Each document runs top to bottom in its own temporary directory holding copies of the
project's ``recordings/`` and ``seasons/`` and links to ``strategies/`` and ``.venv``, so
a command runs exactly as written from a checkout; the venv's ``bin`` is first on PATH,
``ARENA_DATA_DIR`` and ``HOME`` point into the directory.

- ``sh``/``bash``/``console`` blocks: each command (``\\`` continuations joined, comment
  lines skipped, a console block's ``$ `` prompt stripped) runs in bash and must exit 0
  without a traceback. A line of ``NAME=VALUE`` assignments sets them for the commands
  after it. ``NAME.…`` stands for the key ``arena register NAME`` printed before it.
- ``python`` blocks: one defining a ``Strategy`` subclass is written to a file and
  backtested on the shipped sample (the first example of docs/strategies.md must trade);
  any other block is run as a program, with the same substitutions.
- ``json`` blocks must parse (whole, or line by line: JSON Lines), and so must ``toml``.
- Blocks with no language (diagrams, HTTP exchanges) and ``ini`` are not code.

A marker, an HTML comment just before a block, says what the block needs (directives
separated by ``;``; a reason after ``:``)::

    <!-- docs-test: skip: REASON -->              the block is not run
    <!-- docs-test: skip "CMD" ...: REASON -->    commands starting with CMD are not run
    <!-- docs-test: parse "CMD" ...: REASON -->   commands starting with CMD are only parsed
                                                  by arena's own command line (interactive
                                                  screens, the live feed)
    <!-- docs-test: background "CMD" -->          started in the background, kept until the
                                                  document's end, then stopped with SIGINT
    <!-- docs-test: port N -->                    N becomes a free port for the rest of the
                                                  document (the background command: --port)
    <!-- docs-test: replace "A" "B" -->           A is run as B in this block (only where the
                                                  document says the command takes long)
    <!-- docs-test: file "NAME" -->               the block is written to NAME first
    <!-- docs-test: fragment -->                  python that is not a program: compiled
    <!-- docs-test: synopsis -->                  usage lines: each command and --option
                                                  must exist

CMD is matched at the start of a command (or of a part of an ``&&`` chain), with a leading
``.venv/bin/`` ignored. A command that would create a venv, install packages or run the
test suite must be skipped by a marker: this test refuses to run one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.markup import RE_TAGS
from rich.style import Style

from arena_tui.cli import app
from arena_tui.strategy import AssetContext, Book, Trade
from arena_tui.tui.cli import cli as tui_app
from engine.season import SEASON0_RULES

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
VENV_BIN = Path(sys.executable).parent
SAMPLE = "recordings/synth-3coins-20261201.jsonl.gz"
SHELLS = {"sh", "bash", "shell", "console", "zsh"}
FORBIDDEN = ("-m venv", "pip install", "pytest")  # never run from a document
MARKER = re.compile(r"<!--\s*docs-test:(.*?)-->", re.S)
STRATEGY_CLASS = re.compile(r"^class \w+\((?:\w+\.)*Strategy\):", re.M)
KEY_PLACEHOLDER = re.compile(r"\b([a-z0-9_-]{1,32})\.…")
NO_FILLS = hashlib.sha256(b"").hexdigest()


# ---- reading a document ----------------------------------------------------------------


@dataclass
class Marker:
    skip_all: bool = False
    skip: list[str] = field(default_factory=list)
    parse: list[str] = field(default_factory=list)
    background: list[str] = field(default_factory=list)
    port: int | None = None
    replace: list[tuple[str, str]] = field(default_factory=list)
    file: str | None = None
    fragment: bool = False
    synopsis: bool = False


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Block:
    doc: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: Marker

    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def split_reason(directive: str) -> tuple[str, str]:
    """``skip "a:b" "c": why`` -> (``skip "a:b" "c"``, ``why``): the first ``:`` unquoted."""
    quoted = False
    for i, ch in enumerate(directive):
        if ch == '"':
            quoted = not quoted
        elif ch == ":" and not quoted:
            return directive[:i], directive[i + 1 :]
    return directive, ""


def parse_marker(text: str, where: str) -> Marker:
    m = Marker()
    for directive in filter(None, (d.strip() for d in text.split(";"))):
        head, reason = split_reason(directive)
        words = shlex.split(head)
        kind, args = words[0], words[1:]
        if kind in ("skip", "parse") and not reason.strip():
            raise AssertionError(f"{where}: docs-test {kind} needs a reason after ':'")
        if kind == "skip" and not args:
            m.skip_all = True
        elif kind in ("skip", "parse", "background"):
            getattr(m, kind).extend(args)
        elif kind == "port" and len(args) == 1 and args[0].isdigit():
            m.port = int(args[0])
        elif kind == "replace" and len(args) == 2:
            m.replace.append((args[0], args[1]))
        elif kind == "file" and len(args) == 1:
            m.file = args[0]
        elif kind in ("fragment", "synopsis") and not args:
            setattr(m, kind, True)
        else:
            raise AssertionError(f"{where}: unknown docs-test directive {directive!r}")
    return m


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a document, each with the marker just before it (if any)."""
    name = str(path.relative_to(ROOT))
    lines = path.read_text().splitlines()
    found: list[Block] = []
    pending: tuple[str, int] | None = None  # marker text, and the line it ends on
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            start, lang = i, line[3:].strip().lower()
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            marker = Marker()
            if pending is not None:
                marker = parse_marker(pending[0], f"{name}:{pending[1]}")
            found.append(Block(name, start + 1, lang, "\n".join(body) + "\n", marker))
            pending = None
        elif line.lstrip().startswith("<!--"):
            end = i
            while end + 1 < len(lines) and "-->" not in lines[end]:
                end += 1
            comment = MARKER.search("\n".join(lines[i : end + 1]))
            if comment is not None:
                pending = (comment.group(1), i + 1)
            i = end
        elif line.strip() and pending is not None:
            raise AssertionError(f"{name}:{pending[1]}: a marker goes right before its block")
        i += 1
    return found


def commands(block: Block) -> Iterator[str]:
    """The block's commands: continuations joined, comments and console output left out."""
    text = block.text.replace("\\\n", " ")
    for raw in text.splitlines():
        line = raw.strip()
        if block.lang == "console":
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if line and not line.startswith("#"):
            yield line


def bare(command: str) -> str:
    return command[len(".venv/bin/") :] if command.startswith(".venv/bin/") else command


def starts(command: str, prefixes: list[str]) -> bool:
    return any(bare(command).startswith(bare(p)) for p in prefixes)


# ---- running a document ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def workdir(tmp: Path) -> dict[str, str]:
    """A checkout-like directory; returns the environment commands run with."""
    for name in ("recordings", "seasons"):  # copies: a command may write beside them
        shutil.copytree(ROOT / name, tmp / name)
    # the baselines themselves, so that `strategies/momentum.py --vs baselines` is one file
    (tmp / "strategies").symlink_to(ROOT / "strategies", target_is_directory=True)
    (tmp / ".venv").symlink_to(VENV_BIN.parent, target_is_directory=True)
    (tmp / "home").mkdir()
    return {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "ARENA_DATA_DIR": str(tmp / "data"),
        "HOME": str(tmp / "home"),
        "COLUMNS": "100",
    }


class Reader:
    """One document read as a user would, top to bottom (see the module docstring)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = workdir(tmp)
        self.keys: dict[str, str] = {}
        self.ports: dict[int, int] = {}
        self.background: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.strategies: list[tuple[Block, Path]] = []
        self.n = 0

    def substitute(self, text: str) -> str:
        for doc_port, port in self.ports.items():
            text = re.sub(rf"(?<=[:\s]){doc_port}\b", str(port), text)
        return KEY_PLACEHOLDER.sub(lambda m: self.keys.get(m.group(1), m.group(0)), text)

    def run_block(self, block: Block) -> None:
        m = block.marker
        if m.port is not None:
            self.ports[m.port] = free_port()
        if m.skip_all or (m.file is not None and block.lang != "python"):
            return
        if block.lang in SHELLS:
            if m.synopsis:
                check_synopsis(block)
                return
            for command in commands(block):
                self.shell(block, command)
        elif block.lang == "python":
            self.python(block)
        elif block.lang == "json":
            check_json(block)
        elif block.lang == "toml":
            tomllib.loads(block.text)

    def shell(self, block: Block, command: str) -> None:
        m = block.marker
        for old, new in m.replace:
            command = command.replace(old, new)
        command = self.substitute(command)
        parts = [p.strip() for p in command.split("&&")]
        kept = [p for p in parts if not starts(p, m.skip)]
        for part in kept:
            for word in FORBIDDEN:
                assert word not in part, (
                    f"{block.where()}: {part!r} must be skipped by a docs-test marker"
                )
        if not kept:
            return
        if len(kept) == 1 and starts(kept[0], m.parse):
            parse_command(block, kept[0])
            return
        if len(kept) == 1 and starts(kept[0], m.background):
            self.start(block, kept[0])
            return
        if len(kept) == 1 and re.fullmatch(r"(\s*\w+=\S+\s*;?)+", kept[0]):
            for assignment in kept[0].split(";"):
                if assignment.strip():
                    name, _, value = shlex.split(assignment)[0].partition("=")
                    self.env[name] = value
            return
        line = " && ".join(kept)
        done = self.run(["bash", "-c", line], f"{block.where()}: {line}")
        said = f"{block.where()}: {line}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, said
        assert "Traceback" not in done.stderr, said
        register = re.match(r"arena register (\S+)", bare(line))
        if register:
            key = re.search(rf"{re.escape(register.group(1))}\.[A-Za-z0-9_-]+", done.stdout)
            assert key is not None, said
            self.keys[register.group(1)] = key.group(0)

    def run(self, argv: list[str], what: str, timeout: float = 180) -> Done:
        """Run to the end; one that never ends is killed with all it started, and fails."""
        with subprocess.Popen(
            argv,
            cwd=self.tmp,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as proc:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise AssertionError(f"{what}: still running after {timeout:g} s") from None
        return Done(proc.returncode, out, err)

    def start(self, block: Block, command: str) -> None:
        port = next(iter(self.ports.values()), None)
        if port is not None and "--port" not in command:
            command += f" --port {port}"
        log = (self.tmp / f"background-{len(self.background)}.txt").open("wb")
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.tmp,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.background.append((command, proc))
        if port is None:
            return
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            assert proc.poll() is None, f"{block.where()}: {command} ended: {self.said(-1)}"
            assert time.monotonic() < deadline, f"{block.where()}: {command} never listened"
            time.sleep(0.05)

    def said(self, index: int) -> str:
        n = index % len(self.background)
        return (self.tmp / f"background-{n}.txt").read_text()[-3000:]

    def stop(self, check: bool = True) -> None:
        for i, (command, proc) in enumerate(self.background):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
                code = None
            if not check:
                continue
            assert code is not None, f"{command}: did not stop on Ctrl-C"
            assert code == 0, f"{command}: exit {code}: {self.said(i)}"
            assert "Traceback" not in self.said(i), self.said(i)

    def python(self, block: Block) -> None:
        code = self.substitute(block.text)
        compile(code, block.where(), "exec")
        if block.marker.fragment:
            return
        if STRATEGY_CLASS.search(code):
            self.n += 1
            path = self.tmp / (block.marker.file or f"doc_strategy_{self.n}.py")
            path.write_text(code)
            self.strategies.append((block, path))
            return
        self.n += 1
        program = self.tmp / f"doc_program_{self.n}.py"
        program.write_text(code)
        done = self.run([str(VENV_BIN / "python"), str(program)], block.where(), 120)
        assert done.returncode == 0, f"{block.where()}:\n{done.stdout}\n{done.stderr}"

    def backtest(self, block: Block, path: Path) -> bool:
        """Backtest a strategy example on the shipped sample; True if it traded."""
        out = self.tmp / "runs" / f"doc-{path.stem}"
        argv = [str(VENV_BIN / "arena"), "backtest", str(path), SAMPLE, "--out", str(out)]
        done = self.run([*argv, "--json"], block.where())
        assert done.returncode == 0, f"{block.where()}: the example fails:\n{done.stderr}"
        fills: str = json.loads(done.stdout)["replay"]["fills_sha256"]
        return fills != NO_FILLS


def check_json(block: Block) -> None:
    try:
        json.loads(block.text)
    except ValueError:
        for n, line in enumerate(block.text.splitlines(), block.line + 1):
            if line.strip():
                try:
                    json.loads(line)
                except ValueError as exc:
                    raise AssertionError(f"{block.doc}:{n}: not JSON: {exc}") from None


def command_of(words: list[str]) -> tuple[Any, list[str]]:
    """The typer command a command line names, and the words after its name."""
    prog, *args = words
    cmd: Any = typer.main.get_command(app if Path(prog).name == "arena" else tui_app)
    while hasattr(cmd, "commands"):
        assert args and args[0] in cmd.commands, f"no such command: {' '.join(words)}"
        cmd = cmd.commands[args.pop(0)]
    return cmd, args


def parse_command(block: Block, command: str) -> None:
    """A command the test cannot run: arena's own parser must take it as written."""
    words = shlex.split(command, comments=True)
    assert Path(words[0]).name in ("arena", "arena-tui"), f"{block.where()}: {command}"
    cmd, args = command_of(words)
    try:
        cmd.make_context(words[0], args)
    except Exception as exc:  # click's usage errors
        raise AssertionError(f"{block.where()}: {command}: {exc}") from None


def command_words(line: str) -> list[str]:
    """``arena season new ID --coins ...`` -> ``["arena", "season", "new"]``."""
    words = []
    for word in line.split():
        if not re.fullmatch(r"[a-z][a-z0-9-]*", word):
            break
        words.append(word)
    return words


def check_synopsis(block: Block) -> None:
    for line in commands(block):
        cmd, _ = command_of_prefix(command_words(line))
        opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        missing = [o for o in re.findall(r"--[a-z][a-z0-9-]*", line) if o not in opts]
        assert not missing, f"{block.where()}: {line}: no such option {missing}"


def command_of_prefix(words: list[str]) -> tuple[Any, list[str]]:
    prog, *rest = words
    cmd: Any = typer.main.get_command(app if prog == "arena" else tui_app)
    while hasattr(cmd, "commands") and rest and rest[0] in cmd.commands:
        cmd = cmd.commands[rest.pop(0)]
    assert not hasattr(cmd, "commands"), f"no such command: {' '.join(words)}"
    return cmd, rest


# ---- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_every_command_and_code_block_runs_as_written(doc: Path, tmp_path: Path) -> None:
    reader = Reader(tmp_path)
    found = blocks(doc)
    for block in found:  # files first: a command may use an example shown after it
        if block.marker.file is not None:
            (tmp_path / block.marker.file).write_text(block.text)
    try:
        for block in found:
            reader.run_block(block)
    except BaseException:
        reader.stop(check=False)
        raise
    reader.stop()
    for n, (block, path) in enumerate(reader.strategies):
        traded = reader.backtest(block, path)
        if n == 0 and doc.name == "strategies.md":
            assert traded, f"{block.where()}: the first example makes no trade on {SAMPLE}"


def test_the_first_strategy_example_is_where_the_docs_say() -> None:
    found = [b for b in blocks(ROOT / "docs/strategies.md") if b.lang == "python"]
    assert found and STRATEGY_CLASS.search(found[0].text), "docs/strategies.md: no example"


def test_the_hooks_table_names_everything_a_hook_is_handed() -> None:
    """Each public field of a book, a print and an asset context is in its hook's row."""
    rows = {
        line.split("|")[1].strip(): line
        for line in (ROOT / "docs/strategies.md").read_text().splitlines()
        if line.startswith("| `on_")
    }
    for hook, cls in (
        ("`on_book(ctx, book)`", Book),
        ("`on_trades(ctx, trades)`", Trade),
        ("`on_asset_ctx(ctx, actx)`", AssetContext),
    ):
        fields = {n for n in (*cls.__slots__, *vars(cls)) if not n.startswith("_")}
        named = set(re.findall(r"`(?:\w+\.)?(\w+)", rows[hook]))
        assert fields - named == set(), f"{hook} does not name {sorted(fields - named)}"


def test_strategies_doc_states_the_units_and_the_minimum_order() -> None:
    text = " ".join((ROOT / "docs/strategies.md").read_text().split())
    dollars = SEASON0_RULES.min_order_value // 10**6
    assert f"at least ${dollars}" in text and "OrderTooSmall" in text
    assert "`positions` (coin -> signed size at 1e8" in text


def test_the_markers_are_read() -> None:
    text = '<!-- docs-test: skip "a b" "c": network; port 8000; replace "x" "y" -->'
    m = parse_marker(MARKER.search(text).group(1), "t")  # type: ignore[union-attr]
    assert (m.skip, m.port, m.replace, m.skip_all) == (["a b", "c"], 8000, [("x", "y")], False)
    with pytest.raises(AssertionError, match="needs a reason"):
        parse_marker(" skip ", "t")
    with pytest.raises(AssertionError, match="unknown"):
        parse_marker(" skipp: x", "t")


def test_readme_setup_is_what_ci_runs() -> None:
    """The two setup commands run on a clean clone in CI (.ci/run), exactly as written."""
    setup = next(b for b in blocks(ROOT / "README.md") if b.lang in SHELLS)
    ci = (ROOT / ".ci/run").read_text().splitlines()
    assert list(commands(setup)) == [
        line
        for line in ci
        if line.strip()
        and not line.startswith(("#", "set ", "cd "))
        and not line.endswith("# CI only")  # the browser CI installs (README says so)
    ]


def test_readme_synopsis_names_every_command() -> None:
    synopsis = [b for b in blocks(ROOT / "README.md") if b.marker.synopsis]
    listed = {" ".join(command_words(line)) for b in synopsis for line in commands(b)}

    def leaves(cmd: Any, path: str) -> Iterator[str]:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from leaves(sub, f"{path} {name}")
        else:
            yield path

    missing = [c for c in leaves(typer.main.get_command(app), "arena") if c not in listed]
    assert missing == [] and "arena-tui" in listed


# ---- the help texts are documents too ------------------------------------------------------


def every_command() -> Iterator[tuple[str, Any]]:
    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")

    yield from walk(typer.main.get_command(app), "arena")
    yield from walk(typer.main.get_command(tui_app), "arena-tui")


def help_texts() -> Iterator[tuple[str, str]]:
    for path, cmd in every_command():
        yield path, cmd.help or ""
        for param in cmd.params:
            yield f"{path} {param.name}", getattr(param, "help", None) or ""


def test_no_help_text_loses_words_to_markup() -> None:
    """Rich reads ``[word]`` as a style: text in brackets must be escaped (``\\[``)."""
    eaten = []
    for where, text in help_texts():
        for m in RE_TAGS.finditer(text):
            escapes, tag = m.group(2), m.group(3)
            if len(escapes) % 2 or tag.startswith("/"):
                continue
            try:
                Style.parse(tag)
            except Exception:
                eaten.append(f"{where}: {m.group(0)}")
    assert eaten == []


def test_help_examples_parse_and_point_to_the_right_command() -> None:
    for where, text in help_texts():
        for example in re.findall(r"Example: \[cyan\](.*?)\[/\]", text, re.S):
            words = shlex.split(example.replace("\n", " "))
            cmd, args = command_of(words)
            try:
                cmd.make_context(words[0], args)
            except Exception as exc:
                raise AssertionError(f"{where}: {example}: {exc}") from None
    synth = typer.main.get_command(app).commands["synth"].help  # type: ignore[attr-defined]
    assert "arena backtest STRATEGY FILE" in synth and "arena replay" not in synth
    done = subprocess.run(
        [str(VENV_BIN / "arena"), "register", "--help"], capture_output=True, text=True, check=False
    )
    assert "1-32 of [a-z0-9_-]" in done.stdout
