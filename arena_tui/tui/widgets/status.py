"""The top line of the run screen: playback, the simulated clock, where the season is.

The clock is the time of the last input the engine applied (UTC), never the wall clock
(on a live run, the receive time of the last input: the wall clock, as it was received).
Paused, it says the speed the run plays at on space (so ``+``/``-`` show). A live run's
line starts with the feed's link as it is (``● live`` only while connected; else why, and
when the next try comes).

The line fits its width by phrases, never cut in one: the least useful parts go first (the
inputs count, the gaps, the date, a live link's reason, then the long forms of the
others), and only a terminal too narrow for the essentials ends it with an ellipsis.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.tui.feedlink import FeedState
from arena_tui.tui.fmt import stamp
from arena_tui.tui.playback import State, speed_label

# what goes first when the line does not fit: (part, "short" form or "drop" it)
SHED = (
    ("inputs", "drop"),
    ("gaps", "drop"),
    ("clock", "short"),
    ("reason", "drop"),
    ("ended", "short"),
    ("mode", "short"),
    ("retry", "short"),
    ("season", "drop"),
    ("clock", "drop"),
)
GAP = "  "


def season_part(t: int | None, start: int, end: int, over: bool) -> str:
    if over:
        return "season over: final"
    if t is None or t < start:
        return "before the season"
    done = min(t - start, end - start)
    return f"season {done * 100 // max(1, end - start)}%"


def ended_words(final: bool, stopped: bool, error: str | None) -> tuple[str, str]:
    """How a run ended, long and short."""
    if error is not None:
        return f"error: {error}", "error: see below"
    if stopped:
        return "stopped (the run log keeps what ran)", "stopped"
    if final:
        return "done", "done"
    return "the logs end before the season does", "logs end early"


@dataclass
class Part:
    """One phrase of the line, in a long and a short form."""

    key: str
    long: str
    short: str = ""
    style: str = ""
    form: str = "long"  # or "short", or "drop"

    @property
    def text(self) -> str:
        return {"long": self.long, "short": self.short or self.long}.get(self.form, "")


def fit(parts: list[Part], width: int | None) -> Text:
    """The parts joined, shortened (then dropped) in ``SHED`` order until they fit."""

    def joined() -> Text:
        text = Text()
        for part in parts:
            if part.text:
                if text:
                    text.append(GAP)
                text.append(part.text, style=part.style)
        return text

    text = joined()
    if width is None:
        return text
    for key, form in SHED:
        if text.cell_len <= width:
            return text
        for part in parts:
            if part.key == key and part.form != "drop":
                part.form = form
        text = joined()
    if text.cell_len > width:
        text.truncate(width, overflow="ellipsis")
    return text


def link_parts(link: FeedState | None, paused: bool) -> list[Part]:
    """A live run's mode and link: up, or why not and when the next try comes."""
    view = [Part("mode", "‖ view paused", "‖ paused", "bold yellow")] if paused else []
    if link is None or link.state == "connecting":
        where = "" if link is None else f" to {link.host}"
        return [*view, Part("mode", f"… connecting{where}", "… connecting", "bold")]
    if link.state == "connected":
        return view or [Part("mode", "● live", style="bold green")]
    head = "✕ cannot connect" if link.state == "unreachable" else "○ feed lost"
    out = [*view, Part("mode", head, head, "bold red")]
    if link.reason:
        out.append(Part("reason", f"({link.reason})", style="red"))
    if link.retry_in_s is not None:
        when = f"in {link.retry_in_s:.1f}s" if link.retry_in_s > 0 else "now"
        retry = f"retrying {when} (try {link.failures + 1})"
        out.append(Part("retry", retry, f"retrying {when}", "bold"))
    return out


class StatusBar(Widget):
    playback: reactive[State] = reactive(State(60, False, False))
    t: reactive[int | None] = reactive(None)
    inputs: reactive[int] = reactive(0)
    season: reactive[str] = reactive("")
    ended: reactive[tuple[str, str]] = reactive(("", ""))  # how the run ended: long, short
    live: reactive[bool] = reactive(False)  # a run on the live feed: paused = the view only
    link: reactive[FeedState | None] = reactive(None)  # a live run's feed

    def parts(self) -> list[Part]:
        p = self.playback
        if self.ended[0]:
            parts = [Part("mode", "■ ended", style="bold")]
        elif self.live:
            parts = link_parts(self.link, p.paused)
        elif p.paused:
            plays = speed_label(p.speed)
            long, short = f"‖ paused (plays at {plays})", f"‖ paused {plays}"
            parts = [Part("mode", long, short, "bold yellow")]
        elif p.seeking:
            parts = [Part("mode", "» to the next fill", "» next fill", "bold cyan")]
        else:
            parts = [Part("mode", f"▶ {speed_label(p.speed)}", style="bold green")]
        when = stamp(self.t)
        parts.append(Part("clock", f"{when} UTC", f"{when[11:]} UTC"))
        if self.season:
            parts.append(Part("season", self.season))
        parts.append(Part("inputs", f"{self.inputs:,} input{'' if self.inputs == 1 else 's'}"))
        if self.link is not None and self.link.gaps:
            gaps = f"{self.link.gaps} gap{'s' if self.link.gaps > 1 else ''}"
            parts.append(Part("gaps", gaps))
        if self.ended[0]:
            parts.append(Part("ended", *self.ended, style="bold"))
        return parts

    def render(self) -> Text:
        width = self.size.width
        return fit(self.parts(), width or None)

    @property
    def text(self) -> str:
        """The line as shown at the bar's width."""
        return self.render().plain

    @property
    def full(self) -> str:
        """The line with every part in full, whatever the width."""
        return fit(self.parts(), None).plain
