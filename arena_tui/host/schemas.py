"""The host's reading of request bodies: strict, exact, and one line when it fails.

Why this module exists: the API's bodies are declared once in ``arena_tui.wire.api`` (the
host encodes its answers from them, readers decode them, the OpenAPI document is generated
from them); how strictly the *server* reads a request is the host's own policy, kept here.
Requests are strict: an unknown field, a wrong type,
a fraction or a bool or a string where an integer belongs, or a value out of its type's
range fails the decode (400) before anything reaches the log. An integer is a number with
no fractional part however it is written (``111``, ``111.0``, ``1.11e2``): that is how
JSON Schema reads the document's ``"type": "integer"``, and no keyword could say
otherwise, so the server reads it so too, exactly (never through a float). Whatever a
body is, its decode fails only as :class:`BadBody`, one line (400): JSON nested deeper than
the decoder can follow (``RecursionError``) or anything else a decoder raises included,
never a 5xx.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, TypeVar

import msgspec

from arena_tui.wire.api import U64_MAX, CancelRequest, OrderRequest

__all__ = [
    "ENCODE",
    "U64_MAX",
    "BadBody",
    "CancelRequest",
    "OrderRequest",
    "check_cancel",
    "check_u64",
    "decode",
    "decode_failure",
]

ENCODE = msgspec.json.Encoder().encode
_NUMBERS = msgspec.json.Decoder(float_hook=Decimal)  # a non-integer literal: exactly, as text
_Request = TypeVar("_Request", OrderRequest, CancelRequest)


def decode(body: bytes, kind: type[_Request]) -> _Request:
    """A request body as ``kind`` (BadBody, one line, if not), integers read as above."""
    try:
        doc = _NUMBERS.decode(body)
        if isinstance(doc, dict):
            doc = {name: _whole(value) for name, value in doc.items()}
        return msgspec.convert(doc, kind, strict=True)
    except Exception as exc:
        raise BadBody(decode_failure(exc)) from None


def decode_failure(exc: BaseException) -> str:
    """Why a body did not decode, in one line: the decoder's own words when it has them."""
    if isinstance(exc, RecursionError):
        return "the JSON is nested too deeply (a request body is an object of plain values)"
    if isinstance(exc, msgspec.DecodeError):  # (a ValidationError too)
        text = str(exc)
    else:
        text = f"not a valid body ({type(exc).__name__})"
    return " ".join(text.split()) or "not a valid body"


def _whole(value: Any) -> Any:
    """A number written with a fraction or an exponent: the int it equals, if whole."""
    if not isinstance(value, Decimal):
        return value
    if value.is_zero():
        return 0
    if value.adjusted() > 20:  # 10**21 or more: out of every range (and 1e999999999 must not
        return U64_MAX + 1 if value > 0 else -1  # become an int of a billion digits)
    whole = value.to_integral_value()
    return int(whole) if whole == value else float(value)  # (a float: "got `float`", 400)


class BadBody(ValueError):
    """A request body the API refuses (400), with why."""


def check_u64(name: str, value: int | None) -> None:
    if value is not None and value > U64_MAX:
        raise BadBody(f"Expected `int` <= {U64_MAX} - at `$.{name}`")


def check_cancel(c: CancelRequest) -> None:
    """Exactly one of ``oid`` and ``cloid`` names the order (the document's ``oneOf``)."""
    check_u64("oid", c.oid)
    if c.oid is None and c.cloid is None:
        raise BadBody("name the order to cancel: oid or cloid")
    if c.oid is not None and c.cloid is not None:
        raise BadBody("name the order to cancel by oid or by cloid, not both")
