"""The Score tab's verdict: the three answers and the floor, once the run has ended.

Why this module exists: the score panel says where the watched entry stands; the verdict
says what the run shows about the strategy (would it be ranked, does it make money after
every cost, is it skill, and the floor against the random control), each answer's sentence
exactly as the terminal report prints it (report.json's ``text``, ``verdict_text``), then
where the run's report was written (report.html, to open in a browser). Before the run ends
it says when the verdict comes; while the twins trade, that it is judging; a strategy with
no fills reads "no trades to judge" and nothing else but the report's place.

Every text here comes from the run, so it is drawn as Rich ``Text`` (never markup, which
would read ``[`` in a name as a style; ``Text`` drops control characters).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

QUESTIONS = (("ranked?", "ranked"), ("money?", "money"), ("skill?", "skill"), ("floor:", "floor"))
WAITING = "the verdict: when the run reaches its end (docs/verdict.md)"
ELSEWHERE = "the verdict: in the report printed when you quit"


def report_line(report: Path) -> str:
    """Where the run's report is (report.html, or its directory when there is no page)."""
    what = "report" if report.suffix == ".html" else "report files in"
    return f"{what} {report} (arena runs list shows the run)"


def verdict_rows(v: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The verdict's heading and its labelled answers (none for a strategy with no fills,
    or for a verdict with no answers: its own text is then the heading)."""
    strategy = v.get("strategy") or "the strategy"
    if v.get("verdict") == "no_trades":
        return "no trades to judge", []
    if "ranked" not in v:
        return f"the verdict on {strategy}: {v.get('text') or '-'}", []
    rows = [(label, str(v[key]["text"])) for label, key in QUESTIONS]
    return f"the verdict on {strategy}: {v['text']}", rows


class VerdictPanel(Widget):
    """The run's verdict (``show``), or one line saying where it stands (``note``)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (textual's name)
        super().__init__(id=id)
        self.verdict: dict[str, Any] | None = None
        self.report: Path | None = None
        self.line = WAITING
        self.failed = False

    def note(self, line: str, *, failed: bool = False) -> None:
        """One line instead of the verdict (waiting, judging, or why it could not be)."""
        self.verdict, self.line, self.failed = None, line, failed
        self.refresh(layout=True)

    def show(self, verdict: dict[str, Any], report: Path | None = None) -> None:
        """The verdict, and where the run's report was written (None: nowhere)."""
        self.verdict, self.report = verdict, report
        self.refresh(layout=True)

    def render(self) -> RenderableType:
        if self.verdict is None:
            return Text(self.line, style="bold red" if self.failed else "dim")
        head, rows = verdict_rows(self.verdict)
        parts: list[RenderableType] = [Text(head, style="bold")]
        if rows:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True, style="bold")
            grid.add_column(ratio=1)
            for label, text in rows:
                grid.add_row(label, Text(text))
            parts.append(grid)
        if self.report is not None:
            parts.append(Text(report_line(self.report), style="dim"))
        return Group(*parts)

    @property
    def text(self) -> str:
        """What it shows, one line per answer, unwrapped (for tests)."""
        if self.verdict is None:
            return self.line
        head, rows = verdict_rows(self.verdict)
        tail = [] if self.report is None else [report_line(self.report)]
        return "\n".join([head, *(f"{label} {text}" for label, text in rows), *tail])
