"""What detection sees of a file: its name and the one shape its content takes.

A format's recognition scores (``transcripts.format.Recognition``) read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass
class Sample:
    name: str  # the file's own name, lower case, without its folders ('' when unknown)
    # The format that owns a JSON object: the one whose ``record`` score is highest
    # (``transcripts.detect`` passes it, since it compares every format's scores).
    owner: Callable[[dict[str, Any]], str | None]
    document: Any = None  # a whole JSON document (a dict or a list), parsed
    records: list[dict[str, Any]] = field(default_factory=list)  # JSON Lines' first objects
    head: str = ""  # the start of a text file

    @cached_property
    def owners(self) -> list[str | None]:
        """The format of each JSON Lines record, in order."""
        return [self.owner(record) for record in self.records]
