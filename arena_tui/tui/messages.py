"""The messages the worker posts to the run screen (messages up).

Why this module exists: what may be dropped and what may not is decided here, once.
A :class:`SnapshotPosted` is superseded by the next one still waiting in the queue
(``can_replace``): when the UI falls behind it shows the newest picture, not every one
(a :class:`SpectatorPosted`, a spectated host's picture, likewise). A :class:`Happened`
(fills, rejections, cancels, closes) never is, and it sits between snapshots in the
queue, so every event reaches the screen in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

from arena_tui.tui.snapshot import Happening, Snapshot

if TYPE_CHECKING:
    from arena_tui.tui.spectated import Spectated


class SnapshotPosted(Message):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotPosted)


class SpectatorPosted(Message):
    """What a spectated host served, as of one round of reads; superseded like a snapshot."""

    def __init__(self, spectated: Spectated) -> None:
        super().__init__()
        self.spectated = spectated

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SpectatorPosted)


class Happened(Message):
    """Events since the last snapshot, oldest first; never coalesced."""

    def __init__(self, happenings: tuple[Happening, ...]) -> None:
        super().__init__()
        self.happenings = happenings


@dataclass(frozen=True)
class Outcome:
    """How a run ended."""

    final: bool  # the season's end was reached: the numbers are final
    stopped: bool  # the viewer stopped it
    error: str | None  # a known failure, one line
    inputs: int
    run_log: Path | None
    prepared: bool = True  # False: it failed before it began (a bad choice of files)


class RunEnded(Message):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__()
        self.outcome = outcome


class VerdictReady(Message):
    """The run's verdict, judged once the run ended (report.json's "verdict"), and where its
    report was written (report.html, or the run directory without it); or the one line
    saying why there is none."""

    def __init__(
        self, verdict: dict[str, Any] | None, error: str | None = None, report: Path | None = None
    ) -> None:
        super().__init__()
        self.verdict = verdict
        self.error = error
        self.report = report
