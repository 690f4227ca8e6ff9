"""A DataTable kept in step with a keyed set of rows, updated in place.

Why this module exists: the run screen redraws its tables several times a second. Clearing
and refilling a table loses the cursor and the scroll position and costs a full layout;
instead each row has a key (an order's oid, a coin, a place) and only what changed moves:
rows gone are removed, changed cells are updated, new rows are added at the end. Columns
have fixed widths (a one-cell gap included), so a live table never jumps sideways and the
widths add up to 80 columns where it matters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from rich.text import Text
from textual.widgets import DataTable

Cell = str | Text


class Col(NamedTuple):
    key: str
    label: str
    width: int
    right: bool = True  # numbers right-aligned; text left-aligned after a one-cell gap


class KeyedTable(DataTable[Text]):
    """A read-only table whose rows are set as a whole with :meth:`sync`."""

    COLUMNS: tuple[Col, ...] = ()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, cell_padding=0, **kwargs)

    def on_mount(self) -> None:
        for i, col in enumerate(self.COLUMNS):
            self.add_column(self.fit(i, col.label), width=col.width, key=col.key)

    def fit(self, index: int, cell: Cell) -> Text:
        """A cell as its column shows it: right-aligned, or after the gap."""
        col = self.COLUMNS[index]
        text = cell.copy() if isinstance(cell, Text) else Text(cell)
        if col.right:
            text.justify = "right"
        elif index:
            text = Text(" ") + text
        return text

    def add(self, key: str, cells: Sequence[Cell]) -> None:
        self.add_row(*(self.fit(i, c) for i, c in enumerate(cells)), key=key)

    def sync(self, rows: Mapping[str, Sequence[Cell]]) -> None:
        """Make the table show ``rows`` (key -> cells, in column order), in that order."""
        keys = [k.value for k in self.rows]
        for key in keys:
            if key is not None and key not in rows:
                self.remove_row(key)
        shown = set(keys)
        for key, cells in rows.items():
            if key not in shown:
                self.add(key, cells)
                continue
            old = self.get_row(key)
            for i, (was, cell) in enumerate(zip(old, cells, strict=True)):
                now = self.fit(i, cell)
                if was != now:
                    self.update_cell(key, self.COLUMNS[i].key, now)

    def cells(self, key: str) -> list[str]:
        """The plain text of one row, stripped (for tests)."""
        return [c.plain.strip() for c in self.get_row(key)]
