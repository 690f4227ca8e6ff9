"""Calling the strategies' hooks for what the engine did: the runner's hook dispatch.

Why this module exists: after the engine applies an input the runner turns its events and
market data into hook calls (``on_event``, ``on_mark``, ``on_trades``, ``on_book``,
``on_asset_ctx``), each under the :class:`~arena_tui.run.hooks.Guard`'s mark, and keeps
each entrant's stats (``run.stats``) as the events come, before its hook sees them. Apart
from the loop (``run.backtest``) so the pass reads as its order of steps, and this as what
one step tells the strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena_tui.run.fields import StrategyError
from arena_tui.run.hooks import Guard
from arena_tui.run.market import AssetContext, MarketView, Trade
from arena_tui.run.parts import Entrant, ExitValue, overridden
from arena_tui.run.strategy import Context
from engine import Engine
from engine import events as ev
from engine.inputs import AssetCtx
from engine.inputs import Book as BookMsg
from engine.inputs import Trade as RawTrade


class Dispatch:
    """The hooks of ``entrants`` (those their classes override), called in the order given.

    ``now``: the time of the input being handled (what a strategy sends is stamped with
    it); ``live``: the strategies are registered, their market hooks run."""

    def __init__(
        self,
        engine: Engine,
        entrants: Sequence[Entrant],
        markets: dict[str, MarketView],
        guard: Guard,
        on_event: Callable[[ev.AnyEvent], None] | None,
        exit_value: ExitValue | None,
        heard_prints: Callable[[list[RawTrade], int], None] | None = None,
    ) -> None:
        """``heard_prints``: the subscribers' ``prints_applied`` (``run.stream.prints_ears``),
        None when one of them must observe each trades message."""
        self.engine = engine
        self.heard_prints = heard_prints
        self.entrants = list(entrants)
        self.by_name = {e.name: e for e in entrants}
        self.markets = markets
        self.guard = guard
        self.on_event = on_event
        self.exit_value = exit_value
        for e in self.entrants:
            e.hooks = overridden(e.strategy)
        self.trade_hooks = [e for e in self.entrants if "on_trades" in e.hooks]
        self.book_hooks = [e for e in self.entrants if "on_book" in e.hooks]
        self.ctx_hooks = [e for e in self.entrants if "on_asset_ctx" in e.hooks]
        self.live = False
        self.now = 0

    def contexts(
        self, send: Callable[[int, dict[str, Any]], None], seed: int, latency: int
    ) -> None:
        """Give every entrant its :class:`Context`: what its hooks are called with."""
        for e in self.entrants:
            e.ctx = Context(e.name, self.engine, send, seed, latency, path=e.path)
            e.ctx.markets = self.markets
            e.ctx.account._markets = self.markets

    def start(self, at: int) -> None:
        """The strategies are registered at ``at``: ``on_start``, in the order given."""
        self.live = True
        self.now = at
        for e in self.entrants:
            self.call(e, "on_start")

    def end(self) -> None:
        for e in self.entrants:
            self.call(e, "on_end")

    def call(self, e: Entrant, hook: str, *args: Any) -> None:
        ctx = e.ctx
        assert ctx is not None
        ctx.t = self.now  # what the strategy sends now is stamped with this input's time
        guard = self.guard  # the mark the watchdog and the output routing read
        guard.calls += 1
        guard.hook = hook
        guard.entrant = e
        try:
            getattr(e.strategy, hook)(ctx, *args)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, a timeout too
            raise guard.failed(e, hook, exc) from exc
        finally:
            guard.entrant = None
        if guard.stuck is not None:  # timed out, caught it and returned: stopped all the same
            raise StrategyError(guard.stuck)

    def events(self, out: list[ev.AnyEvent]) -> None:
        """Each event to ``on_event`` (the viewer's), its entry's stats, then its hook."""
        on_event = self.on_event
        get = self.by_name.get
        for event in out:
            if on_event is not None:
                on_event(event)
            e = get(getattr(event, "entry", ""))  # ("": no entry has that name)
            if e is None:
                continue
            kind = type(event)
            if kind is ev.MinuteMark:
                exit_eq = None
                if self.exit_value is not None:
                    exit_eq = self.exit_value(self.engine, e.name, self.markets)
                e.stats.mark(event, exit_eq)  # type: ignore[arg-type]
                if "on_mark" in e.hooks:
                    self.call(e, "on_mark", event)
                continue
            e.stats.event(event)
            if kind is not ev.ScoreRow and kind is not ev.Registered and "on_event" in e.hooks:
                self.call(e, "on_event", event)

    def trades(self, t: int) -> None:
        """The prints the trades message just applied (at ``t``) to the markets' views
        and the ``on_trades`` hooks."""
        applied = self.engine.applied_prints
        if applied:
            self.prints(applied, t)

    def passed_prints(self, applied: list[RawTrade], t: int) -> None:
        """A trades message the warm pass applied in a run (no event; nobody hooks prints):
        the prints it applied to the views, then to the subscribers (``heard_prints``)."""
        self.prints(applied, t)
        assert self.heard_prints is not None, "passed by only when the subscribers take prints"
        self.heard_prints(applied, t)

    def prints(self, applied: list[RawTrade], t: int) -> None:
        """``applied``: the prints one trades message applied (at ``t``), at least one."""
        markets = self.markets
        coin = applied[0].coin
        if len(applied) == 1 or not [raw for raw in applied if raw.coin != coin]:
            # one coin a message, as Hyperliquid sends them
            groups = [(markets.get(coin), applied)]
        else:
            by_coin: dict[str, list[RawTrade]] = {}
            for raw in applied:
                by_coin.setdefault(raw.coin, []).append(raw)
            groups = [(markets.get(c), raws) for c, raws in by_coin.items()]
        hooks = self.trade_hooks if self.live else None
        for market, raws in groups:
            if market is None:
                continue
            if not hooks:  # no hook to call: the views are built if someone reads them
                market.applied(raws, t)
                continue
            prints = [Trade(raw, t) for raw in raws]
            market.prints.extend(prints)
            for e in hooks:
                self.call(e, "on_trades", prints)

    def book(self, hl: BookMsg, t: int) -> None:
        if not self.live or not self.book_hooks:
            return  # the market's view reads the engine's latest book when asked
        market = self.markets.get(hl.data.coin)
        book = None if market is None else market.book
        if book is None:
            return
        for e in self.book_hooks:
            self.call(e, "on_book", book)

    def ctx(self, hl: AssetCtx, t: int) -> None:
        if not self.ctx_hooks or hl.data.coin not in self.markets or not self.live:
            return
        view = AssetContext(hl.data, t)
        for e in self.ctx_hooks:
            self.call(e, "on_asset_ctx", view)
