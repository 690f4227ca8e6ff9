"""Score against each parameter: a bar per value in the terminal (``plot.svg`` is
``sweep.plotsvg``'s, from the same values and numbers).

Why this module exists: a ranked table says which variant won, not whether it sits on a
broad plateau (a robust choice) or a lone spike (likely luck). For each swept parameter the
terminal shows the mean training S of the variants with each value (bars either side of
zero, the best variant's S beside it, ``*`` on the chosen value); numbers with more distinct
values than fit (a random or TPE search) are grouped in bins of a round width (1, 2 or 5
times a power of ten), on whole numbers for an integer parameter (``10..14``: 10 to 14
inclusive; a float's ``0.5..1.0`` holds 0.5 up to, not including, 1.0, the last bin its
top too).

Every number is written in the parameter's own type and never in exponent notation:
integers as integers, with thousands separators (``1,200,000``), floats in plain digits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from arena_tui.report.table import pct
from engine.units import tdiv

BAR_W = 24  # each side of zero
MAX_ROWS = 12  # distinct values shown; more are grouped in bins
STEPS = (1, 2, 5)  # round widths: these times a power of ten


def value_text(v: object) -> str:
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


def as_float(v: object) -> float:
    """A swept number as a float (0 for anything else: only numbers are binned or placed)."""
    return float(v) if isinstance(v, int | float) else 0.0


def value_order(v: object) -> tuple[str, str | float]:
    """Sort key of values of one parameter (one type): numbers by value, others as text."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return ("", float(v))
    return (type(v).__name__, value_text(v))


def groups(points: Sequence[tuple[object, int]]) -> list[tuple[str, list[int], bool]]:
    """(label, training S of its variants, holds the first point) per value, in value
    order; more numeric values than MAX_ROWS: bins (``bins``)."""
    first = points[0][0] if points else None
    values = sorted({p[0] for p in points}, key=value_order)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if len(values) <= MAX_ROWS or not numeric:
        return [(value_text(v), [s for x, s in points if x == v], v == first) for v in values]
    integer = all(isinstance(v, int) for v in values)
    out = []
    for label, lo, hi, last in bins(as_float(values[0]), as_float(values[-1]), integer):
        inside = [
            (x, s) for x, s in points if lo <= as_float(x) < hi or (last and as_float(x) == hi)
        ]
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
