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
from arena_tui.report.verdict_text import SHORT
from arena_tui.sweep.plot import param_lines
from arena_tui.util.human import plural, ratio_pct

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


RANKED = {"yes": "yes", "at_pace": "at pace", "no": "no", "no_trades": "no trades"}


def table(doc: dict[str, Any]) -> list[str]:
    """The last fold's variants (those that may be chosen first, best first; then the
    others, marked), then the control; columns as wide as needed. ``ranked?`` is at the
    training days' pace; ``beats 0`` is StepM's (each variant, after trying them all);
    ``~best`` the model confidence set's; the held-out columns are the chosen variant's,
    the same words as the held-out lines below."""
    fold = doc["folds"][-1]
    names = list(doc["params"])
    chosen = fold["chosen"]
    verdict = fold.get("verdict")
    head = [
        "rank", "variant", *names, "train S", "fills", "ranked?", "beats 0", "~best",
        "held-out S", "held-out skill", "not chosen / rejections",
    ]  # fmt: skip
    right = {0, *range(2, 2 + len(names) + 2)}
    rows: list[list[str]] = []
    variants = fold["variants"]
    for v in variants[:ROWS]:
        mine = chosen is not None and v["name"] == chosen["name"]
        rows.append(
            [
                "-" if v["rank"] is None else str(v["rank"]),
                v["name"],
                *[value_text(v["params"].get(n, "")) for n in names],
                ratio_pct(v["score"]),
                f"{v['fills']:,}",
                RANKED.get(v["ranked"], v["ranked"]),
                "" if "beats_zero" not in v else ("yes" if v["beats_zero"] else "-"),
                "~" if v.get("tied_best") else "",
                ratio_pct(chosen["holdout_score"]) if mine else "",
                SHORT["skill"].get(a := verdict["skill"]["answer"], a) if mine and verdict else "",
                v["excluded"] or rejections_text(v["rejections"]),
            ]
        )
    c = fold["control"]
    rows.append(
        [
            "",
            c["name"],
            *["" for _ in names],
            ratio_pct(c["score"]),
            f"{c['fills']:,}",
            RANKED.get(c["ranked"], c["ranked"]),
            "",
            "",
            ratio_pct(c["holdout_score"]),
            "",
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


def answers(v: dict[str, Any], width: int | None) -> list[str]:
    """The three answers (and the floor), one line each, as the report prints them."""
    out: list[str] = []
    for label, key in (("ranked?", "ranked"), ("money? ", "money"), ("skill? ", "skill")):
        out += wrap(f"  {label} {v[key]['text']}", width, indent="          ")
    out += wrap(f"  floor:  {v['floor']['text']}", width, indent="          ")
    return out


def luck_lines(luck: dict[str, Any] | None, chosen: str | None, width: int | None) -> list[str]:
    if luck is None:
        return wrap("luck over the variants tried: no variant could be chosen", width)
    if luck.get("answer") == "too_few_blocks":
        return wrap(
            f"luck over the {plural(luck['variants'], 'variant')} tried: "
            f"{plural(luck['blocks'], 'training block')}, too few to tell (a shorter --epoch "
            "gives more)",
            width,
        )
    spa, k = luck["spa"], luck["variants"]
    word = "beats" if luck["answer"] == "edge" else "does not beat"
    text = (
        f"luck over the {plural(k, 'variant')} that may be chosen (training blocks against "
        f"doing nothing): the best of {k} {word} zero by more than {k} tries give by luck "
        f"(Hansen's SPA p {spa['p_value']:.3f}; White's reality check {spa['p_upper']:.3f})"
    )
    stepm = luck["stepm"]
    if chosen is not None:
        text += (
            f"; the chosen {chosen} "
            + ("is" if luck["chosen_beats_zero"] else "is not")
            + f" among those that do, each (StepM: {len(stepm)} of {k})"
        )
    text += f"; {plural(len(luck['mcs']), 'variant')} tied with the best (model confidence set)"
    pbo = luck.get("pbo")
    if pbo is not None:
        text += (
            f"; probability the choice is overfit {pbo['pbo']:.2f} (CSCV over "
            f"{pbo['combinations']:,} splits of {pbo['groups']} groups)"
        )
    return wrap(text, width)


def verdict_lines(doc: dict[str, Any], width: int | None) -> list[str]:
    out: list[str] = []
    folds = doc["folds"]
    if len(folds) > 1:
        for f in folds:
            ch = f["chosen"]
            if ch is None:
                out += wrap(f"fold {f['fold'] + 1}: no variant could be chosen", width)
                continue
            out += wrap(
                f"fold {f['fold'] + 1}: trained on {plural(len(f['train_days']), 'day')}, chose "
                f"{ch['name']} (train S {ratio_pct(ch['train_score'])}); held out "
                f"{plural(len(f['holdout_days']), 'day')}: S {ratio_pct(ch['holdout_score'])}, "
                f"control {ratio_pct(f['control']['holdout_score'])}",
                width,
            )
    last = folds[-1]
    out += wrap(f"objective: {doc['objective']}", width)
    v = doc["verdict"]
    if v is None:
        out += wrap(
            "held out: no trades to judge: no variant had the training fills (--min-fills) "
            "and the pace to be ranked, so none was chosen",
            width,
        )
    else:
        chosen = last["chosen"]["name"] if len(folds) == 1 else "each fold's chosen variant"
        out += wrap(f"held out: {chosen} on days it was not chosen on", width)
        out += answers(v, width)
    chosen_name = last["chosen"]["name"] if last["chosen"] else None
    out += luck_lines(last["luck"], chosen_name, width)
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
    if last["reproduce"]:
        lines += wrap("rerun the chosen variant on one day (each day is its own run):", width)
    if last["reproduce"]:
        lines.append(f"  {last['reproduce']}")  # whole, to copy
    return "\n".join(lines)
