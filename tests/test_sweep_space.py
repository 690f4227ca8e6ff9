"""A sweep's parameter space and its searches (arena_tui/sweep/space.py).

The space: ``--param`` specs (lists, ranges, one value) typed by the strategy's declared
parameters, the sweep file's ``[params]`` under the command line, one line for anything
wrong. The searches: grid walks every combination in a fixed order, random draws distinct
trials for a seed, TPE asks the same trials for the same seed and ``tell`` sequence; and
all three, rebuilt and told the trials a sweep already finished (a resume), ask exactly
what the uninterrupted sweep would have asked next.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.run.params import Param, ParamValue
from arena_tui.run.strategy import Strategy
from arena_tui.sweep import SweepError
from arena_tui.sweep.space import (
    GRID_LIMIT,
    Dim,
    Search,
    SpaceError,
    load_sweep_file,
    make_search,
    parse_dim,
    parse_space,
    space_doc,
)
from arena_tui.util.errors import ArenaError

LOOKBACK = Param("lookback_s", int, 60)
EDGE = Param("edge", float, 1.5)
FLAG = Param("flag", bool, False)
MODE = Param("mode", str, "fast")


class Knobs(Strategy):
    lookback_s: int = 60
    edge_bps: int = 15
    share: float = 0.5
    hedge: bool = False
    mode: str = "fast"


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert isinstance(exc.value, ArenaError), repr(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


# --- dimensions -------------------------------------------------------------------------


def test_a_list_a_range_and_one_value_are_typed_by_the_parameter() -> None:
    assert parse_dim(LOOKBACK, "30,60,120").grid() == (30, 60, 120)
    assert parse_dim(LOOKBACK, "5..50:5").grid() == tuple(range(5, 51, 5))
    assert parse_dim(LOOKBACK, "5..52:5").grid()[-1] == 50  # up to the high end
    assert parse_dim(LOOKBACK, "-2..2").grid() == (-2, -1, 0, 1, 2)  # an int range steps by 1
    assert parse_dim(LOOKBACK, "7") == Dim("lookback_s", (7,))
    assert parse_dim(LOOKBACK, "7..7:3") == Dim("lookback_s", (7,))
    ints = parse_dim(LOOKBACK, "1_000..3_000:1_000").grid()
    assert ints == (1000, 2000, 3000)
    assert all(type(v) is int for v in ints)  # ints stay ints
    floats = parse_dim(EDGE, "0.1..0.7:0.1").grid()
    # in decimal, as written: 0.1 + 2 * 0.1 in binary floats would be 0.30000000000000004
    assert floats == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    assert parse_dim(EDGE, "1,2.5").grid() == (1.0, 2.5)
    assert all(type(v) is float for v in parse_dim(EDGE, "1..3:1").grid())
    assert parse_dim(FLAG, "true,false").grid() == (True, False)
    assert parse_dim(MODE, "fast,slow").grid() == ("fast", "slow")
    assert parse_dim(MODE, "a..b").grid() == ("a..b",)  # a str is never a range


def test_a_float_range_without_a_step_is_continuous_and_has_no_grid() -> None:
    dim = parse_dim(EDGE, "0.5..2")
    assert dim.size() is None
    assert (dim.low, dim.high, dim.step) == (0.5, 2.0, None)
    with pytest.raises(SpaceError) as exc:
        dim.grid()
    assert "continuous" in one_line(exc)
    with pytest.raises(SpaceError, match="continuous"):
        make_search("grid", {"edge": dim}, trials=None, seed=0)


@pytest.mark.parametrize(
    ("param", "spec", "words"),
    [
        (LOOKBACK, "50..5:5", "above its high end"),
        (LOOKBACK, "5..50:0", "step must be above 0"),
        (EDGE, "1..2:-0.5", "step must be above 0"),
        (LOOKBACK, "1.5", "an integer"),
        (LOOKBACK, "5..50:2.5", "an integer"),
        (LOOKBACK, "30,,60", "empty value"),
        (LOOKBACK, "30,60,30", "given twice"),
        (FLAG, "yes", "true or false"),
        (EDGE, "1..inf:1", "a number"),
    ],
)
def test_a_bad_spec_is_one_line_naming_it(param: Param, spec: str, words: str) -> None:
    with pytest.raises(SpaceError) as exc:
        parse_dim(param, spec)
    text = one_line(exc)
    assert words in text
    assert f"--param {param.name}={spec}" in text


@settings(max_examples=60, deadline=None)
@given(
    low=st.integers(-1000, 1000),
    span=st.integers(0, 500),
    step=st.integers(1, 60),
)
def test_an_int_range_is_every_step_from_low_up_to_high(low: int, span: int, step: int) -> None:
    dim = parse_dim(LOOKBACK, f"{low}..{low + span}:{step}")
    expected = tuple(range(low, low + span + 1, step))
    assert dim.grid() == expected
    assert dim.size() == len(expected)
    assert [dim.index_of(v) for v in expected] == list(range(len(expected)))
    assert dim.index_of(low + span + step) is None
    assert parse_dim(LOOKBACK, dim.spec()) == dim  # the spec reads back


@settings(max_examples=60, deadline=None)
@given(
    low=st.integers(-500, 500),
    span=st.integers(0, 200),
    step=st.integers(1, 50),
    scale=st.sampled_from([1, 10, 100, 1000]),
)
def test_a_float_range_is_the_decimals_it_names(low: int, span: int, step: int, scale: int) -> None:
    """Each value is the float nearest the decimal ``low + i * step`` as written (int true
    division rounds correctly), never an accumulated binary sum."""
    high = low + span
    dim = parse_dim(EDGE, f"{low / scale!r}..{high / scale!r}:{step / scale!r}")
    expected = tuple((low + i * step) / scale for i in range(span // step + 1))
    assert dim.grid() == expected
    assert [dim.index_of(v) for v in expected] == list(range(len(expected)))


# --- the space: command line over the sweep file ------------------------------------------


def test_the_space_takes_the_file_and_the_command_line_wins() -> None:
    table = {"mode": ["fast", "slow"], "edge_bps": "5..15:5", "lookback_s": [30, 60], "share": 1}
    space = parse_space(Knobs, ["lookback_s=90,120", "hedge=true,false"], table, "k.py")
    assert list(space) == ["lookback_s", "edge_bps", "share", "hedge", "mode"]  # declared order
    assert space["lookback_s"].grid() == (90, 120)  # the command line's, not the file's
    assert space["edge_bps"].grid() == (5, 10, 15)
    assert space["share"].grid() == (1.0,)
    assert type(space["share"].grid()[0]) is float  # an int for a float parameter
    assert space["hedge"].grid() == (True, False)
    assert space["mode"].grid() == ("fast", "slow")
    # the whole sweep-file document works as well as its [params] table
    assert (
        parse_space(Knobs, [], {"search": "grid", "params": table}, "k.py")["mode"]
        == (space["mode"])
    )
    # and a space written out as a table reads back the same
    assert parse_space(Knobs, [], space_doc(space), "k.py") == space
    assert parse_space(Knobs, [], None, "k.py") == {}


@pytest.mark.parametrize(
    ("items", "table", "words"),
    [
        (["lookbak_s=30"], None, "did you mean lookback_s?"),
        (["lookback_s=30", "lookback_s=60"], None, "given twice"),
        (["lookback_s"], None, "NAME=VALUES"),
        (["lookback_s=3x"], None, "--param lookback_s=3x: parameter lookback_s is an integer"),
        ([], {"edge_bp": [1, 2]}, "did you mean edge_bps?"),
        ([], {"edge_bps": [1, 1.5]}, "[params] edge_bps"),
        ([], {"edge_bps": [True]}, "[params] edge_bps"),
        ([], {"hedge": [True, True]}, "given twice"),
        ([], {"edge_bps": "9..1"}, "above its high end"),
        ([], {"edge_bps": []}, "no values"),
    ],
)
def test_a_bad_space_is_one_line_naming_the_file(
    items: list[str], table: dict[str, object] | None, words: str
) -> None:
    with pytest.raises(SpaceError) as exc:
        parse_space(Knobs, items, table, "strategies/k.py")
    text = one_line(exc)
    assert text.startswith("strategies/k.py: "), text
    assert words in text


def test_a_space_error_is_a_sweep_error() -> None:
    assert issubclass(SpaceError, SweepError)


def test_the_sweep_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(
        'search = "tpe"\ntrials = 40\nseed = 7\nholdout = "25%"\nepoch = "2h"\n'
        'vs = ["baselines", "other.py"]\n\n[params]\nlookback_s = [30, 60]\nedge_bps = "5..50:5"\n',
        encoding="utf-8",
    )
    doc = load_sweep_file(path)
    assert doc["search"] == "tpe" and doc["trials"] == 40 and doc["seed"] == 7
    assert doc["vs"] == "baselines,other.py"
    assert doc["params"] == {"lookback_s": [30, 60], "edge_bps": "5..50:5"}
    space = parse_space(Knobs, ["edge_bps=1,2"], doc, str(path))
    assert space["lookback_s"].grid() == (30, 60) and space["edge_bps"].grid() == (1, 2)
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    assert load_sweep_file(tmp_path / "empty.toml") == {"params": {}}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('serach = "grid"\n', "unknown key 'serach' (did you mean search?"),
        ('search = "bayes"\n', "grid or random or tpe"),
        ("trials = 0\n", "a whole number >= 1"),
        ("trials = true\n", "a whole number >= 1"),
        ('seed = "7"\n', "a whole number"),
        ('holdout = "130%"\n', "strictly between 0 and 1"),
        ("holdout = 0.3\nfolds = 3\n", "not both"),
        ('epoch = "1w"\n', "--epoch"),
        ("vs = 3\n", "a string or a list of strings"),
        ("params = 3\n", "a [params] table"),
        ("[params\n", "not a TOML sweep file"),
    ],
)
def test_a_bad_sweep_file_is_one_line_naming_it(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpaceError) as exc:
        load_sweep_file(path)
    line = one_line(exc)
    assert line.startswith(f"{path}: "), line
    assert words in line


def test_a_missing_sweep_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SpaceError) as exc:
        load_sweep_file(tmp_path / "nope.toml")
    assert "cannot read the sweep file" in one_line(exc)


# --- the searches -------------------------------------------------------------------------

SPACE = {
    "lookback_s": parse_dim(LOOKBACK, "10..60:10"),
    "edge": parse_dim(EDGE, "0.5..2:0.5"),
    "flag": parse_dim(FLAG, "true,false"),
    "mode": parse_dim(MODE, "fast"),
}  # 6 * 4 * 2 * 1 = 48 combinations


def objective(trial: dict[str, ParamValue]) -> int:
    """A training score with one best trial: lookback 40, edge 1.5, flag on."""
    lb, edge = trial.get("lookback_s", 40), trial.get("edge", 1.5)
    flag = trial.get("flag", True)
    assert isinstance(lb, int) and isinstance(edge, float) and isinstance(flag, bool)
    return -abs(lb - 40) * 1_000_000 - int(abs(edge - 1.5) * 4_000_000) + flag * 500_000


def drive(search: Search, batch: int, stop: int | None = None) -> list[dict[str, ParamValue]]:
    """What a driver does: ask a batch, tell each its score in trial order, again."""
    out: list[dict[str, ParamValue]] = []
    while (stop is None or len(out) < stop) and (trials := search.ask(batch)):
        for trial in trials:
            search.tell(trial, objective(trial))
        out += trials
    return out


def key(trial: dict[str, ParamValue]) -> tuple[tuple[str, ParamValue], ...]:
    return tuple((type(v).__name__, v) for v in trial.values())


def test_the_grid_is_every_combination_in_a_fixed_order() -> None:
    search = make_search("grid", SPACE, trials=None, seed=0)
    assert search.total == 48
    trials = drive(search, batch=5)
    names = list(SPACE)
    expected = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(d.grid() for d in SPACE.values()))
    ]
    assert trials == expected  # declared order, the last parameter fastest
    assert trials[:2] == [
        {"lookback_s": 10, "edge": 0.5, "flag": True, "mode": "fast"},
        {"lookback_s": 10, "edge": 0.5, "flag": False, "mode": "fast"},
    ]
    assert search.ask(5) == []
    # the seed does not matter to a grid; --trials at least its size runs it all
    assert drive(make_search("grid", SPACE, trials=1000, seed=9), batch=48) == expected


def test_a_grid_larger_than_trials_or_the_limit_is_refused() -> None:
    with pytest.raises(SpaceError) as exc:
        make_search("grid", SPACE, trials=10, seed=0)
    assert "the grid has 48 combinations, more than --trials 10" in one_line(exc)
    big = {
        "lookback_s": parse_dim(LOOKBACK, f"1..{GRID_LIMIT}"),
        "flag": parse_dim(FLAG, "true,false"),
    }
    with pytest.raises(SpaceError) as exc:
        make_search("grid", big, trials=None, seed=0)
    assert f"--trials {2 * GRID_LIMIT}" in one_line(exc)
    assert make_search("grid", big, trials=2 * GRID_LIMIT, seed=0).total == 2 * GRID_LIMIT
    with pytest.raises(SpaceError, match="at least 1"):
        make_search("random", SPACE, trials=0, seed=0)


def test_an_empty_space_is_one_trial_of_the_defaults() -> None:
    for kind in ("grid", "random", "tpe"):
        search = make_search(kind, {}, trials=None, seed=0)
        assert search.ask(10) == [{}], kind
        assert search.ask(10) == [], kind


def test_random_draws_distinct_trials_repeatably_for_a_seed() -> None:
    first = drive(make_search("random", SPACE, trials=20, seed=3), batch=7)
    assert len(first) == 20
    assert len({key(t) for t in first}) == 20  # without repeats
    assert first == drive(make_search("random", SPACE, trials=20, seed=3), batch=4)
    assert first != drive(make_search("random", SPACE, trials=20, seed=4), batch=7)
    # more trials keep the first draws; more than the space is the whole space, shuffled
    assert drive(make_search("random", SPACE, trials=30, seed=3), batch=7)[:20] == first
    everything = drive(make_search("random", SPACE, trials=500, seed=3), batch=100)
    assert sorted(map(key, everything)) == sorted(
        map(key, drive(make_search("grid", SPACE, trials=None, seed=0), batch=100))
    )


def test_random_draws_from_a_continuous_range() -> None:
    space = {"edge": parse_dim(EDGE, "0.5..2"), "flag": parse_dim(FLAG, "true,false")}
    trials = drive(make_search("random", space, trials=25, seed=1), batch=10)
    assert len(trials) == 25
    assert all(0.5 <= t["edge"] <= 2.0 for t in trials)  # type: ignore[operator]
    assert trials == drive(make_search("random", space, trials=25, seed=1), batch=3)


def test_tpe_is_repeatable_for_a_seed_and_never_asks_a_trial_twice() -> None:
    first = drive(make_search("tpe", SPACE, trials=30, seed=5), batch=4)
    assert len(first) == 30
    assert len({key(t) for t in first}) == 30
    assert first == drive(make_search("tpe", SPACE, trials=30, seed=5), batch=4)
    assert first != drive(make_search("tpe", SPACE, trials=30, seed=6), batch=4)
    # every value is one of the space's, typed as declared
    for trial in first:
        for name, dim in SPACE.items():
            assert dim.index_of(trial[name]) is not None, (name, trial)
    # a space smaller than trials: all of it, then nothing
    small = {"lookback_s": parse_dim(LOOKBACK, "1..5"), "mode": parse_dim(MODE, "a,b")}
    every = drive(make_search("tpe", small, trials=50, seed=5), batch=3)
    assert len(every) == 10 and len({key(t) for t in every}) == 10


def test_tpe_learns_from_what_it_is_told() -> None:
    """After its random start, TPE proposes more near the best than a random search does."""
    space = {"lookback_s": parse_dim(LOOKBACK, "0..200"), "edge": parse_dim(EDGE, "0..3")}
    close = []
    for kind in ("random", "tpe"):
        trials = drive(make_search(kind, space, trials=60, seed=2), batch=1)
        late = trials[30:]
        close.append(sum(abs(t["lookback_s"] - 40) <= 20 for t in late))  # type: ignore[operator]
    assert close[1] > 2 * close[0], close


WIDE = {
    "lookback_s": parse_dim(LOOKBACK, "0..1000"),
    "edge": parse_dim(EDGE, "0..3:0.01"),
    "flag": parse_dim(FLAG, "true,false"),
}  # wide enough that TPE's proposals depend on its random draws, not only on the scores


@pytest.mark.parametrize(
    ("kind", "space", "done"),
    [
        ("grid", SPACE, 14),
        ("random", WIDE, 14),
        ("tpe", WIDE, 12),
        ("tpe", WIDE, 20),  # after two batches of TPE proposals (the first 10 are random)
        ("tpe", SPACE, 20),
        ("tpe", WIDE, 0),
    ],
)
def test_a_search_told_the_finished_trials_asks_what_the_uninterrupted_one_asks(
    kind: str, space: dict[str, Dim], done: int
) -> None:
    """A sweep stopped after ``done`` trials restarts, replays them into tell() in trial
    order, and asks the same next trials as a sweep that never stopped. Grid and random
    follow a fixed order, so any point works (14: in the middle of the fourth batch of
    four); TPE's proposals depend on the scores it had when it asked, so at the end of a
    batch (mid-batch, the driver re-asks instead: see the next test)."""
    trials = None if kind == "grid" else 28
    whole = drive(make_search(kind, space, trials=trials, seed=11), batch=4)  # type: ignore[arg-type]
    assert len(whole) == (48 if kind == "grid" else 28)
    resumed = make_search(kind, space, trials=trials, seed=11)  # type: ignore[arg-type]
    for trial in whole[:done]:
        resumed.tell(dict(trial), objective(trial))
    rest = drive(resumed, batch=4)
    assert rest == whole[done:]


@pytest.mark.parametrize("kind", ["grid", "random", "tpe"])
def test_a_search_replayed_batch_by_batch_asks_the_same_trials(kind: str) -> None:
    """The driver's resume: a fresh search asked batch by batch, each batch told the scores
    already stored, reaches the batch the kill interrupted with the same trials, and the
    trials after it are the uninterrupted sweep's."""
    trials = None if kind == "grid" else 28
    space = SPACE if kind == "grid" else WIDE
    whole = drive(make_search(kind, space, trials=trials, seed=4), batch=4)  # type: ignore[arg-type]
    again = drive(make_search(kind, space, trials=trials, seed=4), batch=4)  # type: ignore[arg-type]
    assert again == whole


def test_a_told_trial_outside_the_space_is_refused() -> None:
    search = make_search("tpe", SPACE, trials=5, seed=0)
    with pytest.raises(SpaceError, match="not one of"):
        search.tell({"lookback_s": 15, "edge": 0.5, "flag": True, "mode": "fast"}, 0)
    with pytest.raises(SpaceError, match="without"):
        search.tell({"lookback_s": 10}, 0)
