"""What the spectator screen shows: one immutable picture of a running host per round.

The spectator's worker (``spectator``) makes these and posts them as
:class:`~arena_tui.tui.messages.SpectatorPosted`; the screen and its panels only read
them. Kept apart from both so the message and its source need not know each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arena_tui.tui.hostapi import AccountDoc, BookDoc, OpenOrder, ScoreRow, SeasonDoc

LinkState = Literal["connecting", "connected", "retrying", "unreachable"]


@dataclass(frozen=True)
class Link:
    state: LinkState
    reason: str | None = None  # why the last round failed
    retry_in_s: float | None = None  # when the next try comes, from the snapshot's time
    attempt: int = 0


@dataclass(frozen=True)
class Spectated:
    seq: int
    url: str
    keyed: bool  # an entry's key was given
    link: Link
    season: SeasonDoc | None
    final: bool  # the host says the season's rows are final
    rows: tuple[ScoreRow, ...]  # the latest day's rows, exactly as served
    scores_read: int  # how many times the rows were read (a refresh reads them again)
    book: BookDoc | None  # the latest book read (of the coin selected then)
    book_note: str | None  # why there is no book to show
    account: AccountDoc | None
    orders: tuple[OpenOrder, ...]
    entry_note: str | None  # why the entry's account is missing or old
    paper: bool | None = None  # the score rows are paper trading's, as the host says
