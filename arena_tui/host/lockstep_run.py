"""A lockstep run from start to end: the server's thread, the agents' processes, the pass.

Why this module exists: the order things start and stop in is what makes a lockstep run
clean. Start: the run is built (season, the agents' proxies beside the ``--vs``
entrants, the run directory, the ``Backtest`` with its gate and views), the listener is
bound and served on its own thread, the agent's command (``arena backtest --agent``) is
launched with ``ARENA_URL``, ``ARENA_KEY`` and ``ARENA_LOCKSTEP=1`` and its output copied
into ``agent.out.log`` (its first :data:`OUTPUT_MAX` bytes: a note in the file marks the
cut, the report counts what was not kept), and every agent must call before
``--connect-timeout``. Then the pass
runs on this (the main) thread, which owns the engine. End: every agent is told the run is
over and its last requests are answered; the agent's process is given a moment to exit
(then terminated); the listener stops last, answering what still arrives. An agent's
process ending before the run did ends the run with one line, the run log kept (like a
failing Python strategy); so do SIGINT and SIGTERM (:meth:`LockstepRun.on_signals`) and
the gate's no-progress guard, every agent told ``over`` with why.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, Any

import uvicorn

from arena_tui.host.auth import new_key
from arena_tui.host.errors import HostError
from arena_tui.host.lockstep import (
    Interrupted,
    Remote,
    RemoteAgent,
    StepGate,
    post_to,
    signal_name,
)
from arena_tui.host.lockstep_api import LockstepApi
from arena_tui.host.server import _bind, uvicorn_config
from arena_tui.logs.logfile import read_header
from arena_tui.logs.thinlog import is_thin
from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for, kept, run_dir
from arena_tui.run.config import RunConfig, write_config
from arena_tui.run.loader import BASELINES, ENTRY_NAME, baseline_path
from arena_tui.run.parts import BacktestError, BacktestResult, Entrant, Status
from arena_tui.run.stats import exit_value
from arena_tui.run.stream import Subscriber
from arena_tui.season.file import resolve_season
from arena_tui.util.human import plural

OUTPUT_FILE = "agent.out.log"  # the agent process's stdout and stderr
OUTPUT_MAX = 4 << 20  # the bytes of it kept (its start); the rest is counted, not kept
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# After the pass, an agent still in its last step (a read, an order) has as long to come
# back for "over" (arena host --lockstep) or to exit (--agent) as it had for a step
# (--step-timeout), or AFTER_S when steps have no limit: a slow agent is told "over"
# instead of finding the server gone.
AFTER_S = 30.0
THINK = ("zero", "measured")


def size_text(n: int) -> str:
    """``4 MiB``, or ``1,000 bytes`` when it is not whole mebibytes."""
    return f"{n >> 20} MiB" if n and not n % (1 << 20) else f"{n:,} bytes"


class CappedOutput:
    """The agent's output (one pipe: stdout and stderr) copied into a file as it comes,
    up to ``cap`` bytes: its start is kept, a line in the file says where it was cut, and
    what follows is read (the agent never blocks on a full pipe) and counted in ``cut``."""

    def __init__(self, source: IO[bytes], path: Path, cap: int = OUTPUT_MAX) -> None:
        self.source = source
        self.path = path
        self.cap = cap
        self.kept = 0
        self.cut = 0  # bytes of output not kept
        self._f = path.open("wb")
        self._last = b"\n"
        self.thread = threading.Thread(target=self._copy, name="arena-agent-out", daemon=True)

    def start(self) -> CappedOutput:
        self.thread.start()
        return self

    def _copy(self) -> None:
        fd = self.source.fileno()
        try:
            while data := os.read(fd, 1 << 16):
                room = self.cap - self.kept
                if room > 0:
                    kept = data[:room]
                    self._f.write(kept)
                    self._f.flush()  # (followed as it is written: tail -f)
                    self.kept += len(kept)
                    self._last = kept[-1:]
                if len(data) > room:
                    if not self.cut:
                        self._note()
                    self.cut += len(data) - max(room, 0)
        except OSError:
            pass  # the pipe closed under us: what was read is kept
        finally:
            self._f.close()
            self.source.close()

    def _note(self) -> None:
        start = b"" if self._last == b"\n" else b"\n"
        note = f"[arena: {OUTPUT_FILE} keeps the first {size_text(self.cap)} of the agent's "
        note += "output; the rest was not kept (the report says how much)]\n"
        self._f.write(start + note.encode())
        self._f.flush()

    def join(self, timeout_s: float) -> None:
        self.thread.join(timeout_s)


def vs_entrants(vs: str | None) -> list[Entrant]:
    """The ``--vs`` entrants, as ``arena backtest`` makes them (``build.entrants_for``)."""
    specs: list[str] = []
    for part in (vs or "").split(","):
        name = part.strip()
        if name == "baselines":
            specs += [str(baseline_path(b)) for b in BASELINES]
        elif name:
            specs.append(name)
    if not specs:
        return []
    return entrants_for(Path(specs[0]), ",".join(specs[1:]))


class LockstepRun:
    """One lockstep run (module docstring) of a run config (its ``lockstep`` part, or the
    defaults): ``prepare``, then ``run`` (blocking)."""

    def __init__(
        self,
        config: RunConfig,
        *,
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        note: Callable[[str], None] = lambda text: None,
        subscribers: Sequence[Subscriber] = (),
    ) -> None:
        opts = config.lockstep_part()
        if opts.think not in THINK:
            raise BacktestError(f"--think-time {opts.think!r}: zero or measured")
        for name in opts.names:
            if ENTRY_NAME.fullmatch(name) is None:
                raise BacktestError(f"entry name {name!r}: 1-32 characters of a-z, 0-9, _ and -")
        if len(set(opts.names)) != len(opts.names):
            raise BacktestError(f"entry names must be unique: {', '.join(opts.names)}")
        self.config = config
        self.opts = opts  # the lockstep part
        self.subscribers = tuple(subscribers)  # the run's, after the gate (run.stream)
        self.on_ready = on_ready
        self.note = note
        self.remotes = [Remote(n, i, new_key(n)) for i, n in enumerate(opts.names)]
        self.out_dir = Path()
        self.bt: Backtest | None = None
        self.gate: StepGate | None = None
        self.api: LockstepApi | None = None
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.output: CappedOutput | None = None
        self.phase = "before"  # then "pass" (the engine's), then "after"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._served = threading.Event()
        self._server_error: BaseException | None = None

    # ---- building it -----------------------------------------------------------------

    def prepare(self) -> None:
        """The run built, its directory made, the listener bound (not yet served)."""
        config, opts = self.config, self.opts
        logs = list(config.logs)
        for path in logs:
            if is_thin(path):
                read_header(path)  # refused: a thin run log holds no market data to trade on
        season = resolve_season(logs, config.season_path())
        others = vs_entrants(config.vs)
        for e in others:
            if e.name in opts.names:
                raise BacktestError(
                    f"entry name {e.name!r} is both an agent's and a --vs entry's: name the "
                    "agent otherwise (--agent-name)"
                )
        first = opts.names[0]
        self.out_dir = run_dir(config.out_path(), Path(first), "lockstep", force=config.force)
        gate = self.gate = StepGate(
            self.remotes,
            step_timeout_s=opts.step_timeout_s,
            think_measured=opts.think == "measured",
            kept_in=self.out_dir,
        )
        agents = [Entrant(r.name, RemoteAgent(gate, r), Path()) for r in self.remotes]
        bt = self.bt = Backtest(
            config.replace(cache=False),  # the gate settles in the cold pass only
            season,
            agents + others,
            run_dir=self.out_dir,
            subscribers=(gate, *self.subscribers),
            generator=opts.generator,
            exit_value=exit_value,
        )
        write_config(kept(config, ()), self.out_dir)
        views = gate.views  # made by the gate's bind, from the run's engine
        assert views is not None
        self.api = LockstepApi(
            gate,
            bt.engine,
            views,
            season,
            body_max=opts.body_max,
            season_file=(self.out_dir / f"{season.id}.json").read_bytes(),
        )
        self.sock = _bind(opts.host, opts.port)
        host, port = self.sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"

    # ---- the server's thread ---------------------------------------------------------

    def _serve(self) -> None:
        api, gate = self.api, self.gate
        assert api is not None and gate is not None

        async def main() -> None:
            loop = asyncio.get_running_loop()
            gate.offer = api.offer
            gate.post = post_to(loop)
            config = uvicorn_config(api.app(), graceful_s=1)
            server = self._server = uvicorn.Server(config)
            serving = asyncio.create_task(server.serve(sockets=[self.sock]))
            while not server.started and not serving.done():
                await asyncio.sleep(0.005)
            self._served.set()
            await serving

        try:
            asyncio.run(main())
        except BaseException as exc:
            self._server_error = exc
        finally:
            self._served.set()

    def _start_server(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="arena-lockstep", daemon=True)
        self._thread.start()
        self._served.wait(30)
        if self._server_error is not None or self._server is None or not self._server.started:
            raise HostError(f"the lockstep server did not start: {self._server_error}")

    def _stop_server(self) -> None:
        server, thread, gate = self._server, self._thread, self.gate
        if server is not None:
            server.should_exit = True
        if thread is not None:
            if gate is not None and gate.over is not None:  # requests still arriving: answered
                gate.serve(lambda: not thread.is_alive(), 10)
            thread.join(10)

    # ---- the agent's process ---------------------------------------------------------

    def _launch(self, command: str) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise BacktestError(f"--agent {command!r}: {exc}") from None
        if not argv:
            raise BacktestError("--agent: give the command that runs the agent")
        r = self.remotes[0]
        env = dict(os.environ, ARENA_URL=self.url, ARENA_KEY=r.key, ARENA_LOCKSTEP="1")
        (self.out_dir / OUTPUT_FILE).write_bytes(b"")
        try:
            self.proc = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            raise BacktestError(f"--agent: cannot run {argv[0]}: {exc.strerror or exc}") from None
        assert self.proc.stdout is not None
        self.output = CappedOutput(self.proc.stdout, self.out_dir / OUTPUT_FILE).start()
        proc, gate = self.proc, self.gate
        assert gate is not None
        threading.Thread(
            target=lambda: gate.agent_exited(r.name, proc.wait()), name="arena-agent", daemon=True
        ).start()

    def _end_process(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.output is not None:
            self.output.join(2)  # (the rest of the pipe; a child the agent left may hold it)

    # ---- the run ---------------------------------------------------------------------

    def run(self, progress: Status | None = None) -> BacktestResult:
        """The whole run (module docstring); the result, with each agent's counts."""
        bt, gate = self.bt, self.gate
        assert bt is not None and gate is not None
        opts = self.opts
        try:
            self._start_server()
            if opts.command is not None:
                self._launch(opts.command)
            self._ready()
            connected = gate.serve(
                lambda: all(r.connected for r in self.remotes), opts.connect_timeout_s
            )
            if not connected:
                missing = [r.name for r in self.remotes if not r.connected]
                where = (
                    f" (its output: {self.out_dir / OUTPUT_FILE})"
                    if opts.command is not None
                    else f" at {self.url}"
                )
                raise BacktestError(
                    f"no call from {', '.join(missing)} within {opts.connect_timeout_s:g} s of "
                    f"the start: an agent must POST /v1/step or open /v1/stream{where}"
                )
            self.phase = "pass"
            result = bt.run(list(self.config.logs), progress)
            self.phase = "after"
            if gate.stopping is not None:  # (came as the pass ended: never taken)
                self.interrupt(gate.stopping)
            doc = result.replay.to_json()
            gate.finish({k: doc[k] for k in ("season", "end", "final", "ranking")})
            after_s = opts.step_timeout_s or AFTER_S
            if self.proc is not None:
                proc, r = self.proc, self.remotes[0]
                gate.serve(lambda: proc.poll() is not None or r.lagging, after_s)
            else:
                gate.serve(lambda: all(r.told_over for r in self.remotes), after_s)
        except BaseException as exc:
            with suppress(Exception):  # (whatever went wrong, the agents are told)
                gate.abort(str(exc) or type(exc).__name__)
            raise
        finally:
            self._end_process()
            self._stop_server()
        for e in result.entrants:
            if isinstance(e.strategy, RemoteAgent):
                e.remote = e.strategy.remote.counts()
                if self.output is not None and e.strategy.remote is self.remotes[0]:
                    e.remote["output_cut_bytes"] = self.output.cut
        return result

    # ---- signals ---------------------------------------------------------------------

    @contextmanager
    def on_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM end the run with one line while the block runs (the main
        thread only; as ``arena host`` does, even when started with SIGINT ignored, as a
        shell starts a background job): in the pass, the gate stops it at a safe point
        (the run log closed whole); before or after it, at once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

        def handler(signum: int, frame: FrameType | None) -> None:
            self.interrupt(signum)

        for sig in STOP_SIGNALS:
            signal.signal(sig, handler)
        try:
            yield
        finally:
            for sig, was in old.items():
                signal.signal(sig, was)

    def interrupt(self, signum: int) -> None:
        """A stop signal (in the main thread, from ``on_signals``' handler)."""
        gate = self.gate
        if self.phase == "pass" and gate is not None:
            gate.interrupt(signum)
            return
        name = signal_name(signum)
        if self.phase == "before":
            raise Interrupted(
                f"stopped by {name} before the run started: nothing was logged", signum
            )
        raise Interrupted(
            f"stopped by {name} after the run ended, before its report: the run log is "
            f"complete in {self.out_dir / 'run.jsonl'} (arena replay gives its ranking)",
            signum,
        )

    def _ready(self) -> None:
        info: dict[str, Any] = {
            "url": self.url,
            "out": str(self.out_dir),
            "keys": {r.name: r.key for r in self.remotes},
        }
        if self.opts.command is None:
            self.note(
                f"lockstep: serving {self.url}; waiting up to {self.opts.connect_timeout_s:g} s "
                f"for {plural(len(self.remotes), 'agent')} to call POST /v1/step (or open the "
                "stream)"
            )
        if self.on_ready is not None:
            self.on_ready(info)
