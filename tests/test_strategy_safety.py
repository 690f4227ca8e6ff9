"""Nothing a strategy does can break a run or poison its log (issue 11, items 1 to 6).

Bad order fields are refused at the call, naming the line; a strategy's output never
reaches stdout; any exception out of a hook, a BaseException too, is one line; a hook that
never returns is stopped (in the main thread and in arena-tui's worker thread); a misspelled
hook is warned about; one file can run under two entry names. Each run log left behind
replays and ``arena logs check`` calls it clean.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.logcheck import check_logs
from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for
from arena_tui.run.config import RunConfig
from arena_tui.run.loader import StrategyError, load_strategy
from arena_tui.run.parts import BacktestError, Entrant
from arena_tui.run.replay import replay
from arena_tui.season.file import resolve_season
from arena_tui.tui.capture import Capture
from arena_tui.tui.messages import Happened
from arena_tui.tui.playback import Playback
from arena_tui.tui.snapshot import Happening
from arena_tui.tui.source import BacktestSource
from arena_tui.tui.widgets.activity import row
from engine.events import Reason
from tests import build
from tests.clirun import ROOT, arena, arena_here, until
from tests.market import market_rows, write_log

HEAD = "import sys, time\nfrom arena_tui.strategy import ALO, GTC, IOC, Context, Strategy\n\n"


def strategy(path: Path, body: str) -> Path:
    path.write_text(HEAD + body, encoding="utf-8")
    return path


def line_of(path: Path, marker: str = "# HERE") -> int:
    """The 1-based line of ``path`` holding ``marker``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, start=1) if marker in text)


def once(call: str, hook: str = "on_book", args: str = "book") -> str:
    """A strategy making ``call`` the first time ``hook`` runs."""
    return (
        "class Once(Strategy):\n"
        "    done = False\n\n"
        f"    def {hook}(self, ctx: Context, {args}) -> None:\n"
        "        if not self.done:\n"
        "            self.done = True\n"
        f"            {call}  # HERE\n"
    )


def backtest(
    tmp: Path, files: dict[str, Path], minutes: int = 3, *, watched: bool = False, **kw: Any
) -> Backtest:
    """``watched``: built as ``arena backtest --tui`` builds it (arena-tui's capture, no
    echo of the strategies' output to the terminal)."""
    log = write_log(tmp / "market.jsonl", market_rows(minutes))
    entrants = [Entrant(name, load_strategy(p), p.resolve()) for name, p in files.items()]
    season = resolve_season([str(log)], None)
    config = RunConfig(run_log="full", cache=False, **kw)
    shown = (Capture(),) if watched else ()
    out = tmp / "out"
    return Backtest(config, season, entrants, run_dir=out, subscribers=shown, echo=not watched)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The command failed with one ``arena: error:`` line and no traceback; the rest of
    stderr is the run's banner and what strategies printed."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    errors = [x for x in lines if x.startswith("arena: error: ")]
    others = [x for x in lines if not x.startswith(("arena: error: ", "arena: backtest of", "["))]
    assert len(errors) == 1 and not others, done.stderr
    return errors[0]


def here(*args: str) -> subprocess.CompletedProcess[str]:
    """``arena(*args)`` in this process (in arena's directory, as ``arena`` runs): no new
    interpreter importing the CLI. What only a process shows stays in one: a pure stdout,
    Ctrl-C, a hook stopped by its timeout, a refused order's one line."""
    return arena_here(*args, cwd=ROOT)


def log_is_clean(run_log: Path) -> None:
    """The run log replays and ``arena logs check`` finds nothing wrong in it."""
    assert check_logs([run_log]).ok
    replay([str(run_log)], resolve_season([str(run_log)], None))


def own_inputs(run_log: Path) -> list[dict[str, Any]]:
    lines = run_log.read_bytes().splitlines()[1:]
    return [d["arena"] for d in map(json.loads, lines) if "arena" in d]


# ---- 1. order fields are checked at the call ----------------------------------------------

BAD_CALLS = [
    ("ctx.order(0, True, 100000.5, 100000, False, GTC)", "ctx.order: limit_px 100000.5 (float)"),
    ("ctx.order(0, True, 10**13, 0.001, False, IOC)", "ctx.order: sz 0.001 (float)"),
    ("ctx.order('BTC', True, 10**13, 100000, False, GTC)", "ctx.order: asset 'BTC' (str)"),
    ("ctx.order(True, True, 10**13, 100000, False, GTC)", "ctx.order: asset True"),
    ("ctx.order(0, 1, 10**13, 100000, False, GTC)", "ctx.order: is_buy 1"),
    ("ctx.order(0, True, 10**13, 100000, 'no', GTC)", "ctx.order: reduce_only 'no' (str)"),
    ("ctx.order(0, True, 10**13, -100000, False, GTC)", "ctx.order: sz -100000"),
    ("ctx.order(0, True, 2**64, 100000, False, GTC)", "ctx.order: limit_px 18446744073709551616"),
    ("ctx.order(2**32, True, 10**13, 100000, False, GTC)", "ctx.order: asset 4294967296"),
    ("ctx.order(0, True, 10**13, 100000, False, 'gtc')", "ctx.order: encoded_tif 'gtc' (str)"),
    ("ctx.order(0, True, 10**13, 100000, False, 256)", "ctx.order: encoded_tif 256"),
    ("ctx.order(0, True, 10**13, 100000, False, GTC, 2**128)", "ctx.order: cloid 3402823"),
    ("ctx.order(0, True, 10**13, 100000, False, GTC, -1)", "ctx.order: cloid -1"),
    ("ctx.order(0, True, 10**13, 100000, False, GTC, 1.0)", "ctx.order: cloid 1.0 (float)"),
    ("ctx.buy('BTC', 'abc', '0.01')", "ctx.buy: px 'abc' (str) is not a number"),
    ("ctx.buy('BTC', float('nan'), '0.01')", "ctx.buy: px nan (float) is not a finite"),
    ("ctx.sell('BTC', -5, '0.01')", "ctx.sell: px -5 must be above 0"),
    ("ctx.buy('BTC', 100000, 0)", "ctx.buy: sz 0 must be above 0"),
    ("ctx.buy('BTC', 100000, True)", "ctx.buy: sz True is not a number"),
    ("ctx.buy('BTC', 100000, [1])", "ctx.buy: sz [1] (list) is not a number"),
    ("ctx.buy('BTC', 1e30, '0.01')", "ctx.buy: px 1e+30 (float) is too large"),
    ("ctx.buy('DOGE', 1, 1)", "ctx.buy: coin 'DOGE' (str) is not one of this season's coins"),
    ("ctx.buy(0, 1, 1)", "ctx.buy: coin 0 is not one of this season's coins"),
    ("ctx.buy('BTC', 100000, '0.01', tif='fok')", "ctx.buy: tif 'fok' (str) is not one of"),
    ("ctx.buy('BTC', 100000, '0.01', tif=IOC)", "ctx.buy: tif 3 is not one of"),
    ("ctx.buy('BTC', 100000, '0.01', reduce_only=1)", "ctx.buy: reduce_only 1 is not a bool"),
    ("ctx.sell('BTC', 100000, '0.01', cloid='0x2a')", "ctx.sell: cloid '0x2a' (str)"),
    ("ctx.cancel(oid='7')", "ctx.cancel: oid '7' (str) is not an integer"),
    ("ctx.cancel(oid=-7)", "ctx.cancel: oid -7 is out of range"),
    ("ctx.cancel()", "ctx.cancel: no oid and no cloid"),
    ("ctx.cancel(cloid=0)", "ctx.cancel: no oid and no cloid"),
    ("ctx.cancel(cloid=0.5)", "ctx.cancel: cloid 0.5 (float)"),
    ("ctx.cancel_all('DOGE')", "ctx.cancel_all: coin 'DOGE' (str)"),
]


@pytest.mark.parametrize(("call", "said"), BAD_CALLS, ids=[c for c, _ in BAD_CALLS])
def test_a_bad_call_is_refused_naming_line_field_and_value_and_nothing_is_logged(
    tmp_path: Path, call: str, said: str
) -> None:
    path = strategy(tmp_path / "bad.py", once(call))
    bt = backtest(tmp_path, {"bad": path})
    with pytest.raises(StrategyError) as info:
        bt.run([str(tmp_path / "market.jsonl")])
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(f"{path.resolve()}:{line_of(path)}: {said}"), text
    assert text.endswith("(in on_book, entry bad)")
    run_log = tmp_path / "out" / "run.jsonl"
    assert [m["type"] for m in own_inputs(run_log)] == ["register"]  # nothing else reached it
    log_is_clean(run_log)


def test_a_bad_call_in_a_helper_module_names_the_strategy_files_line(tmp_path: Path) -> None:
    helper = tmp_path / "helper_mod.py"
    helper.write_text("def send(ctx):\n    ctx.order(0, True, 1.5, 1, False, 2)\n")
    path = strategy(tmp_path / "main.py", "import helper_mod\n\n" + once("helper_mod.send(ctx)"))
    sys.path.insert(0, str(tmp_path))
    try:
        bt = backtest(tmp_path, {"main": path})
        with pytest.raises(
            StrategyError, match=rf"^{re.escape(str(path.resolve()))}:{line_of(path)}:"
        ):
            bt.run([str(tmp_path / "market.jsonl")])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helper_mod", None)


def test_a_strategy_may_catch_a_refused_call_as_a_value_error(tmp_path: Path) -> None:
    call = (
        "try:\n"
        "                ctx.buy('BTC', 'abc', 1)\n"
        "            except ValueError as exc:\n"
        "                print('caught:', exc)"
    )
    path = strategy(tmp_path / "careful.py", once(call))
    bt = backtest(tmp_path, {"careful": path})
    bt.run([str(tmp_path / "market.jsonl")])  # goes on to the end
    run_log = tmp_path / "out" / "run.jsonl"
    assert [m["type"] for m in own_inputs(run_log)] == ["register"]
    said = (tmp_path / "out" / "careful.log").read_text(encoding="utf-8")
    assert f"caught: {path.resolve()}:{line_of(path, 'ctx.buy')}: ctx.buy: px 'abc'" in said


def test_what_the_api_accepts_is_sent_and_the_engine_answers_it(tmp_path: Path) -> None:
    """Values the HTTP API takes but the engine rejects (an asset not in the season, a tif
    of 7, a size of no lot) are sent and rejected as over HTTP; an integer type other than
    int (as numpy's are: ``__index__``) is sent as an int."""
    body = (
        "class Index:\n"
        "    def __init__(self, n: int) -> None:\n"
        "        self.n = n\n\n"
        "    def __index__(self) -> int:\n"
        "        return self.n\n\n"
        "class Fine(Strategy):\n"
        "    def on_start(self, ctx: Context) -> None:\n"
        "        ctx.order(99, True, 10**13, 100000, False, GTC)\n"
        "        ctx.order(0, True, 10**13, 100000, False, 7)\n"
        "        ctx.order(0, True, 10**13, 100000, False, GTC, None)\n"
        "        ctx.order(Index(0), True, Index(10**13), Index(100000), False, Index(1), 5)\n"
        "        ctx.buy('BTC', '100000', 0.000001)\n"
        "        ctx.cancel(oid=12345)\n"
    )
    path = strategy(tmp_path / "fine.py", body)
    bt = backtest(tmp_path, {"fine": path})
    bt.run([str(tmp_path / "market.jsonl")])
    rejected = bt.by_name["fine"].stats.rejections
    for reason in (Reason.MarketNotAllowed, Reason.InvalidTif, Reason.InvalidSize):
        assert rejected[str(reason)] == 1, rejected
    run_log = tmp_path / "out" / "run.jsonl"
    orders = [m for m in own_inputs(run_log) if m["type"] == "order"]
    assert len(orders) == 5
    assert orders[3]["asset"] == 0 and orders[3]["limitPx"] == 10**13
    assert orders[3]["encodedTif"] == 1 and orders[3]["cloid"] == f"0x{5:032x}"
    assert [m for m in own_inputs(run_log) if m["type"] == "cancel"] == [
        {"type": "cancel", "entry": "fine", "oid": 12345}
    ]
    log_is_clean(run_log)


def test_cli_a_bad_order_is_one_line_and_the_run_log_replays_and_checks_clean(
    tmp_path: Path,
) -> None:
    """The issue's call: one line (no msgspec traceback), and a run log that replays."""
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "bad.py", once("ctx.order(0, True, 100000.5, 0.001, False, 3)"))
    out = tmp_path / "out"
    done = arena("backtest", str(path), str(log), "--out", str(out), "--json")
    line = one_error_line(done)
    assert f"bad.py:{line_of(path)}: ctx.order: limit_px 100000.5 (float)" in line
    assert done.stdout == ""
    again = here("replay", str(out / "run.jsonl"), "--json")
    assert again.returncode == 0, again.stderr
    check = arena("logs", "check", str(out / "run.jsonl"))
    assert check.returncode == 0, check.stdout + check.stderr


# ---- 2. a strategy's output -----------------------------------------------------------------

PRINTS = """
class Talker(Strategy):
    n = 0

    def on_start(self, ctx: Context) -> None:
        print("hello", ctx.coins)
        print("to stderr", file=sys.stderr)

    def on_book(self, ctx: Context, book) -> None:
        self.n += 1
        if self.n <= 2:
            print(f"book {self.n}")

    def on_end(self, ctx: Context) -> None:
        print("no newline at the end", end="")
"""


def test_cli_json_stays_pure_and_prints_go_to_stderr_and_the_entry_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "talker.py", PRINTS)
    out = tmp_path / "out"
    done = arena("backtest", str(path), str(log), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)  # the whole of stdout is one JSON document
    assert doc["kind"] == "backtest"
    said = [x for x in done.stderr.splitlines() if x.startswith("[talker] ")]
    assert said == [
        "[talker] hello ['BTC', 'SOL']",
        "[talker] to stderr",
        "[talker] book 1",
        "[talker] book 2",
        "[talker] no newline at the end",
    ]
    entry_log = (out / "talker.log").read_text(encoding="utf-8").splitlines()
    assert [x.split(" ", 1)[1] for x in entry_log] == [x[len("[talker] ") :] for x in said]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry_log[0].split(" ")[0])


def test_a_print_while_loading_goes_to_stderr_not_stdout(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "loud.py", 'print("loading")\n\nclass Loud(Strategy):\n    pass\n')
    done = arena("backtest", str(path), str(log), "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)
    assert "[loud] loading" in done.stderr.splitlines()


def test_in_a_worker_thread_only_the_runners_prints_are_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """arena-tui's case: the run in a worker thread, another thread printing meanwhile. The
    strategy's lines reach the screen as Activity rows (not the terminal, not stderr);
    the other thread's output is left alone."""
    path = strategy(tmp_path / "talker.py", PRINTS)
    bt = backtest(tmp_path, {"talker": path}, watched=True)
    source = BacktestSource.of_backtest(bt, [str(tmp_path / "market.jsonl")], title="t")
    posted: list[object] = []
    worker = threading.Thread(target=source.run, args=(Playback(None), posted.append))
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            print("ui thread")
            stop.wait(0.001)

    other = threading.Thread(target=chatter)
    other.start()
    worker.start()
    worker.join(120)
    stop.set()
    other.join(10)
    assert source.outcome is not None and source.outcome.error is None
    rows = [row(h) for m in posted if isinstance(m, Happened) for h in m.happenings]
    said = [r for r in rows if r[2] == "said"]
    assert [(entry, what, text) for _, entry, what, _, text in said] == [
        ("talker", "said", "hello ['BTC', 'SOL']"),
        ("talker", "said", "to stderr"),
        ("talker", "said", "book 1"),
        ("talker", "said", "book 2"),
        ("talker", "said", "no newline at the end"),
    ]
    out, err = capsys.readouterr()
    assert "ui thread" in out
    assert "hello" not in out + err and "book 1" not in out + err
    assert (tmp_path / "out" / "talker.log").read_text().count("\n") == 5


def test_an_activity_row_of_a_print() -> None:
    from arena_tui.run.hooks import Said

    h = Happening(Said(1_733_140_800_250, "talker", "hello there"), None)
    assert row(h) == ("12:00:00", "talker", "said", "", "hello there")


# ---- 3. anything raised in a hook -----------------------------------------------------------

ENDINGS = [
    ("sys.exit(3)", "SystemExit: 3"),
    ("sys.exit(0)", "SystemExit: 0"),
    ("sys.exit()", "SystemExit"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise GeneratorExit('odd')", "GeneratorExit: odd"),
    ("raise ValueError('plain')", "ValueError: plain"),
]


@pytest.mark.parametrize(("call", "said"), ENDINGS, ids=[c for c, _ in ENDINGS])
def test_cli_any_exception_in_a_hook_is_one_line_exit_1_and_the_log_replays(
    tmp_path: Path, call: str, said: str
) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "ends.py", once(call, "on_trades", "trades"))
    out = tmp_path / "out"
    done = here("backtest", str(path), str(log), "--out", str(out), "--json")
    assert done.returncode == 1
    line = one_error_line(done)
    assert (
        line == f"arena: error: {path.resolve()}:{line_of(path)}: {said} (in on_trades, entry ends)"
    )
    assert done.stdout == ""
    log_is_clean(out / "run.jsonl")


def test_ctrl_c_while_a_hook_runs_names_it_and_exits_130(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    body = once('print("spinning", flush=True)\n            while True:\n                pass')
    path = strategy(tmp_path / "spin.py", body)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "arena_tui.cli", "backtest", str(path), str(log)]
    cmd += ["--out", str(out), "--hook-timeout", "0"]
    with subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        for text in proc.stderr:
            if "[spin] spinning" in text:
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(60) == 130
    lines = rest.strip().splitlines()
    assert "Traceback" not in rest and len(lines) == 1, rest
    match = re.fullmatch(
        rf"arena: error: {re.escape(str(path.resolve()))}:(\d+): interrupted by Ctrl-C "
        r"\(in on_book, entry spin\)",
        lines[0],
    )
    assert match is not None, lines[0]
    assert line_of(path) - 2 <= int(match[1]) <= line_of(path)  # in the print or the loop
    log_is_clean(out / "run.jsonl")


# ---- 4. a hook that never returns --------------------------------------------------------

SPIN = once("while True:\n                pass", "on_book")
SWALLOWS = once(  # catches the first stop, then spins again
    "try:\n"
    "                while True:\n"
    "                    pass\n"
    "            except BaseException:\n"
    "                pass\n"
    "            while True:\n"
    "                pass",
    "on_book",
)


def test_cli_a_hook_that_never_returns_is_stopped_naming_hook_and_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "spin.py", SPIN)
    out = tmp_path / "out"
    done = arena(
        "backtest", str(path), str(log), "--out", str(out), "--hook-timeout", "0.5", timeout=120
    )
    line = one_error_line(done)
    match = re.fullmatch(
        rf"arena: error: {re.escape(str(path.resolve()))}:(\d+): timed out: on_book still "
        r"running after 0\.5 s \(--hook-timeout; 0 turns the limit off\) "
        r"\(in on_book, entry spin\)",
        line,
    )
    assert match is not None, line
    assert int(match[1]) in (line_of(path) - 1, line_of(path))  # in the loop
    log_is_clean(out / "run.jsonl")


def test_cli_a_hook_asleep_in_the_main_thread_is_stopped(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(tmp_path / "sleepy.py", once("time.sleep(600)"))
    done = arena(
        "backtest",
        str(path),
        str(log),
        "--out",
        str(tmp_path / "o"),
        "--hook-timeout",
        "0.5",
        timeout=120,
    )
    line = one_error_line(done)
    assert f"sleepy.py:{line_of(path)}: timed out: on_book still running after 0.5 s" in line


SWALLOWS_AND_RETURNS = once(
    "try:\n"
    "                while True:\n"
    "                    pass\n"
    "            except BaseException:\n"
    "                return",
    "on_book",
)


@pytest.mark.parametrize(
    "body",
    [SPIN, SWALLOWS, SWALLOWS_AND_RETURNS],
    ids=["spins", "swallows-the-stop", "swallows-and-returns"],
)
def test_a_hook_that_never_returns_is_stopped_in_a_worker_thread(tmp_path: Path, body: str) -> None:
    path = strategy(tmp_path / "spin.py", body)
    bt = backtest(tmp_path, {"spin": path}, hook_timeout_s=0.3, watched=True)
    source = BacktestSource.of_backtest(bt, [str(tmp_path / "market.jsonl")], title="t")
    worker = threading.Thread(target=source.run, args=(Playback(None), lambda m: None))
    worker.start()
    until(lambda: not worker.is_alive(), "the worker to stop the stuck hook", timeout=60)
    assert source.outcome is not None and source.outcome.error is not None
    assert f"{path.resolve()}:" in source.outcome.error
    assert "timed out: on_book still running after 0.3 s" in source.outcome.error
    log_is_clean(tmp_path / "out" / "run.jsonl")


def test_a_slow_hook_within_its_budget_runs_and_zero_turns_the_limit_off(tmp_path: Path) -> None:
    path = strategy(tmp_path / "slow.py", once("time.sleep(0.4)"))
    bt = backtest(tmp_path, {"slow": path}, hook_timeout_s=0)
    bt.run([str(tmp_path / "market.jsonl")])  # 0: no limit
    bt = backtest(tmp_path, {"slow": path}, hook_timeout_s=5)
    bt.run([str(tmp_path / "market.jsonl")])  # well within it
    bt = backtest(tmp_path, {"slow": path}, hook_timeout_s=0.1)
    with pytest.raises(StrategyError, match=r"slow\.py:\d+: timed out: on_book"):
        bt.run([str(tmp_path / "market.jsonl")])


@pytest.mark.parametrize("command", ["backtest", "paper"])
def test_hook_timeout_is_in_help(command: str) -> None:
    done = here(command, "--help")
    assert "--hook-timeout" in done.stdout


# ---- 5. hooks misspelled, strategies subclassed ----------------------------------------------


def test_a_misspelled_hook_is_warned_about_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (
        "class Typo(Strategy):\n"
        "    def on_books(self, ctx: Context, book) -> None:  # HERE\n"
        "        pass\n\n"
        "    def on_fill(self, ctx: Context, event) -> None:\n"
        "        pass\n\n"
        "    def on_book(self, ctx: Context, book) -> None:\n"
        "        pass\n"
    )
    path = strategy(tmp_path / "typo.py", body)
    load_strategy(path)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"arena: warning: {path.resolve()}:{line_of(path)}: Typo.on_books ")
    assert "did you mean on_book?" in lines[0]
    assert "on_start, on_book, on_trades, on_asset_ctx, on_event, on_mark, on_end" in lines[0]
    assert "Typo.on_fill" in lines[1] and "did you mean on_event" in lines[1]


def test_cli_warns_about_a_misspelled_hook(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    path = strategy(
        tmp_path / "typo.py", "class T(Strategy):\n    def on_trade(self, c, t):\n        pass\n"
    )
    done = here("backtest", str(path), str(log), "--out", str(tmp_path / "o"), "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)
    warned = [x for x in done.stderr.splitlines() if x.startswith("arena: warning:")]
    assert len(warned) == 1 and "T.on_trade" in warned[0] and "on_trades?" in warned[0]


def test_subclasses_of_subclasses_load(tmp_path: Path) -> None:
    """The leaf of a file's Strategy classes is the strategy: a base and its subclass in
    one file, and the baselines that subclass Momentum from another file."""
    body = (
        "class Base(Strategy):\n"
        "    def on_book(self, ctx: Context, book) -> None:\n"
        "        self.seen = True\n\n"
        "class Mine(Base):\n"
        "    pass\n"
    )
    assert type(load_strategy(strategy(tmp_path / "two.py", body))).__name__ == "Mine"
    kinds = [
        type(e.strategy).__name__
        for e in entrants_for(Path("strategies/reversion.py"), "baselines")
    ]
    assert kinds == ["Reversion", "Momentum", "ControlRandom", "Maker"]
    forked = body + "\nclass Other(Base):\n    pass\n"
    with pytest.raises(StrategyError, match=r"several Strategy subclasses \(Mine, Other\)"):
        load_strategy(strategy(tmp_path / "fork.py", forked))


# ---- 6. naming entries -------------------------------------------------------------------------


def test_entry_names_follow_the_engines_rule() -> None:
    from arena_tui.run.loader import ENTRY_NAME, parse_entry

    names = ["maker", "wide_2", "a-b_9", "x" * 32, "x" * 33, "Wide", "a b", "a.b", "é", ""]
    rows = [build.register(build.T0 + i, name) for i, name in enumerate(names)]
    eng, _ = build.run(build.season(), rows)
    assert eng.entries() == [n for n in names if ENTRY_NAME.fullmatch(n)] == names[:4]
    assert parse_entry("strategies/maker.py") == (Path("strategies/maker.py"), "maker")
    assert parse_entry("strategies/maker.py:wide_2") == (Path("strategies/maker.py"), "wide_2")
    for bad in ("s.py:Wide", "s.py:", "s.py:a b", "s.py:" + "x" * 33):
        with pytest.raises(StrategyError, match="must be 1-32 characters of a-z, 0-9, _ and -"):
            parse_entry(bad)


def test_a_file_with_a_colon_in_its_name_is_taken_whole(tmp_path: Path) -> None:
    from arena_tui.run.loader import parse_entry

    path = strategy(tmp_path / "odd:name.py", "class S(Strategy):\n    pass\n")
    assert parse_entry(str(path)) == (path, "odd-name")


def test_cli_one_file_twice_and_two_files_of_one_name_run_together(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(20))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    mine_a = strategy(tmp_path / "a" / "mine.py", "class S(Strategy):\n    pass\n")
    mine_b = strategy(tmp_path / "b" / "mine.py", "class S(Strategy):\n    pass\n")
    clash = here(
        "backtest", str(mine_a), str(log), "--vs", str(mine_b), "--out", str(tmp_path / "x")
    )
    line = one_error_line(clash)
    assert "two entries would be named 'mine'" in line and "FILE:NAME" in line
    out = tmp_path / "out"
    done = here(
        "backtest",
        "strategies/momentum.py:fast",
        str(log),
        "--vs",
        f"strategies/momentum.py:slow,baselines,{mine_a},{mine_b}:mine-b",
        "--twins",  # the entries' names are the point here, not the verdict: no twins' pass
        "0",
        "--out",
        str(out),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    names = [e["entry"] for e in json.loads((out / "report.json").read_text())["entries"]]
    assert sorted(names) == sorted(
        ["fast", "slow", "momentum", "reversion", "control_random", "maker", "mine", "mine-b"]
    )
    first = json.loads((out / "run.jsonl").read_text().splitlines()[0])
    header = first.get("header", first)  # a thin run log holds its full log's header
    assert header["entries"][:2] == ["fast", "slow"]
    again = arena("replay", str(out / "run.jsonl"), "--json")
    assert again.returncode == 0 and again.stdout == (out / "ranking.json").read_text()


def test_the_same_file_under_the_same_name_runs_once() -> None:
    entrants = entrants_for(Path("strategies/momentum.py"), "baselines,strategies/momentum.py")
    assert [e.name for e in entrants] == ["momentum", "reversion", "control_random", "maker"]
    with pytest.raises(BacktestError, match="two entries would be named 'maker'"):
        entrants_for(Path("strategies/momentum.py:maker"), "baselines")


def test_the_runner_refuses_a_name_the_engine_would_not_register(tmp_path: Path) -> None:
    path = strategy(tmp_path / "s.py", "class S(Strategy):\n    pass\n")
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    entrant = Entrant("Not Valid", load_strategy(path), path)
    with pytest.raises(BacktestError, match="1-32 characters of a-z, 0-9, _ and -"):
        Backtest(RunConfig(cache=False), resolve_season([str(log)], None), [entrant])
