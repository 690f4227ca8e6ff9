"""Strategy parameters: declared as typed class attributes, overridden with ``--param``.

What a bug would break: the declared set (order, subclass wins, what is not a parameter),
the typed reading of a value and its one-line errors through the CLI, ``__init__`` seeing
an override, a variant's entry name (valid, order-blind, one name for one set of values),
an override changing what the strategy does, and report.json recording the values.
"""

from __future__ import annotations

import csv
import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.run.build import entrants_for
from arena_tui.run.loader import ENTRY_NAME, baseline_path, load_strategy
from arena_tui.run.params import (
    Param,
    ParamError,
    ParamValue,
    check_values,
    params_doc,
    parse_overrides,
    parse_value,
    strategy_params,
    variant_name,
)
from tests.clirun import ROOT, arena, arena_here, one_error_line

MOMENTUM = ROOT / "strategies" / "momentum.py"

TOY = """
from __future__ import annotations
from typing import ClassVar
from arena_tui.strategy import Strategy

class Base(Strategy):
    #: how far back the signal looks
    lookback_s: int = 60
    edge_bps: float = 15  # the edge to ask for
    steps: ClassVar[int] = 3
    _hidden: int = 1
    maybe: int | None = None
    nothing: int = None  # type: ignore[assignment]

class Toy(Base):
    edge_bps: float = 20.5
    on: bool = True
    mode: str = "fast"

    def __init__(self) -> None:
        self.seen = (self.lookback_s, self.edge_bps, self.on, self.mode)
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def here(*args: str) -> subprocess.CompletedProcess[str]:
    """``arena(*args)`` in this process (in arena's directory, as ``arena`` runs): no new
    interpreter importing the CLI. A refused backtest still runs in a real process
    (``test_a_strategy_without_parameters_says_so``)."""
    return arena_here(*args, cwd=ROOT)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("toy") / "toy.py", TOY)


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An hour of synthetic BTC: momentum fills twice on it with its defaults."""
    out = tmp_path_factory.mktemp("day") / "day.jsonl"
    done = here("synth", "--coins", "BTC", "--hours", "1", "--seed", "7", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


# ---- what a class declares -------------------------------------------------------------


def test_declared_parameters_in_order_with_types_defaults_and_docs(toy: Path) -> None:
    cls = type(load_strategy(toy))
    params = strategy_params(cls)
    assert list(params) == ["lookback_s", "edge_bps", "on", "mode"]  # base first
    assert params["lookback_s"] == Param("lookback_s", int, 60, "how far back the signal looks")
    # the subclass's default wins (kept where the base declared it), an int default of a
    # float parameter is a float
    assert params["edge_bps"].type is float and params["edge_bps"].default == 20.5
    assert strategy_params(cls.__mro__[1])["edge_bps"] == Param(
        "edge_bps", float, 15.0, "the edge to ask for"
    )
    assert (params["on"].type, params["mode"].default) == (bool, "fast")
    assert params_doc(cls, {"on": False}) == {
        "lookback_s": 60,
        "edge_bps": 20.5,
        "on": False,
        "mode": "fast",
    }


def test_a_default_of_another_declared_type_is_refused(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "bad.py",
        """
        from arena_tui.strategy import Strategy
        class Bad(Strategy):
            edge: int = 1.5
        """,
    )
    with pytest.raises(
        ParamError, match=r"bad\.py: parameter edge is declared int but its default"
    ):
        load_strategy(bad, params={"edge": 2})


def test_the_baselines_declare_their_knobs_with_todays_values() -> None:
    def defaults(name: str) -> dict[str, ParamValue]:
        return params_doc(type(load_strategy(baseline_path(name))), {})

    exits = {"take_profit_e8": 600_000, "stop_loss_e8": 400_000, "max_hold_ms": 1_800_000}
    momentum = {"window_ms": 300_000, "min_rise_e8": 150_000, "share_pct": 25}
    assert defaults("momentum") == {**momentum, "slippage_e8": 100_000, **exits}
    assert defaults("reversion") == {
        **momentum,
        "window_ms": 120_000,
        "slippage_e8": 100_000,
        **exits,
        "drawdown_e8": 1_200_000,
        "high_ms": 3_600_000,
    }
    assert defaults("control_random")["one_in"] == 400
    assert defaults("maker") == {
        "requote_ms": 20_000,
        "max_age_ms": 60_000,
        "share_pct": 10,
        "inventory_pct": 20,
    }


# ---- reading values ----------------------------------------------------------------------

INT = Param("n", int, 60)
FLOAT = Param("x", float, 1.5)
BOOL = Param("b", bool, True)


@pytest.mark.parametrize(
    ("param", "text", "value"),
    [
        (INT, "120", 120),
        (INT, "1_000", 1000),
        (INT, "-5", -5),
        (FLOAT, "0.25", 0.25),
        (FLOAT, "3", 3.0),
        (BOOL, "false", False),
        (BOOL, "TRUE", True),
        (BOOL, "0", False),
        (Param("s", str, "a"), " as is ", " as is "),
    ],
)
def test_parse_value(param: Param, text: str, value: ParamValue) -> None:
    got = parse_value(param, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("param", "text"),
    [(INT, "1.5"), (INT, "1e3"), (INT, ""), (FLOAT, "nan"), (FLOAT, "inf"), (BOOL, "yes")],
)
def test_parse_value_refuses(param: Param, text: str) -> None:
    with pytest.raises(ParamError, match=f"parameter {param.name} is"):
        parse_value(param, text)


@given(st.integers())
def test_an_int_reads_back(n: int) -> None:
    assert parse_value(INT, str(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_reads_back(x: float) -> None:
    assert parse_value(FLOAT, repr(x)) == x


def test_overrides_and_checked_values(toy: Path) -> None:
    cls = type(load_strategy(toy))
    assert parse_overrides(cls, ["lookback_s=120", "on=false"], "toy.py") == {
        "lookback_s": 120,
        "on": False,
    }
    assert check_values(cls, {"edge_bps": 3, "mode": "slow"}, "toy.py") == {
        "edge_bps": 3.0,
        "mode": "slow",
    }
    assert type(check_values(cls, {"edge_bps": 3}, "toy.py")["edge_bps"]) is float
    for bad in ({"lookback_s": True}, {"lookback_s": 1.0}, {"on": 1}, {"mode": 3}):
        with pytest.raises(ParamError, match=r"toy\.py: parameter"):
            check_values(cls, bad, "toy.py")
    with pytest.raises(ParamError, match="did you mean lookback_s"):
        check_values(cls, {"lookbak_s": 1}, "toy.py")


def test_init_sees_the_values(toy: Path) -> None:
    s: Any = load_strategy(toy, params={"lookback_s": 5, "mode": "slow"})
    assert s.seen == (5, 20.5, True, "slow")
    s = load_strategy(toy, params={"lookback_s": 5}, overrides=["lookback_s=7", "on=0"])
    assert s.seen == (7, 20.5, False, "fast")  # --param texts win
    s = load_strategy(toy)
    assert s.seen == (60, 20.5, True, "fast")
    # and the exit rules momentum builds in __init__ from its parameters
    m: Any = load_strategy(MOMENTUM, params={"max_hold_ms": 60_000})
    assert m.exits.max_hold_ms == 60_000 and m.exits.take_profit_e8 == 600_000


def test_entrants_name_the_variant_and_carry_every_value(toy: Path) -> None:
    entrants = entrants_for(toy, str(baseline_path("maker")), overrides=["lookback_s=90"])
    assert [e.name for e in entrants] == ["toy-look90", "maker"]
    assert entrants[0].params == {"lookback_s": 90, "edge_bps": 20.5, "on": True, "mode": "fast"}
    assert entrants[1].params["requote_ms"] == 20_000
    # the defaults given explicitly: the plain name
    assert [e.name for e in entrants_for(toy, None, {"lookback_s": 60})] == ["toy"]
    # a name given with FILE:NAME is kept
    assert [e.name for e in entrants_for(Path(f"{toy}:mine"), None, {"on": False})] == ["mine"]


# ---- variant names -----------------------------------------------------------------------

# small pools first, so two variants often differ only a little (a sign, a prefix)
NAME = st.sampled_from(["a", "look", "lookback", "Edge", "edge", "x1", "on"]) | st.from_regex(
    r"[a-zA-Z][a-zA-Z0-9_]{0,11}", fullmatch=True
)
VALUE: dict[type, st.SearchStrategy[Any]] = {
    int: st.integers(-3, 3) | st.integers(-(10**12), 10**12),
    float: st.sampled_from([0.0, -0.0, 0.5, -0.5, 1e-5, -1e-5, 5.0])
    | st.floats(allow_nan=False, allow_infinity=False),
    bool: st.booleans(),
    str: st.sampled_from(["", "a", "a_1", "A", "a-1"]) | st.text(max_size=6),
}


@st.composite
def declared(draw: st.DrawFn) -> dict[str, Param]:
    names = draw(st.lists(NAME, min_size=1, max_size=5, unique=True))
    out = {}
    for name in names:
        kind = draw(st.sampled_from([int, float, bool, str]))
        out[name] = Param(name, kind, draw(VALUE[kind]))
    return out


@st.composite
def values_of(draw: st.DrawFn, params: dict[str, Param]) -> dict[str, ParamValue]:
    chosen = draw(st.lists(st.sampled_from(list(params)), unique=True))
    return {n: draw(VALUE[params[n].type] | st.just(params[n].default)) for n in chosen}


@st.composite
def near(draw: st.DrawFn, values: dict[str, ParamValue], params: dict[str, Param]) -> Any:
    """``values`` with one value changed a little: its sign, one more, another spelling."""
    name = draw(st.sampled_from(list(params)))
    v = values.get(name, params[name].default)
    if isinstance(v, bool):
        other: ParamValue = not v
    elif isinstance(v, int | float):
        other = draw(st.sampled_from([-v, v + 1, v * 10]))
    else:
        other = draw(st.sampled_from([v + "_", "_" + v, v.upper(), v.replace("_", "-")]))
    return {**values, name: other}


def changed(values: dict[str, ParamValue], params: dict[str, Param]) -> dict[str, object]:
    """What a variant differs in: its values unlike the defaults (0.0 and -0.0 alike)."""
    return {n: v for n, v in values.items() if v != params[n].default}


@settings(max_examples=500, deadline=None)
@given(
    st.data(),
    declared(),
    st.sampled_from(["momentum", "a", "x" * 32, "my-strategy_2", "abcdefghijklmnopqrst--xy"]),
)
def test_variant_names_are_valid_stable_and_tell_variants_apart(
    data: st.DataObject, params: dict[str, Param], base: str
) -> None:
    a = data.draw(values_of(params))
    b = data.draw(values_of(params) | near(a, params))
    name_a = variant_name(base, a, params)
    assert ENTRY_NAME.fullmatch(name_a), name_a
    assert variant_name(base, dict(reversed(list(a.items()))), params) == name_a
    if not changed(a, params):
        assert name_a == base
    same = changed(a, params) == changed(b, params)
    assert (variant_name(base, b, params) == name_a) == same, (a, b)


def test_variant_names_read_as_the_values() -> None:
    params = strategy_params(type(load_strategy(MOMENTUM)))
    assert variant_name("momentum", {"window_ms": 60_000}, params) == "momentum-wind60000"
    two = {"share_pct": 10, "window_ms": 60_000}  # declaration order, whatever the order here
    assert variant_name("momentum", two, params) == "momentum-wind60000-shar10"
    floats = {"x": Param("x", float, 0.5), "flag": Param("flag", bool, True)}
    assert variant_name("s", {"x": -0.25, "flag": False}, floats) == "s-xm0p25-flag0"
    long = variant_name("momentum", dict.fromkeys(params, 1), params)
    assert long.startswith("momentum--") and len(long) == len("momentum--") + 10


# ---- through the CLI ---------------------------------------------------------------------


def backtest(day: Path, out: Path, *args: str) -> dict[str, Any]:
    """``arena backtest momentum.py DAY ARGS``: its report.json (the fills and parameters
    are what these tests read, not the verdict: no twins' pass)."""
    done = here(
        "backtest", str(MOMENTUM), str(day), "--twins", "0", "--out", str(out), "--json", *args
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return report


def fills(out: Path, entry: str = "momentum") -> list[tuple[str, ...]]:
    """An entry's fills: time, coin, side, price, size (its name and oids left out)."""
    with (out / "fills.csv").open(encoding="utf-8") as f:
        rows = csv.DictReader(f)
        return [
            (r["t"], r["coin"], r["side"], r["px"], r["sz"])
            for r in rows
            if r["entry"].startswith(entry)
        ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--param", "window_m=1"],
            "momentum.py: no parameter 'window_m' (did you mean window_ms? its parameters: "
            "window_ms, min_rise_e8, share_pct, slippage_e8, take_profit_e8, stop_loss_e8, "
            "max_hold_ms)",
        ),
        (
            ["--param", "window_ms=1.5"],
            "momentum.py: parameter window_ms is an integer (default 300000): got '1.5'",
        ),
        (
            ["--param", "window_ms=1", "--param", "window_ms=2"],
            "momentum.py: parameter window_ms is given twice (--param window_ms=...)",
        ),
        (["--param", "window_ms"], "--param takes NAME=VALUE (e.g. lookback_s=120), got"),
    ],
)
def test_bad_params_are_one_line(day: Path, tmp_path: Path, args: list[str], message: str) -> None:
    done = here("backtest", str(MOMENTUM), str(day), "--out", str(tmp_path / "o"), *args)
    line = one_error_line(done)
    assert message in line, line
    assert not (tmp_path / "o").exists()  # refused before the run made its directory


RANGED = """
from __future__ import annotations
from typing import ClassVar
from arena_tui.strategy import Strategy

class Base(Strategy):
    window_ms: int = 60_000
    edge: float = 1.5
    on: bool = True
    ranges: ClassVar = {"window_ms": (1_000, 3_600_000), "edge": (0, None)}

class Ranged(Base):
    share_pct: int = 25
    ranges: ClassVar = {"share_pct": (1, 100), "edge": (None, 10)}  # edge: the subclass's
"""


def test_a_parameter_declares_its_range_and_a_value_outside_is_refused(tmp_path: Path) -> None:
    cls = type(load_strategy(write(tmp_path / "ranged.py", RANGED)))
    params = strategy_params(cls)
    assert (params["window_ms"].low, params["window_ms"].high) == (1_000, 3_600_000)
    assert (params["edge"].low, params["edge"].high) == (None, 10)  # a subclass's entry wins
    assert (params["share_pct"].low, params["on"].low, params["on"].high) == (1, None, None)
    assert parse_overrides(cls, ["window_ms=1000", "share_pct=100", "edge=-3"], "r.py") == {
        "window_ms": 1000,
        "share_pct": 100,
        "edge": -3.0,
    }
    for item, said in [
        ("window_ms=-5", "r.py: parameter window_ms is out of its range 1000..3600000: got -5"),
        ("window_ms=3600001", "out of its range 1000..3600000: got 3600001"),
        ("share_pct=0", "parameter share_pct is out of its range 1..100: got 0"),
        ("edge=10.5", "parameter edge is out of its range <= 10: got 10.5"),
    ]:
        with pytest.raises(ParamError) as caught:
            parse_overrides(cls, [item], "r.py")
        assert said in str(caught.value)
    with pytest.raises(ParamError, match=r"share_pct is out of its range 1\.\.100: got 101"):
        check_values(cls, {"share_pct": 101}, "r.py")  # a sweep file's values, a search's
    assert parse_value(params["window_ms"], "5", in_range=False) == 5  # a sweep's step


@pytest.mark.parametrize(
    ("ranges", "said"),
    [
        ('{"windw_ms": (1, 2)}', "ranges: 'windw_ms' is not a parameter (its parameters: "),
        ('{"on": (0, 1)}', "ranges: on is bool; only numbers have one"),
        ('{"window_ms": (1,)}', "ranges: window_ms: want (low, high), numbers or None"),
        ('{"window_ms": (True, 5)}', "want (low, high)"),
        ('{"window_ms": (9, 1)}', "ranges: window_ms: the low end 9 is above the high end 1"),
        ('{"window_ms": (1, 10)}', "ranges: window_ms's default 60000 is out of its range 1..10"),
        ('[("window_ms", 1, 2)]', "ranges maps parameter names to (low, high)"),
    ],
)
def test_a_bad_range_declaration_is_one_line_naming_the_file(
    tmp_path: Path, ranges: str, said: str
) -> None:
    text = RANGED.split("class Ranged")[0].replace(
        'ranges: ClassVar = {"window_ms": (1_000, 3_600_000), "edge": (0, None)}',
        f"ranges: ClassVar = {ranges}",
    )
    path = write(tmp_path / "bad.py", text)
    with pytest.raises(ParamError) as caught:
        strategy_params(type(load_strategy(path)))
    assert str(caught.value).startswith(f"{path}: ranges")
    assert said in str(caught.value)


def test_the_baselines_declare_ranges_and_backtest_and_sweep_refuse_values_outside(
    day: Path, tmp_path: Path
) -> None:
    for name in ("momentum", "reversion", "control_random", "maker"):
        params = strategy_params(type(load_strategy(baseline_path(name))))
        ranged = [p for p in params.values() if p.low is not None or p.high is not None]
        assert ranged == list(params.values()), name  # every knob of every baseline
    said = "momentum.py: parameter window_ms is out of its range 1..86400000: got -5"
    out = tmp_path / "o"
    line = one_error_line(
        arena_here(
            "backtest", str(MOMENTUM), str(day), "--param", "window_ms=-5", "--out", str(out)
        )
    )
    assert said in line and not out.exists()
    line = one_error_line(
        arena_here(
            "sweep",
            str(MOMENTUM),
            str(day),
            str(day),
            "--param",
            "window_ms=-5,60000",
            "--out",
            str(out),
        )
    )
    assert "--param window_ms=-5,60000: parameter window_ms is out of its range 1..86400000" in line
    line = one_error_line(
        arena_here(
            "sweep", str(MOMENTUM), str(day), "--param", "share_pct=50..150:50", "--out", str(out)
        )
    )
    assert "parameter share_pct is out of its range 1..100: got 150" in line
    control = str(ROOT / "strategies" / "control_random.py")
    line = one_error_line(
        arena_here("backtest", control, str(day), "--param", "one_in=0", "--out", str(out))
    )
    assert "control_random.py: parameter one_in is out of its range >= 1: got 0" in line
    assert not out.exists()


def test_the_sweeps_unknown_parameter_error_names_the_file_once(day: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    line = one_error_line(
        arena_here("sweep", str(MOMENTUM), str(day), "--param", "windw_ms=1,2", "--out", str(out))
    )
    assert line.count("momentum.py") == 1, line
    assert "no parameter 'windw_ms' (did you mean window_ms?" in line


def test_a_strategy_without_parameters_says_so(day: Path, tmp_path: Path) -> None:
    plain = write(
        tmp_path / "plain.py",
        """
        from arena_tui.strategy import Strategy
        class Plain(Strategy):
            pass
        """,
    )
    done = arena("backtest", str(plain), str(day), "--param", "x=1", "--out", str(tmp_path / "o"))
    assert "the strategy declares none" in one_error_line(done)


def test_an_override_changes_the_fills_and_report_json_records_it(
    day: Path, tmp_path: Path
) -> None:
    base = backtest(day, tmp_path / "base", "--vs", str(baseline_path("maker")))
    short = backtest(day, tmp_path / "short", "--param", "window_ms=60000")
    never = backtest(day, tmp_path / "never", "--param", "window_ms=900000")
    (entry, maker) = base["entries"]
    assert entry["entry"] == "momentum" and entry["params"]["window_ms"] == 300_000
    assert maker["params"] == params_doc(type(load_strategy(baseline_path("maker"))), {})
    assert [e["entry"] for e in short["entries"]] == ["momentum-wind60000"]
    assert short["entries"][0]["params"] == {**entry["params"], "window_ms": 60_000}
    # a window of 15 minutes never sees 0.15% with buyers ahead in the first hour; one
    # minute enters at other times than five
    taken = fills(tmp_path / "base")
    assert taken and fills(tmp_path / "never") == []
    assert fills(tmp_path / "short") and fills(tmp_path / "short") != taken
    assert never["entries"][0]["fills"] == {"taker": 0, "maker": 0}


def test_class_sources_are_parsed_one_thread_at_a_time(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPython 3.11.7's ast.parse is not thread-safe (python/cpython#106905), and a sweep on
    an in-process Dask cluster reads parameters on several threads: no two may be inside
    inspect.getsource at once."""
    import inspect
    import threading
    import time

    real = inspect.getsource
    inside = 0
    most = 0
    count = threading.Lock()

    def slow_getsource(obj: object) -> str:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.02)  # long enough for every other thread to arrive
        try:
            return real(obj)  # type: ignore[arg-type]
        finally:
            with count:
                inside -= 1

    monkeypatch.setattr(inspect, "getsource", slow_getsource)
    cls = type(load_strategy(toy))
    docs: list[str] = []
    threads = [
        threading.Thread(target=lambda: docs.append(strategy_params(cls)["lookback_s"].doc))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert docs == ["how far back the signal looks"] * 4
    assert most == 1
