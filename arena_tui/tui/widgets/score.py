"""The score panel: the entry's score and how close it is to each of the season's limits.

Equity (and exit-value equity), R, MDD and S are the score as the engine keeps it (as of
the last minute mark: the numbers ``arena backtest`` reports, R, MDD and S with every
digit, so S = R - MDD adds up); then equity now, at the marks, and the rank. Below them,
now: drawdown from the peak against the limit that pauses the entry, cap used (positions
at mark plus reserves) against the position cap, open orders against the slots, and
eligibility: fill days and active share.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.tui.fmt import bar, pct, ratio_pct, usd
from arena_tui.tui.snapshot import Score
from engine.units import E8

BAR = 10


def _row(label: str, value: str, limit: str, bar_text: str, over: bool) -> Text:
    text = Text(f"{label:<10}{value:>7} of {limit:<6} ")
    text.append(bar_text, style="bold red" if over else "green")
    return text


def score_lines(s: Score) -> list[Text]:
    """The panel's lines (plain enough to read in a test)."""
    exit_eq = "-" if s.exit_equity is None else f"${usd(s.exit_equity)}"
    rank = "-" if s.rank is None else str(s.rank)
    limit_e8 = s.drawdown_limit_pct * 10**6
    cap_e8 = s.cap_pct * 10**6
    share = s.active_marks * E8 // s.marks if s.marks else 0
    min_share = s.min_active_pct * 10**6
    return [
        Text(f"equity  ${usd(s.equity)}  exit {exit_eq}"),
        Text.assemble((f"now     ${usd(s.equity_now)}", "dim"), f"  rank {rank}"),
        # every digit (S = R - MDD adds up), so a line of its own, in the report's order
        Text(f"S {ratio_pct(s.score)}  R {ratio_pct(s.ret)}  MDD {ratio_pct(s.mdd)}"),
        _row(
            "drawdown",
            pct(s.drawdown),
            f"{s.drawdown_limit_pct}%",
            bar(s.drawdown, limit_e8, BAR),
            s.drawdown * 100 >= limit_e8 * 80,
        ),
        _row(
            "cap used",
            pct(s.cap_used),
            f"{s.cap_pct}%",
            bar(s.cap_used, cap_e8, BAR),
            s.cap_used >= cap_e8,
        ),
        _row(
            "orders",
            str(s.open_orders),
            str(s.max_open_orders),
            bar(s.open_orders, s.max_open_orders, BAR),
            s.open_orders >= s.max_open_orders,
        ),
        _row(
            "fill days",
            str(s.fill_days),
            str(s.min_fill_days),
            bar(s.fill_days, s.min_fill_days, BAR),
            False,
        ),
        _row("active", pct(share), f"{s.min_active_pct}%", bar(share, min_share, BAR), False),
    ]


class ScorePanel(Widget):
    score: reactive[Score | None] = reactive(None)

    def watch_score(self, s: Score | None) -> None:
        if s is None:
            return
        self.border_title = f"{s.entry}: score"
        if s.paused:
            self.border_subtitle = "PAUSED at the drawdown limit: reduce-only"
        else:
            self.border_subtitle = "eligible" if s.eligible else "not eligible yet"

    def render(self) -> Text:
        s = self.score
        if s is None:
            return Text("waiting for the first input…", style="dim")
        return Text("\n").join(score_lines(s))

    @property
    def text(self) -> str:
        s = self.score
        return "" if s is None else "\n".join(line.plain for line in score_lines(s))
