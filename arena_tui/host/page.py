"""The season page: ``GET /`` on the host, one self-contained HTML page for spectators.

Why this module exists: a spectator should not need arena-tui to watch a season. The page
shows what the public endpoints serve (the latest day's score rows in the order and with
the values ``/v1/scores`` serves them, never re-ranked; each entry's latest mark and its
fills with their quotes and notes; the season's window, paper label and rules hash; the
feed's health, read from the tail of the public log) and updates itself by polling them.
It needs no network beyond the host (no CDN, no font: its CSS and script are inline).

It is cheap to serve: rendered once per host from the season's constants, then the same
bytes for every reader, so readers cost the traders nothing but the public reads they
make. Nothing an entry wrote reaches the HTML: the season's constants are embedded as JSON
with ``<``, ``>``, ``&`` and U+2028/9 escaped, and the script writes every served string
into the page with ``textContent`` (never as markup). The Content-Security-Policy allows
only the page's own inline script and style (by their SHA-256) and requests to the host.
"""

from __future__ import annotations

import base64
import hashlib
import html
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from arena_tui.season.file import PAPER
from arena_tui.util.jsonout import dumps
from engine import Season

ASSETS = Path(__file__).parent / "page_assets"
POLL_MS = 2000  # how often the page reads the public endpoints again
LOG_TAIL_BYTES = 32_768  # how much of the log's end the page reads for the feed's health


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def script_json(doc: object) -> str:
    """``doc`` as JSON that a <script> element holds safely: no ``<``, ``>`` or ``&`` (so
    no ``</script>`` or ``<!--``), and no U+2028/9 (line ends to older JavaScript)."""
    text = dumps(doc)
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(ch, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def constants(season: Season) -> dict[str, object]:
    """What the page knows before its first read: the season's fixed facts."""
    rules = season.rules
    return {
        "id": season.id,
        "start": season.start,
        "end": season.end,
        "rules_sha256": season.rules_sha256,
        "paper": PAPER,
        "markets": [{"coin": m.coin, "asset": m.asset} for m in season.markets],
        "stale_book_ms": rules.stale_book_ms,
        "mark_interval_ms": rules.mark_interval_ms,
        "poll_ms": POLL_MS,
        "log_tail_bytes": LOG_TAIL_BYTES,
    }


class Page:
    """The page of one season, rendered once (see the module docstring)."""

    def __init__(self, season: Season) -> None:
        style, script = _asset("page.css"), _asset("page.js")
        title = html.escape(f"arena season {season.id}")
        self.body = (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n<style>{style}</style>\n</head><body>\n"
            f"{_asset('page.html')}"
            f'<script type="application/json" id="season-data">{script_json(constants(season))}'
            f"</script>\n<script>{script}</script>\n</body></html>\n"
        ).encode()
        csp = (
            "default-src 'none'; "
            f"script-src {_sha256(script)}; style-src {_sha256(style)}; "
            "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        )
        self.headers = {
            "Content-Security-Policy": csp,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        }

    async def get(self, request: Request) -> Response:
        return Response(self.body, 200, headers=self.headers, media_type="text/html")
