"""Score against each parameter: a bar per value in the terminal, a scatter in ``plot.svg``.

Why this module exists: a ranked table says which variant won, not whether it sits on a
broad plateau (a robust choice) or a lone spike (likely luck). For each swept parameter the
terminal shows the mean training S of the variants with each value (bars either side of
zero, the best variant's S beside it, ``*`` on the chosen value); numbers with more distinct
values than fit are grouped in equal bins. The SVG plots every variant's training S against
each parameter, the chosen one in red: one self-contained file, no script.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

from arena_tui.report.table import pct
from engine.units import tdiv

BAR_W = 24  # each side of zero
MAX_ROWS = 12  # distinct values shown; more are grouped in bins
SVG_W, PANEL_H, PAD_L, PAD_R, PAD_T, PAD_B = 760, 210, 80, 24, 34, 40
INSET = 24  # between the axis and the first and last values


def _text(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _num(v: object) -> float:
    """A swept number as a float (0 for anything else: only numbers are binned or placed)."""
    return float(v) if isinstance(v, int | float) else 0.0


def _order(v: object) -> tuple[str, str | float]:
    """Sort key of values of one parameter (one type): numbers by value, others as text."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return ("", float(v))
    return (type(v).__name__, _text(v))


def groups(points: Sequence[tuple[object, int]]) -> list[tuple[str, list[int], bool]]:
    """(label, training S of its variants, holds the first point) per value, in value
    order; more numeric values than MAX_ROWS: equal-width bins ``lo..hi``."""
    first = points[0][0] if points else None
    values = sorted({p[0] for p in points}, key=_order)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if len(values) <= MAX_ROWS or not numeric:
        return [(_text(v), [s for x, s in points if x == v], v == first) for v in values]
    lo, hi = _num(values[0]), _num(values[-1])
    width = (hi - lo) / MAX_ROWS
    out = []
    for i in range(MAX_ROWS):
        a, b = lo + i * width, lo + (i + 1) * width
        inside = [
            (x, s) for x, s in points if a <= _num(x) < b or (i == MAX_ROWS - 1 and _num(x) == b)
        ]
        if inside:
            label = f"{a:.4g}..{b:.4g}"
            out.append((label, [s for _, s in inside], any(x == first for x, _ in inside)))
    return out


def bar(value: int, top: int) -> str:
    """``value`` as a bar either side of a ``|`` at zero, on a scale of ``top``."""
    n = 0 if top <= 0 else min(BAR_W, (abs(value) * BAR_W + top - 1) // top)
    if value < 0:
        return " " * (BAR_W - n) + "█" * n + "|" + " " * BAR_W
    return " " * BAR_W + "|" + "█" * n + " " * (BAR_W - n)


def points_of(
    doc: dict[str, Any], name: str, choosable: bool = False
) -> list[tuple[object, int]]:
    """(value, training S) of every variant of the last fold, the chosen one first;
    ``choosable``: only those that may be chosen (a variant with no fills scores 0, which
    says nothing of the value)."""
    variants = doc["folds"][-1]["variants"]
    return [
        (v["params"][name], v["score"])
        for v in variants
        if not choosable or v.get("excluded") is None
    ]


def param_lines(doc: dict[str, Any], width: int | None) -> list[str]:
    """A block of bars per swept parameter with more than one value, over the variants that
    may be chosen; a value none of whose variants may be says so instead of a bar."""
    out: list[str] = []
    for name in doc["params"]:
        rows = groups(points_of(doc, name, choosable=True))
        shown = {label for label, _, _ in rows}
        barred = [label for label, _, _ in groups(points_of(doc, name)) if label not in shown]
        if len(rows) + len(barred) < 2:
            continue
        means = [tdiv(sum(s), len(s)) for _, s, _ in rows]
        top = max((abs(m) for m in means), default=0) or 1
        label_w = max(len(label) for label in [*shown, *barred])
        if not out:
            out.append(
                "score against each parameter: mean training S of the variants that may be "
                "chosen with each value (best in brackets, how many; * the chosen one's)"
            )
        out.append(name)
        for (label, scores, chosen), m in zip(rows, means, strict=True):
            mark = "*" if chosen else " "
            out.append(
                f"  {label:>{label_w}} {mark}{bar(m, top)} {pct(m):>8} ({pct(max(scores))}, "
                f"{len(scores)})".rstrip()
            )
        out.extend(f"  {label:>{label_w}}  none of its variants may be chosen" for label in barred)
    return out


def _x_positions(values: list[object]) -> dict[object, float]:
    """Each distinct value's place in [0, 1]: by value for numbers, evenly otherwise."""
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if numeric and len(values) > 1:
        lo, hi = min(map(_num, values)), max(map(_num, values))
        if hi > lo:
            return {v: (_num(v) - lo) / (hi - lo) for v in values}
    ordered = sorted(values, key=_order)
    n = max(len(ordered) - 1, 1)
    return {v: (i / n if len(ordered) > 1 else 0.5) for i, v in enumerate(ordered)}


def svg(doc: dict[str, Any]) -> str:
    """``plot.svg``: a panel per swept parameter, every variant's training S against it."""
    names = list(doc["params"])
    variants = doc["folds"][-1]["variants"]
    scores = [v["score"] for v in variants]
    lo: int = min([0, *scores])
    hi: int = max([0, *scores])
    if hi == lo:
        hi = lo + 1
    height = PANEL_H * max(len(names), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_W}" height="{height}" '
        f'viewBox="0 0 {SVG_W} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(doc['base'])}: training S against each parameter</title>",
        f'<rect width="{SVG_W}" height="{height}" fill="white"/>',
    ]
    plot_w = SVG_W - PAD_L - PAD_R - 2 * INSET
    for i, name in enumerate(names):
        top = i * PANEL_H + PAD_T
        bottom = (i + 1) * PANEL_H - PAD_B
        pts = points_of(doc, name)
        xs = _x_positions(list(dict.fromkeys(p[0] for p in pts)))

        def y(s: int, top: int = top, bottom: int = bottom) -> float:
            return bottom - (s - lo) * (bottom - top) / (hi - lo)

        parts.append(f'<text x="{PAD_L}" y="{top - 12}" font-weight="bold">{escape(name)}</text>')
        parts.append(
            f'<line x1="{PAD_L}" y1="{y(0):.1f}" x2="{SVG_W - PAD_R}" y2="{y(0):.1f}" '
            'stroke="#999" stroke-dasharray="4 3"/>'
        )
        for s, label in {hi: pct(hi), lo: pct(lo), 0: "0%"}.items():
            parts.append(
                f'<text x="{PAD_L - 6}" y="{y(s) + 4:.1f}" text-anchor="end">{label}</text>'
            )
        step = max(1, -(-len(xs) // 10))  # at most about ten labels
        for v, x in sorted(xs.items(), key=lambda kv: kv[1])[::step]:
            parts.append(
                f'<text x="{PAD_L + INSET + x * plot_w:.1f}" y="{bottom + 16}" '
                f'text-anchor="middle">'
                f"{escape(_text(v))}</text>"
            )
        for j, (v, s) in enumerate(reversed(pts)):  # the chosen one last: drawn on top
            chosen = j == len(pts) - 1
            colour = "#d62728" if chosen else "#1f77b4"
            parts.append(
                f'<circle cx="{PAD_L + INSET + xs[v] * plot_w:.1f}" cy="{y(s):.1f}" '
                f'r="{5 if chosen else 3.5}" fill="{colour}" fill-opacity="0.75">'
                f"<title>{escape(name)}={escape(_text(v))}: S {pct(s)}</title></circle>"
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
