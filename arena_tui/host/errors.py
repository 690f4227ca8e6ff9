"""The host's known failures: each is one line on stderr and exit status 1 (no traceback)."""

from __future__ import annotations

from arena_tui.season.file import SeasonError


class HostError(SeasonError):
    """A host or registration that cannot go on as asked (one line)."""
