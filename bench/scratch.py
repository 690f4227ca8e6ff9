"""What a bench's ``main`` does around its run: a scratch directory (kept with ``--keep`` or
when given), progress on stderr, and the report, or one JSON object, on stdout."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def say(text: str) -> None:
    """Progress, on stderr (stdout is the report's)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def in_scratch(
    prefix: str,
    run: Callable[[Path], dict[str, Any]],
    report: Callable[[dict[str, Any]], str],
    *,
    as_json: bool,
    keep: bool = False,
    where: str | None = None,
) -> int:
    """``run`` in a fresh temporary directory named ``prefix...`` (or in ``where``, which is
    kept), removed afterwards unless ``keep``; then its report (``as_json``: the document)."""
    work = Path(where) if where else Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    try:
        doc = run(work)
    finally:
        if keep or where:
            say(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(json.dumps(doc) + "\n" if as_json else report(doc) + "\n")
    return 0
