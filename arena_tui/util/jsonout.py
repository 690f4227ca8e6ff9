"""Compact JSON: the one spelling of ``--json`` output and of the contract's files.

No whitespace between tokens, keys in the order given unless ``sort_keys``; the replay
output and the fills file are byte-exact contracts, so every writer of them comes here.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(obj: Any, *, sort_keys: bool = False) -> str:
    return json.dumps(obj, sort_keys=sort_keys, separators=(",", ":"))
