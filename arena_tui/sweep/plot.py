"""Score against each parameter: a bar per value in the terminal, a scatter in ``plot.svg``.

Why this module exists: a ranked table says which variant won, not whether it sits on a
broad plateau (a robust choice) or a lone spike (likely luck). For each swept parameter the
terminal shows the mean training S of the variants with each value (bars either side of
zero, the best variant's S beside it, ``*`` on the chosen value); numbers with more distinct
values than fit (a random or TPE search) are grouped in bins of a round width (1, 2 or 5
times a power of ten), on whole numbers for an integer parameter (``10..14``: 10 to 14
inclusive; a float's ``0.5..1.0`` holds 0.5 up to, not including, 1.0, the last bin its
top too). The SVG plots every variant's training S against each parameter, the chosen one
in red, under axis titles (the parameter, "training S"), its tick labels thinned until none
overlaps: one self-contained file, no script.

Every number is written in the parameter's own type and never in exponent notation:
integers as integers, with thousands separators (``1,200,000``), floats in plain digits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

from arena_tui.report.table import pct
from engine.units import tdiv

BAR_W = 24  # each side of zero
MAX_ROWS = 12  # distinct values shown; more are grouped in bins
SVG_W, PANEL_H, PAD_L, PAD_R, PAD_T, PAD_B = 760, 240, 96, 24, 34, 68
INSET = 24  # between the axis and the first and last values
CHAR_W = 7.0  # a character of the 12 px sans-serif labels, about (the widest digits)
LABEL_GAP = 10.0  # the least room between two tick labels
STEPS = (1, 2, 5)  # round widths: these times a power of ten


def _text(v: object) -> str:
    """A value as the plot writes it: see ``number``; text as it is."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return number(v)
    return str(v)


def number(v: float, decimals: int | None = None) -> str:
    """A number in plain digits with thousands separators, never in exponent notation: an
    int as an int, a float with its shortest digits (``decimals``: exactly that many)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if not math.isfinite(v):
        return repr(v)
    if decimals is not None:
        return f"{v:,.{decimals}f}"
    text = format(Decimal(repr(v)), ",f")
    return text if "." in text else text + ".0"


def nice_width(span: float, most: int, integer: bool) -> float:
    """The least round width (``STEPS`` times a power of ten; 1 at least for integers)
    that cuts ``span`` into at most ``most`` bins."""
    raw = max(span / most, 1.0 if integer else 1e-12)  # (groups bins only distinct values)
    exp = math.floor(math.log10(raw))
    while True:
        for m in STEPS:
            width = m * 10.0**exp
            if width >= raw * (1 - 1e-12) and (not integer or width >= 1):
                return float(round(width)) if integer else width
        exp += 1


def decimals_of(width: float) -> int:
    """How many decimals tell the edges of bins ``width`` apart."""
    return max(0, -math.floor(math.log10(width) + 1e-9))


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
    order; more numeric values than MAX_ROWS: bins (``bins``)."""
    first = points[0][0] if points else None
    values = sorted({p[0] for p in points}, key=_order)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if len(values) <= MAX_ROWS or not numeric:
        return [(_text(v), [s for x, s in points if x == v], v == first) for v in values]
    integer = all(isinstance(v, int) for v in values)
    out = []
    for label, lo, hi, last in bins(_num(values[0]), _num(values[-1]), integer):
        inside = [(x, s) for x, s in points if lo <= _num(x) < hi or (last and _num(x) == hi)]
        if inside:
            out.append((label, [s for _, s in inside], any(x == first for x, _ in inside)))
    return out


def bins(lo: float, hi: float, integer: bool) -> list[tuple[str, float, float, bool]]:
    """At most MAX_ROWS bins of a round width covering ``lo``..``hi``: (label, from, to,
    the last) each, a value in a bin when from <= value < to (the last: <= to). Integers'
    bins have whole edges and say their first and last whole number, ``10..14``."""
    width = nice_width(hi - lo, MAX_ROWS, integer)
    while True:
        start = math.floor(lo / width) * width
        count = max(1, math.floor((hi - start) / width + 1e-9) + (1 if integer else 0))
        if not integer and start + count * width < hi:
            count += 1
        if count <= MAX_ROWS:
            break
        width = nice_width(width * (MAX_ROWS + 1), MAX_ROWS, integer)  # the next round one
    places = decimals_of(width)
    out = []
    for i in range(count):
        # (float edges rounded to the width's places: 0.1 + 5 * 0.05 is 0.35, not above it)
        a, b = round(start + i * width, places), round(start + (i + 1) * width, places)
        if integer:
            first, last = int(a), int(b) - 1
            label = number(first) if first == last else f"{number(first)}..{number(last)}"
        else:
            label = f"{number(a, places)}..{number(b, places)}"
        out.append((label, a, b, i == count - 1))
    return out


def bar(value: int, top: int) -> str:
    """``value`` as a bar either side of a ``|`` at zero, on a scale of ``top``."""
    n = 0 if top <= 0 else min(BAR_W, (abs(value) * BAR_W + top - 1) // top)
    if value < 0:
        return " " * (BAR_W - n) + "█" * n + "|" + " " * BAR_W
    return " " * BAR_W + "|" + "█" * n + " " * (BAR_W - n)


def points_of(doc: dict[str, Any], name: str, choosable: bool = False) -> list[tuple[object, int]]:
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
        return spaced([(xs[v] * plot_w, _text(v)) for v in values], plot_w, rows=2)
    nums = [_num(v) for v in values]
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
                f"<title>{escape(name)}={escape(_text(v))}: S {pct(s)}</title></circle>"
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
