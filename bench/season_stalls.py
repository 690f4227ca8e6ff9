"""The soak's stalls: what held the host's event loop, from its ``--stall-trace`` file.

``arena host --stall-trace MS`` leaves, for each time its loop was held MS or more, the
stack the loop was stuck in (caught while it happened) and the stall's length
(``arena_tui.host.stalls``). Here they are put on the season's days and weeks, and summed by
their *cause*: the innermost frame of this project's code, or, when the loop was waiting in
its selector (nothing of ours ran: the process was not given the CPU, or a thread held the
interpreter's lock), that. Beside each, the share of the stall the loop's thread spent on
the CPU: near 100%, our own work held the loop; far less, it was waiting (the machine's
other load, or another thread).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from arena_tui.host.stalls import TICK_S, Stall, read_trace
from bench.season_stats import DAY_MS, WEEK_MS
from bench.season_watch import SimClock, Watch

ROOT = Path(__file__).resolve().parent.parent
OURS = {p.name for p in (ROOT / "arena_tui").iterdir() if p.is_dir()} | {"engine", "arena_tui"}
WAITING = "(the loop waiting in select: nothing of ours running)"
SHOWN = 8  # frames of each cause's longest stall kept in the report


def cause_of(stack: tuple[str, ...]) -> str:
    if not stack:
        return "(over before its stack was written)"
    if stack[0].endswith("(select)"):
        return WAITING
    for frame in stack:
        if frame.split("/", 1)[0] in OURS:
            return frame
    return stack[0]


def cause(stall: Stall) -> str:
    """The cause most of the stall's stacks show (the first's on a tie)."""
    seen = [cause_of(s) for s in stall.stacks] or [cause_of(())]
    return max(seen, key=seen.count)


def stall_figures(trace: Path, clock: SimClock, watch: Watch, days: int) -> dict[str, Any]:
    """The stalls by day and week, by cause (longest total first), and each one's load."""
    if not trace.exists():
        return {"traced": False}
    stalls = read_trace(trace)
    loads = [(s.wall, s.load1) for s in watch.samples]
    by_day: list[list[float]] = [[] for _ in range(days)]
    by_week: list[list[float]] = [[] for _ in range((days + 6) // 7)]
    causes: dict[str, list[Stall]] = defaultdict(list)
    held = {"work": 0.0, "lock": 0.0, "cpu": 0.0}  # ms of stalls by what held the loop
    rows: list[dict[str, Any]] = []
    for s in stalls:
        wall = round(s.ended * 1000)
        day = (clock.sim(wall) - clock.day0) // DAY_MS
        week = (clock.sim(wall) - clock.day0) // WEEK_MS
        if 0 <= day < days:
            by_day[day].append(s.ms)
            by_week[min(week, len(by_week) - 1)].append(s.ms)
        causes[cause(s)].append(s)
        load = min(loads, key=lambda p: abs(p[0] - wall))[1] if loads else None
        ran = round(s.ran_ms / (s.ms + TICK_S * 1000), 2)  # of the stall's time, on the CPU
        row = {"day": day + 1, "ms": s.ms, "ran": ran, "held_by": s.waiting_for}
        rows.append(row | {"load1": load, "cause": cause(s)})
        held[s.waiting_for] += s.ms
    summary: list[dict[str, Any]] = [
        {
            "cause": name,
            "n": len(group),
            "total_ms": round(sum(s.ms for s in group)),
            "max_ms": max(s.ms for s in group),
            "ran_ms": round(sum(s.ran_ms for s in group)),
            "stack": list(max(group, key=lambda s: s.ms).stack[:SHOWN]),
        }
        for name, group in causes.items()
    ]
    summary.sort(key=lambda r: -r["total_ms"])
    return {
        "traced": True,
        "n": len(stalls),
        "by_day": [{"n": len(v), "max_ms": max(v, default=0)} for v in by_day],
        "by_week": [{"n": len(v), "max_ms": max(v, default=0)} for v in by_week],
        "by_cause": summary,
        "held_ms": {k: round(v) for k, v in held.items()},
        "longest": sorted(rows, key=lambda r: -r["ms"])[:10],
    }


def print_stalls(r: dict[str, Any]) -> None:
    st = r.get("stalls") or {}
    if not st.get("traced"):
        print("  stalls: not traced (this tree's arena host has no --stall-trace)")
        return
    weeks = ", ".join(f"{w['n']} (max {w['max_ms']:.0f} ms)" for w in st["by_week"])
    print(f"  loop stalls of {r.get('stall_trace_ms')} ms or more: {st['n']}; by week {weeks}")
    if "held_ms" in st:
        h = st["held_ms"]
        print(
            f"  what held the loop (ms of stalls): its own work {h['work']}, another thread of "
            f"the host holding the lock {h['lock']}, no CPU for the host {h['cpu']}"
        )
    for c in st["by_cause"][:6]:
        head = f"{c['n']:>4} stalls, {c['total_ms']:>6} ms in all ({c['ran_ms']} ms running)"
        head += f", max {c['max_ms']:.0f}"
        print(f"    {head}: {c['cause']}")
        for frame in c["stack"][:4]:
            print(f"           {frame}")
    for row in st["longest"][:5]:
        share = f"{row['ms']:.0f} ms ({row['ran']:.0%} of it running; {row.get('held_by')})"
        print(f"    day {row['day']}: {share}, load {row['load1']}: {row['cause']}")
