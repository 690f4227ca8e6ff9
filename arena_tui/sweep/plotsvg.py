"""``plot.svg``: every variant's training S against each swept parameter.

Why this module exists: the terminal's bars (``sweep.plot``) show means; the picture shows
each variant, the chosen one in red, one panel a parameter, under axis titles (the
parameter, "training S"), its tick labels thinned or put on a second row until none
overlaps another: one self-contained file, no script. Numbers are written as the terminal
writes them (``plot.number``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

from arena_tui.report.table import pct
from arena_tui.sweep.plot import (
    MAX_ROWS,
    as_float,
    decimals_of,
    nice_width,
    number,
    points_of,
    value_order,
    value_text,
)

SVG_W, PANEL_H, PAD_L, PAD_R, PAD_T, PAD_B = 760, 240, 96, 24, 34, 68
INSET = 24  # between the axis and the first and last values
CHAR_W = 7.0  # a character of the 12 px sans-serif labels, about (the widest digits)
LABEL_GAP = 10.0  # the least room between two tick labels


def _x_positions(values: list[object]) -> dict[object, float]:
    """Each distinct value's place in [0, 1]: by value for numbers, evenly otherwise."""
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if numeric and len(values) > 1:
        lo, hi = min(map(as_float, values)), max(map(as_float, values))
        if hi > lo:
            return {v: (as_float(v) - lo) / (hi - lo) for v in values}
    ordered = sorted(values, key=value_order)
    n = max(len(ordered) - 1, 1)
    return {v: (i / n if len(ordered) > 1 else 0.5) for i, v in enumerate(ordered)}


def label_w(label: str) -> float:
    """About how wide a 12 px label is drawn."""
    return len(label) * CHAR_W


def spaced(
    ticks: Sequence[tuple[float, str]], room: float, rows: int = 1
) -> list[tuple[float, str, int]]:
    """The ticks (x in px from the first value's place, label) whose centred labels stay in
    the picture (``room``: the plot's width) without any two overlapping, each with its
    row (0, or below it up to ``rows - 1``): kept from the left, each on the first row where
    it keeps LABEL_GAP from the last label there, dropped when there is none."""
    kept: list[tuple[float, str, int]] = []
    right = [-math.inf] * rows
    for x, label in sorted(ticks):
        half = label_w(label) / 2
        if x - half < -(INSET + PAD_L - 4) or x + half > room + INSET + PAD_R - 4:
            continue
        row = next((r for r in range(rows) if x - half >= right[r] + LABEL_GAP), None)
        if row is not None:
            kept.append((x, label, row))
            right[row] = x + half
    return kept


def x_ticks(
    values: list[object], xs: dict[object, float], plot_w: float
) -> list[tuple[float, str, int]]:
    """The tick labels under a panel (x, label, row), none overlapping another: the values
    themselves when they are few (a grid) or not numbers, on a second row where they would
    touch (and left out only where neither row has room); else round numbers across their
    range (a random or TPE search's values are anywhere), as many as fit on one row."""
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if not numeric or len(values) <= MAX_ROWS:
        return spaced([(xs[v] * plot_w, value_text(v)) for v in values], plot_w, rows=2)
    nums = [as_float(v) for v in values]
    lo, hi = min(nums), max(nums)
    integer = all(isinstance(v, int) for v in values)
    most = max(2, int(plot_w // (label_w("0.00") + LABEL_GAP)))  # then fewer, until they fit
    while True:
        width = nice_width(hi - lo, most, integer)
        places = 0 if integer else decimals_of(width)
        marks = []
        k = math.ceil(lo / width - 1e-9)
        while k * width <= hi + width * 1e-9:
            v = round(k * width, places)
            text = number(int(v)) if integer else number(v, places)
            marks.append(((v - lo) / (hi - lo) * plot_w, text))
            k += 1
        kept = spaced(marks, plot_w)
        if len(kept) == len(marks) or most <= 2:
            return kept
        most -= 1


def svg(doc: dict[str, Any]) -> str:
    """``plot.svg``: a panel per swept parameter, every variant's training S against it,
    with the parameter's name under its axis and "training S" beside it."""
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
        values = list(dict.fromkeys(p[0] for p in pts))
        xs = _x_positions(values)

        def y(s: int, top: int = top, bottom: int = bottom) -> float:
            return bottom - (s - lo) * (bottom - top) / (hi - lo)

        mid = (top + bottom) / 2
        parts += [
            f'<text x="{PAD_L}" y="{top - 12}" font-weight="bold">{escape(name)}</text>',
            f'<line x1="{PAD_L}" y1="{y(0):.1f}" x2="{SVG_W - PAD_R}" y2="{y(0):.1f}" '
            'stroke="#999" stroke-dasharray="4 3"/>',
            f'<line x1="{PAD_L}" y1="{top}" x2="{PAD_L}" y2="{bottom}" stroke="#ccc"/>',
            f'<line x1="{PAD_L}" y1="{bottom}" x2="{SVG_W - PAD_R}" y2="{bottom}" stroke="#ccc"/>',
            f'<text x="16" y="{mid:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 16 {mid:.1f})">training S</text>',
            f'<text x="{PAD_L + INSET + plot_w / 2:.1f}" y="{bottom + 50}" '
            f'text-anchor="middle">{escape(name)}</text>',
        ]
        shown: list[float] = []
        for s, label in ((hi, pct(hi)), (lo, pct(lo)), (0, "0%")):
            if all(abs(y(s) - other) >= 14 for other in shown):  # no label over another
                shown.append(y(s))
                parts.append(
                    f'<text x="{PAD_L - 6}" y="{y(s) + 4:.1f}" text-anchor="end">{label}</text>'
                )
        for x, label, row in x_ticks(values, xs, plot_w):
            parts.append(
                f'<text x="{PAD_L + INSET + x:.1f}" y="{bottom + 18 + 14 * row}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
        for j, (v, s) in enumerate(reversed(pts)):  # the chosen one last: drawn on top
            chosen = j == len(pts) - 1
            colour = "#d62728" if chosen else "#1f77b4"
            parts.append(
                f'<circle cx="{PAD_L + INSET + xs[v] * plot_w:.1f}" cy="{y(s):.1f}" '
                f'r="{5 if chosen else 3.5}" fill="{colour}" fill-opacity="0.75">'
                f"<title>{escape(name)}={escape(value_text(v))}: S {pct(s)}</title></circle>"
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
