"""Diaries as a zip of Markdown files in the shape of docs/people.md:
``diary/<person>/<char>/YYYY-MM-DD.md`` (the character ``_shared`` for what every character
reads). Entries of the same person, character and day in several projects go into one file,
each under its project's name.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import defaultdict

# A path part may not climb out of its folder or hide: separators and leading dots go.
_UNSAFE = re.compile(r"[/\\\x00]+")


def path_part(name: str) -> str:
    return _UNSAFE.sub("_", name).lstrip(".").strip() or "_"


def entry_path(person: str, character: str, day) -> str:
    return f"diary/{path_part(person)}/{path_part(character)}/{day:%Y-%m-%d}.md"


def diary_zip(entries) -> bytes:
    """The zip of ``entries`` (a scoped queryset)."""
    files: dict[str, list[tuple[str, str]]] = defaultdict(list)
    rows = entries.select_related("project").order_by("person", "character", "day", "project_id")
    for entry in rows.defer("embedding", "search_vector", "happened"):
        files[entry_path(entry.person, entry.character, entry.day)].append(
            (entry.project.name, entry.text)
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, texts in files.items():
            if len(texts) == 1:
                body = texts[0][1]
            else:
                body = "\n---\n\n".join(f"_Project: {name}_\n\n{text}" for name, text in texts)
            archive.writestr(path, body)
    return buffer.getvalue()
