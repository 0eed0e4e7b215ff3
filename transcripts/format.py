"""What a transcript format declares about itself (``FORMAT = Format(...)`` at the end of
its module in ``transcripts.formats``); ``transcripts.registry`` collects them.

Recognition is by scores, each for one shape a file can take (a zip, one JSON document, JSON
Lines, text); a score of 0 says "not mine", and among the formats that claim a file the
highest score wins. Scores of one shape compare only with each other: a file has one shape.
``transcripts.detect`` combines them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import ParsedSession
    from .sample import Sample

Parser = Callable[..., list["ParsedSession"]]


def _never(*_: Any) -> int:
    return 0


@dataclass(frozen=True)
class Recognition:
    """How a format's files are told from the others'.

    ``record`` scores one JSON object (a JSON Lines record, a lone document, a list's first
    item): the highest-scoring format *owns* the object. A JSON document belongs to the
    owner of its object (or of its list's first item) unless a ``document`` score claims it
    first; JSON Lines to the format with the highest ``lines`` score, which sees which
    format owns each record. ``archive`` scores a zip's bytes, ``text`` the start of a text
    file and its name. ``filename`` is the last resort, when no content score claims the file.
    """

    record: Callable[[dict[str, Any]], int] = _never
    document: Callable[[Sample], int] = _never
    lines: Callable[[Sample], int] = _never
    archive: Callable[[bytes], int] = _never
    text: Callable[[Sample], int] = _never
    filename: Callable[[str], bool] = _never


@dataclass(frozen=True)
class Format:
    """One transcript format, as its module declares it."""

    name: str  # what ``format=`` names it by and what its sessions' ``source_format`` is
    position: int  # where it stands in lists (errors, the docs): formats in the order added
    description: str  # one line, in error messages that list the formats
    documentation: str  # the docs' table of import formats (docs/api.md), Markdown
    parse: Parser  # bytes (and keyword options) to ``ParsedSession``s
    recognition: Recognition = field(default_factory=Recognition)
    # The session's ``source_format`` label (the API schema's enum); None when the format
    # stores no sessions as its own (our export keeps each session's original format).
    label: str | None = None
    # Reads a file from disk when what lies beside it matters (aider's input history);
    # None: the file's bytes are parsed alone.
    read_path: Callable[[Path, bytes], list[ParsedSession]] | None = None
