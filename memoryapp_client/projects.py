"""A working directory as the client names its project: resolved on this machine, then made
the slug both sides share (``protocol.directories``)."""

from __future__ import annotations

import os
from pathlib import Path

from protocol.directories import WINDOWS_PATH, is_directory, project_slug


def directory_slug(path: str | os.PathLike | None = None) -> str:
    """The slug of ``path`` (default: the current directory), made absolute and resolved
    on this machine; a Windows path is taken as written, a slug ('-…') returned as is."""
    if path is not None and (WINDOWS_PATH.match(str(path)) or str(path).startswith("-")):
        return project_slug(path)
    where = Path(path if path is not None else os.getcwd()).expanduser()
    return project_slug(where.resolve())


def project_reference(value: str | None) -> str | None:
    """A ``--project`` option as the API takes it: a path becomes its slug; 'team/project',
    an id or a slug pass through."""
    if not value:
        return None
    if value.startswith("-"):
        return value
    if is_directory(value) or ("/" not in value and not value.isdigit() and Path(value).is_dir()):
        return directory_slug(value)  # a path, or the name of a folder here
    return value
