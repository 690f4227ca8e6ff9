"""The rounds of a verification: season first, then scores, then the log, then compare.

Start: ``/v1/season`` and ``/v1/season/file``; the file is loaded with the season loader
(so its rules hash is computed as everywhere else) and must have the published
``rules_sha256`` (and the log header, read in the first round, the same). A round: the
scores FIRST, then the log from the offset already held: the host logs an input before it
applies it, so the log read after the scores holds every input behind them. A published
row whose mark the log does not reach yet is read again (more log) until ``wait_s`` has
passed without it, which is a difference. ``once`` stops at the first agreement;
``follow`` goes on every ``interval`` seconds until the season is final and verified.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena_tui.logs.logfile import LogError
from arena_tui.season.file import SeasonError, load_season
from arena_tui.util.human import utc_ms
from arena_tui.verify.compare import Difference, Judgement, floors, judge
from arena_tui.verify.logreplay import HeaderMismatch, LogReplay
from arena_tui.verify.remote import NotArenaHost, Remote, VerifyError
from engine import Season

WAIT_S = 15.0  # how long a published mark may stay beyond the log before it is a difference
RETRY_S = 0.2


@dataclass
class Round:
    """What one round saw: new log bytes, the comparison, the scores' ``final``."""

    new_bytes: int
    judgement: Judgement
    final: bool
    log_size: int = 0  # the host's log, as it answered


@dataclass
class Outcome:
    """Where a verification stands (its ``to_json`` is ``arena verify --json``'s object)."""

    url: str
    season: str
    rules_sha256: str
    paper: bool | None
    log_sha256: str = ""
    log_bytes: int = 0
    inputs: int = 0
    rows_checked: int = 0
    entries: int = 0
    days: int = 0
    final: bool = False
    rounds: int = 0
    difference: Difference | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return self.difference is None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "url": self.url,
            "season": self.season,
            "rules_sha256": self.rules_sha256,
            "log_sha256": self.log_sha256,
            "log_bytes": self.log_bytes,
            "inputs": self.inputs,
            "rows_checked": self.rows_checked,
            "entries": self.entries,
            "days": self.days,
            "final": self.final,
            "paper": self.paper,
            "rounds": self.rounds,
            "interrupted": self.interrupted,
            "first_difference": None if self.difference is None else self.difference.to_json(),
        }


def safe_name(season_id: str) -> str:
    return season_id if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", season_id) else "season"


class Verifier:
    """One host verified from ``workdir`` (where the season file, and with ``keep`` the
    log, are written: ``arena replay workdir/ID.jsonl`` finds ``ID.json`` beside it)."""

    def __init__(
        self,
        remote: Remote,
        workdir: Path,
        *,
        keep: bool = False,
        wait_s: float = WAIT_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.remote = remote
        self.workdir = workdir
        self.keep = keep
        self.wait_s = wait_s
        self.clock = clock
        self.sleep = sleep
        self.replay: LogReplay | None = None
        self.outcome: Outcome | None = None
        self.log_path: Path | None = None
        self.season_path: Path | None = None
        self._copy: IO[bytes] | None = None

    def close(self) -> None:
        if self._copy is not None:
            self._copy.close()
        self.remote.close()

    # ---- the season --------------------------------------------------------------------

    def start(self) -> Outcome:
        """Fetch the season and its file; the outcome so far (a difference if the hashes
        differ)."""
        info = self.remote.season()
        paper = info.get("paper")
        out = self.outcome = Outcome(
            url=self.remote.url,
            season=str(info["id"]),
            rules_sha256=str(info["rules_sha256"]),
            paper=paper if isinstance(paper, bool) else None,
        )
        season = self._season_file(out.season)
        if season.rules_sha256 != out.rules_sha256:
            why = "the season file served does not have the rules /v1/season publishes"
            out.difference = Difference(
                "rules_sha256", out.rules_sha256, season.rules_sha256, why=why
            )
            return out
        if season.id != out.season:
            why = "the season file served is another season's"
            out.difference = Difference("season", out.season, season.id, why=why)
            return out
        if self.keep:
            self.log_path = self.workdir / f"{safe_name(season.id)}.jsonl"
            self._copy = self.log_path.open("wb")
        self.replay = LogReplay(season, self.remote.where("/v1/log"), self._copy)
        return out

    def _season_file(self, season_id: str) -> Season:
        data = self.remote.season_file()
        try:
            doc = json.loads(data)
            ext = ".json" if isinstance(doc, dict) else ".toml"
        except ValueError:
            ext = ".toml"
        path = self.season_path = self.workdir / f"{safe_name(season_id)}{ext}"
        path.write_bytes(data)
        try:
            return load_season(path)
        except SeasonError as exc:
            raise VerifyError(
                f"the season file at {self.remote.where('/v1/season/file')} does not load: {exc}"
            ) from None

    # ---- rounds ------------------------------------------------------------------------

    def round(self) -> Round:
        """Scores, then the log from where it stopped, then the comparison."""
        out, replay = self.outcome, self.replay
        assert out is not None and replay is not None
        scores = self.remote.scores()
        if str(scores["season"]) != out.season:
            diff = Difference("season", scores["season"], out.season, why="/v1/scores' season")
            out.difference = diff
            return Round(0, Judgement(difference=diff), bool(scores["final"]))
        if out.paper is None and isinstance(scores.get("paper"), bool):
            out.paper = scores["paper"]
        rows: list[dict[str, Any]] = scores["rows"]
        replay.history.expect(*floors(rows))
        before = replay.received
        try:
            size = self.remote.read_log(before, replay.feed)
        except HeaderMismatch as bad:
            why = "the log's header against the season file"
            diff = out.difference = Difference(bad.field, bad.logged, bad.season_file, why=why)
            return Round(replay.received - before, Judgement(difference=diff), False)
        if replay.received == 0:
            raise VerifyError(f"{self.remote.where('/v1/log')}: the log is empty (no header)")
        if replay.header is None and not replay.may_be_header():
            why = f"GET /v1/log is not an arena log: {replay.received:,} bytes, no JSON line"
            raise NotArenaHost(self.remote.url, why)
        judgement = judge(rows, bool(scores["final"]), replay)
        out.rounds += 1
        out.log_sha256, out.log_bytes, out.inputs = replay.sha256, replay.complete, replay.inputs
        out.rows_checked = judgement.checked
        out.entries = len({r["entry"] for r in rows})
        out.days = len({r["day"] for r in rows})
        out.final = bool(scores["final"]) and replay.final and not judgement.waiting
        out.difference = judgement.difference
        return Round(replay.received - before, judgement, bool(scores["final"]), size)

    def settled_round(self) -> Round:
        """A round; again while published marks are beyond the log read, up to ``wait_s``
        (the host fsyncs what it applied within moments: longer is a difference)."""
        r = self.round()
        deadline = self.clock() + self.wait_s
        new = r.new_bytes
        while r.judgement.waiting and self.clock() < deadline:
            self.sleep(RETRY_S)
            r = self.round()
            new += r.new_bytes
        r.new_bytes = new
        if r.judgement.waiting:
            self._not_in_log(r.judgement)
        return r

    def _not_in_log(self, j: Judgement) -> None:
        out, replay = self.outcome, self.replay
        assert out is not None and replay is not None
        last = (
            "no mark" if replay.last_mark is None else f"its last mark {utc_ms(replay.last_mark)}"
        )
        why = f"the log ({replay.complete} bytes, {last}) does not reach it after {self.wait_s:g} s"
        if j.pending:
            p = j.pending[0]
            out.difference = Difference("t", p["t"], replay.last_mark, p["entry"], p["day"], why)
        else:
            out.difference = Difference("final", True, False, why=why)

    def once(self) -> Outcome:
        """Verify the season as it stands now."""
        out = self.start()
        if out.ok:
            try:
                self.settled_round()
            except LogError as exc:
                raise self._undecodable(exc) from None
        return out

    def follow(self, interval: float, on_round: Callable[[Round], None]) -> Outcome:
        """Verify, then again every ``interval`` seconds, until the season is final and
        verified or a difference is found."""
        out = self.start()
        try:
            while out.ok:
                on_round(self.settled_round())
                if not out.ok or out.final:
                    break
                self.sleep(interval)
        except LogError as exc:
            raise self._undecodable(exc) from None
        return out

    def _undecodable(self, exc: LogError) -> VerifyError:
        """The log does not decode; not even its header: not an arena host's log."""
        if self.replay is not None and self.replay.header is None:
            why = f"GET /v1/log is not an arena log: {exc.message}"
            return NotArenaHost(self.remote.url, why)
        return VerifyError(f"the log does not decode: {exc}")
