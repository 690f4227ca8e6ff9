"""A strategy's trips, and where a twin lays them: the shapes ``run.twins`` trades.

Why this module exists: a random twin must take the strategy's own risk (docs/verdict.md),
so what "the same risk" means is written once, here, apart from the pass that trades it: a
**trip** is the strategy's time in one coin from flat to flat (its legs: each order's
fills, when, the position they left, taker or maker), and a **placement** lays a twin's
trips in the window at random without two on one coin at once. Pure: fills in, shapes out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine import events as ev
from engine.units import E8, tdiv

SLACK_MS = 15_000  # room after each laid trip for its legs' own fill delays


@dataclass(frozen=True)
class Leg:
    """One order's part in a trip: when (ms after the trip's first fill), the position it
    left the strategy holding (signed, e8), and whether it took liquidity."""

    offset_ms: int
    target_e8: int
    taker: bool


@dataclass(frozen=True)
class Trip:
    """Flat to flat on one coin (``closed`` False: still open when the run ended)."""

    coin: str
    start: int  # the first fill's time
    duration_ms: int  # to the last leg, or to the run's end when not closed
    legs: tuple[Leg, ...]
    closed: bool

    @property
    def long(self) -> bool:
        return self.legs[0].target_e8 > 0


def trips_of(fills: Sequence[ev.Fill], coin_of: Callable[[int], str], end: int) -> list[Trip]:
    """The strategy's trips, in the order they started (ties: by coin, as first seen).

    Fills of one order that follow each other on a coin are one leg (an IOC walking three
    levels, a resting order filled by several prints), timed at its first fill. A fill that
    takes the position through zero closes the trip at that fill and opens the next one
    with what is left. ``end``: the run's last mark, the end of a trip still open.
    """
    pos: dict[str, int] = {}
    open_: dict[str, tuple[int, list[Leg], list[int]]] = {}  # coin -> start, legs, [last oid]
    done: list[Trip] = []
    for f in fills:
        coin = coin_of(f.asset)
        before = pos.get(coin, 0)
        after = before + (f.sz if f.is_buy else -f.sz)
        pos[coin] = after
        if before == 0:
            open_[coin] = (f.t, [Leg(0, after, f.taker)], [f.oid])
            continue
        start, legs, last = open_[coin]
        crosses = after != 0 and (after > 0) != (before > 0)
        target = 0 if crosses else after
        if last[0] == f.oid:  # the same order still filling: one leg
            legs[-1] = Leg(legs[-1].offset_ms, target, legs[-1].taker)
        else:
            legs.append(Leg(f.t - start, target, f.taker))
            last[0] = f.oid
        if target == 0:
            done.append(Trip(coin, start, legs[-1].offset_ms, tuple(legs), True))
            del open_[coin]
            if crosses:  # what is left opens the next trip, at this fill
                open_[coin] = (f.t, [Leg(0, after, f.taker)], [f.oid])
    for coin, (start, legs, _) in open_.items():
        done.append(Trip(coin, start, max(0, end - start), tuple(legs), False))
    done.sort(key=lambda trip: trip.start)
    return done


@dataclass(frozen=True)
class Placed:
    """A trip laid at ``at`` in one twin's window."""

    at: int
    trip: Trip


def placements(trips: Sequence[Trip], start: int, end: int, rng: random.Random) -> list[Placed]:
    """One twin's trips, re-timed: per coin (in the order coins first trade), the coin's
    trips in a random order, with gaps between them drawn uniformly among the ways of
    splitting the coin's free time (the window less the trips' durations, each padded by
    ``SLACK_MS`` where the window allows: a twin's legs are timed from its own first fill,
    which comes a few seconds after the order) in ``len(trips) + 1`` whole milliseconds.

    A trip still open at the end of the run stays where it is, to the end, and the twin
    holds it open there too (``run.desk``): the strategy's open position is marked at the
    end, never closed, so a twin that closed it would pay a spread and fees the strategy
    never paid (a small, systematic lead for the strategy: measured in docs/verdict.md).
    Its timing is then the strategy's own, which can only make the twins more like it."""
    by_coin: dict[str, list[Trip]] = {}
    for trip in trips:
        by_coin.setdefault(trip.coin, []).append(trip)
    out: list[Placed] = []
    for coin_trips in by_coin.values():
        order = [t for t in coin_trips if t.closed]
        stop = end
        for trip in coin_trips:
            if not trip.closed:  # (a coin's last trip, the only one that can be open)
                stop = max(start, min(end, trip.start))
                out.append(Placed(stop, trip))
        rng.shuffle(order)
        if not order:
            continue
        free = max(0, stop - start - sum(t.duration_ms for t in order))
        slack = min(SLACK_MS, free // max(1, len(order)))
        free -= slack * len(order)
        cuts = sorted(rng.randint(0, free) for _ in order)
        at = start
        last_cut = 0
        for trip, cut in zip(order, cuts, strict=True):
            at += cut - last_cut
            last_cut = cut
            out.append(Placed(at, trip))
            at += trip.duration_ms + slack
    out.sort(key=lambda p: (p.at, p.trip.coin))
    return out


def timing_freedom(trips: Sequence[Trip], start: int, end: int) -> int:
    """The share of the window (e8) the least free coin leaves its trips to move in: near 0
    for a strategy always in the market, where its timing cannot be told from its twins'."""
    span = max(1, end - start)
    by_coin: dict[str, int] = {}
    for trip in trips:
        by_coin[trip.coin] = by_coin.get(trip.coin, 0) + trip.duration_ms
    if not by_coin:
        return E8
    busiest = max(by_coin.values())
    return tdiv(max(0, span - busiest) * E8, span)
