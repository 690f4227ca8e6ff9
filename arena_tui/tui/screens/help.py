"""The help screen: every key of the screen it was opened from, and what the panels mean.

The keys are read from the screen's and the app's bindings, so the help cannot drift from
what the keys do.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

PANELS = (
    "Score: equity (and exit-value equity: every position closed into the book), R, MDD "
    "and S as of the last minute mark, which is what the ranking uses; then equity now. "
    "Below: drawdown from the peak against the limit that pauses the entry, cap used "
    "(positions at mark plus reserves) against the cap, open orders against the slots, "
    "fill days and active share against what eligibility needs.\n\n"
    "Chart: equity and exit-value equity over the minute marks, and the drawdown on a "
    "scale to its worst (at least 1%; the limit's line where the scale reaches it). "
    "Orders: filled·held marks an order fully filled but still open: it holds "
    "its slot and its reserve until it is cancelled or expires. Activity: every fill, "
    "rejection (with the engine's reason), cancel and close. Market: the coin's mid at "
    "each minute with the watched entry's fills and open orders on it, then the book and "
    "the last prints. Score tab: cap used and open orders at every minute mark, against "
    "their limits. Times are the simulated clock, UTC."
)


def _keys(b: BindingType) -> tuple[str, str]:
    if isinstance(b, Binding):
        keys = b.key_display or b.key.replace("question_mark", "?").split(",")[0]
        return keys, b.tooltip or b.description or b.action
    key, action = b[0], b[1]
    return key, b[2] if len(b) > 2 else action


def key_table(screen: Screen[Any]) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    seen = set()
    for b in [*screen.BINDINGS, *screen.app.BINDINGS]:
        action = b.action if isinstance(b, Binding) else b[1]
        if screen.check_action(action, ()) is False:
            continue  # a key the screen switched off (a live run has no speed or seek)
        key, what = _keys(b)
        if key not in seen and what:
            seen.add(key)
            table.add_row(key, what)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", key_display="esc"),
    ]

    def __init__(self, of: Screen[object], intro: str | None = None) -> None:
        super().__init__()
        self.of = of
        self.intro = intro or of.HELP or PANELS  # a screen's HELP, as Textual names it

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(Text("Keys (esc closes this)", style="bold"))
            yield Static(key_table(self.of), id="help-keys")
            yield Static(Text(self.intro), id="help-panels")

    def action_close(self) -> None:
        self.dismiss()
