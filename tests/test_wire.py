"""The wire vocabulary: the host answers with ``arena_tui.wire.api`` and its readers decode
with the same Structs, declared once.

A real host on 127.0.0.1 serves every answer; arena-tui's own client (``HostClient``)
decodes them, and each decoded answer encodes back to the very bytes served (so the
reader's types are the host's, field for field, in the host's order). A guard keeps a
second declaration of an API body from coming back under another name.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

import arena_tui.host
import arena_tui.tui
import arena_tui.verify
from arena_tui.host.openapi import components
from arena_tui.tui import hostapi
from arena_tui.tui.hostapi import HostClient
from arena_tui.verify import remote
from arena_tui.verify.compare import FIELDS
from arena_tui.wire import api
from tests.hostkit import hosted, order

ENCODE = msgspec.json.Encoder().encode


def _served(h: Any, path: str, entry: str | None = "alice") -> bytes:
    with h.client(entry) as c:
        r = c.get(path)
    assert r.status_code == 200, r.text
    return bytes(r.content)


def test_what_the_host_serves_the_tui_decodes_with_the_same_structs(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        taker = alice.post("/v1/orders", json=order(px=100_010, tif=3, cloid="0x99"))
        assert taker.status_code == 200
        h.book_after(taker.json()["activates_at"])
        assert (
            alice.post("/v1/orders", json={**order(), "note": "a resting bid"}).status_code == 200
        )
        client = HostClient(h.url, h.keys["alice"])
        try:
            account, orders, book = client.account(), client.orders(), client.book("BTC")
            season, scores = client.season(), client.scores()
        finally:
            client.close()
        # the reader's answers are the wire's Structs, and encode back to the bytes served
        assert type(account) is api.Account and account.positions and account.fee_hwm >= 0
        assert type(orders) is api.Orders and orders.orders[0].note == "a resting bid"
        assert type(book) is api.BookOut and book.levels[0] and book.levels[1]
        # (an account is read at the clock's now: a millisecond may pass between the reads)
        raw = _served(h, "/v1/account")
        served = msgspec.json.decode(raw, type=api.Account)
        assert ENCODE(served) == raw
        assert ENCODE(account) == ENCODE(msgspec.structs.replace(served, t=account.t))
        assert ENCODE(orders) == _served(h, "/v1/orders")
        assert ENCODE(book) == _served(h, "/v1/book/BTC")
        # the season and the scores as read from any host: the wire's, with every field
        assert isinstance(season, api.SeasonInfo) and isinstance(scores, api.Scores)
        for doc, path in ((season, "/v1/season"), (scores, "/v1/scores")):
            served = json.loads(_served(h, path, None))
            if path == "/v1/season":
                served["t"] = season.t  # (the server's clock moved between the two reads)
            assert json.loads(ENCODE(doc)) == served
        assert season.paper is True and scores.paper is True
        # and every other answer round-trips through the wire's Structs, byte for byte
        for path, kind in (
            ("/v1/fills", api.Fills),
            ("/v1/entries", api.Entries),
            ("/v1/entries/alice/equity", api.Equity),
            ("/v1/entries/alice/fills", api.Fills),
        ):
            raw = _served(h, path, "alice" if path == "/v1/fills" else None)
            assert ENCODE(msgspec.json.decode(raw, type=kind)) == raw, path
        fills = msgspec.json.decode(_served(h, "/v1/fills"), type=api.Fills).fills
        assert len(fills) == 1 and fills[0].quote is not None


def test_the_readers_names_are_the_wires_structs() -> None:
    assert hostapi.AccountDoc is api.Account
    assert hostapi.BookDoc is api.BookOut
    assert hostapi.OrdersDoc is api.Orders
    assert hostapi.OpenOrder is api.OpenOrder and hostapi.ScoreRow is api.ScoreRow
    assert issubclass(hostapi.SeasonDoc, api.SeasonInfo)
    assert issubclass(hostapi.ScoresDoc, api.Scores)
    # an older host's season (no paper, no rules, no body limit) reads, those fields None
    old = {
        "id": "s", "start": 0, "end": 60_000, "markets": [], "rules_sha256": "ab" * 32,
        "t": 1, "state": "running",
        "limits": {"rate_limit_requests": 20, "rate_limit_window_ms": 10_000},
    }  # fmt: skip
    doc = msgspec.json.decode(json.dumps(old), type=hostapi.SeasonDoc)
    assert (doc.paper, doc.rules, doc.limits.body_max_bytes) == (None, None, None)
    # verify names a published row's fields as the wire spells them, and what it checks of
    # an answer before calling the URL an arena host are the wire's fields too
    names = [f.encode_name for f in msgspec.structs.fields(api.ScoreRow)]
    assert list(FIELDS) == [n for n in names if n not in ("day", "t", "entry")]
    assert set(remote._SEASON_FIELDS) <= set(api.SeasonInfo.__struct_encode_fields__)


def test_the_openapi_document_is_generated_from_the_wire() -> None:
    assert set(components()) == {kind.__name__ for kind in api.ANSWERS} | {
        "BookQuote",
        "PrintQuote",
        "Level",
        "Position",
        "MarketOut",
        "Limits",
        "ScoreRow",
        "OpenOrder",
        "Fill",
        "MarkOut",
        "EntryOut",
    }


def _modules(package: Any) -> list[Any]:
    names = [package.__name__] + [
        m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    ]
    return [importlib.import_module(name) for name in names]


@pytest.mark.parametrize("package", [arena_tui.host, arena_tui.tui, arena_tui.verify])
def test_no_room_declares_an_api_body_again(package: Any) -> None:
    """A Struct in the host, arena-tui or verify whose fields are (six or more of) an API
    body's, and that is not the wire's own Struct widened, is a second declaration."""
    bodies = [
        (kind, set(kind.__struct_encode_fields__))
        for kind in vars(api).values()
        if isinstance(kind, type)
        and issubclass(kind, msgspec.Struct)
        and kind.__module__ == api.__name__
    ]
    for module in _modules(package):
        for kind in vars(module).values():
            if not (
                isinstance(kind, type)
                and issubclass(kind, msgspec.Struct)
                and kind.__module__ == module.__name__
            ):
                continue
            mine = set(kind.__struct_encode_fields__)
            for body, fields in bodies:
                if issubclass(kind, body):
                    continue
                shared = mine & fields
                assert len(shared) < 6 and mine != fields, (
                    f"{module.__name__}.{kind.__name__} declares {body.__name__}'s fields "
                    f"{sorted(shared)} again: decode with arena_tui.wire.api.{body.__name__}"
                )
