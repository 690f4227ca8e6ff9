"""The top line of the run screen: playback, the simulated clock, where the season is.

The clock is the time of the last input the engine applied (UTC), never the wall clock
(on a live run, the receive time of the last input: the wall clock, as it was received).
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.tui.fmt import stamp
from arena_tui.tui.playback import State, speed_label


def season_part(t: int | None, start: int, end: int, over: bool) -> str:
    if over:
        return "season over: final"
    if t is None or t < start:
        return "before the season"
    done = min(t - start, end - start)
    return f"season {done * 100 // max(1, end - start)}%"


class StatusBar(Widget):
    playback: reactive[State] = reactive(State(60, False, False))
    t: reactive[int | None] = reactive(None)
    inputs: reactive[int] = reactive(0)
    season: reactive[str] = reactive("")
    ended: reactive[str] = reactive("")  # how the run ended, once it has
    live: reactive[bool] = reactive(False)  # a run on the live feed: paused = the view only

    def render(self) -> Text:
        p = self.playback
        if self.ended:
            mode, style = "■ ended", "bold"
        elif self.live:
            mode, style = ("‖ view paused", "bold yellow") if p.paused else ("● live", "bold green")
        elif p.paused:
            mode, style = "‖ paused", "bold yellow"
        elif p.seeking:
            mode, style = "» to the next fill", "bold cyan"
        else:
            mode, style = f"▶ {speed_label(p.speed)}", "bold green"
        text = Text(mode, style=style)
        text.append(f"  {stamp(self.t)} UTC  {self.season}  {self.inputs:,} inputs")
        if self.ended:
            text.append(f"  {self.ended}", style="bold")
        return text

    @property
    def text(self) -> str:
        return self.render().plain
