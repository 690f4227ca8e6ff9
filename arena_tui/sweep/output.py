"""A sweep's result for a person: the ranked table, the verdicts, the plot, how to rerun.

Renders the document ``driver.sweep_doc`` makes (``--json`` prints that document as is):
the variants ranked by mean training S (the first is the chosen one), the control under
them, the chosen variant's held-out S and the block-bootstrap verdict against the control
on the held-out days, the reality check over every variant tried on the training days,
the score against each parameter (``plot``), and the ``arena backtest`` line that reruns
the chosen variant on one day exactly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from arena_tui.report.layout import wrap
from arena_tui.report.table import pct
from arena_tui.report.verdict_text import signed
from arena_tui.sweep.plot import param_lines
from arena_tui.util.human import plural

ROWS = 20  # variants shown; sweep.json has them all
GAP = "  "


def day_span(days: Sequence[dict[str, Any]]) -> str:
    def stamp(t: int | None) -> str:
        return "?" if t is None else time.strftime("%Y-%m-%d", time.gmtime(t // 1000))

    if not days:
        return "none"
    first, last = stamp(days[0]["first_t"]), stamp(days[-1]["first_t"])
    return first if first == last else f"{first} .. {last}"


def value_text(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def rejections_text(rej: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n:,}" for reason, n in rej.items()) or "-"


def table(doc: dict[str, Any]) -> list[str]:
    """The last fold's variants, best first, then the control; columns as wide as needed."""
    fold = doc["folds"][-1]
    names = list(doc["params"])
    chosen = fold["chosen"]
    head = ["rank", "variant", *names, "train S", "held-out S", "verdict", "fills", "rejections"]
    right = {0, *range(2, 2 + len(names) + 4)}
    rows: list[list[str]] = []
    variants = fold["variants"]
    for v in variants[:ROWS]:
        mine = v["name"] == chosen["name"]
        rows.append(
            [
                str(v["rank"]),
                v["name"],
                *[value_text(v["params"].get(n, "")) for n in names],
                pct(v["score"]),
                pct(chosen["holdout_score"]) if mine else "-",
                fold["verdict"]["verdict"] if mine else "",
                f"{v['fills']:,}",
                rejections_text(v["rejections"]),
            ]
        )
    c = fold["control"]
    rows.append(
        [
            "",
            c["name"],
            *["" for _ in names],
            pct(c["score"]),
            pct(c["holdout_score"]),
            "",
            f"{c['fills']:,}",
            rejections_text(c["rejections"]),
        ]
    )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        out = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return GAP.join(out).rstrip()

    lines = [line(head)]
    lines += [line(r) for r in rows[:-1]]
    if len(variants) > ROWS:
        lines.append(
            f"  ... {plural(len(variants) - ROWS, 'more variant')} (sweep.json has them all)"
        )
    lines.append(line(rows[-1]))
    return lines


def verdict_lines(doc: dict[str, Any], width: int | None) -> list[str]:
    out: list[str] = []
    folds = doc["folds"]
    if len(folds) > 1:
        for f in folds:
            ch = f["chosen"]
            out += wrap(
                f"fold {f['fold'] + 1}: trained on {plural(len(f['train_days']), 'day')}, chose "
                f"{ch['name']} (train S {pct(ch['train_score'])}); held out "
                f"{plural(len(f['holdout_days']), 'day')}: S {pct(ch['holdout_score'])}, "
                f"control {pct(f['control']['holdout_score'])}",
                width,
            )
    v = doc["verdict"]
    chosen = folds[-1]["chosen"]["name"] if len(folds) == 1 else "each fold's chosen variant"
    text = f"held out: {chosen} against control_random"
    if v["mean_diff"] is not None:
        low, high = v["interval"]
        text += (
            f": mean lead {signed(v['mean_diff'])} a block over "
            f"{plural(v['paired_blocks'], 'block')}"
            f" of {doc['epoch']}, {v['confidence_pct']}% interval [{signed(low)}, {signed(high)}]"
        )
    out += wrap(f"{text}: {v['text']}", width)
    rc = folds[-1]["reality_check"]
    if rc is None:
        out += wrap("luck over the variants tried: too few training blocks to tell", width)
    else:
        out += wrap(
            f"luck: on the training days the best of {rc['variants']} ({rc['best']}) leads the "
            f"control by {signed(rc['best_mean_diff'])} a block; the chance that the best of "
            f"{rc['variants']} leads by this much by luck alone is p = {rc['p_value']:.3f} "
            f"(White's reality check, {rc['resamples']:,} resamples): {rc['text']}",
            width,
        )
    return out


def render(doc: dict[str, Any], width: int | None) -> str:
    folds = doc["folds"]
    last = folds[-1]
    days = doc["days"]
    by_path = {d["path"]: d for d in days}
    train = [by_path[p] for p in last["train_days"]]
    held = [by_path[p] for p in last["holdout_days"]]
    split = (
        f"{plural(len(folds), 'walk-forward fold')}, the last trained on "
        f"{plural(len(train), 'day')} "
        f"({day_span(train)}), tested on {len(held)} ({day_span(held)})"
        if len(folds) > 1
        else f"{len(train)} training ({day_span(train)}), {len(held)} held out ({day_span(held)})"
    )
    lines = wrap(
        f"sweep of {doc['base']}: {plural(len(last['variants']), 'variant')} ({doc['search']} "
        f"search, seed {doc['seed']}) over {plural(len(days), 'day')}: {split}",
        width,
    )
    lines += ["", *table(doc), ""]
    lines += verdict_lines(doc, width)
    plot = param_lines(doc, width)
    if plot:
        lines += ["", *plot]
    lines.append("")
    if doc.get("plot"):
        lines += wrap(f"plot: {doc['plot']}", width)
    lines += wrap("rerun the chosen variant on one day (each day is its own run):", width)
    lines.append(f"  {last['reproduce']}")  # whole, to copy
    return "\n".join(lines)
