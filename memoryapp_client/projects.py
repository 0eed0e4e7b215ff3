"""The project of a working directory (docs/api.md): one slug, made the same way everywhere.

``/home/user/repos/myapp`` → ``-home-user-repos-myapp``, ``C:\\projects\\web-app`` →
``-C-projects-web-app``: path separators become hyphens, ':' is dropped, and the slug always
starts with '-'. The server finds (or, for a team-level token allowed to, creates) the
project by it; the client sends it in the ``X-Memoryapp-Directory`` header on every request,
so the CLI, the hooks and the MCP server need nothing but ``MemoryClient(directory=...)``
(the header's value is percent-encoded UTF-8: ``header_value``).

A ``project`` value is a working directory when it starts with '-' (a slug), '/', '\\', '~',
'.' or a drive letter; otherwise it is 'team/project' or an id, as before.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path

DIRECTORY_HEADER = "X-Memoryapp-Directory"

_WINDOWS_PATH = re.compile(r"^[A-Za-z]:([\\/]|$)")


def project_slug(path: str | os.PathLike) -> str:
    """The slug of a path (docs/api.md), as given (no resolving): idempotent on a slug."""
    text = str(path)
    if len(text) > 1:
        text = text.rstrip("/\\") or text[0]  # /home/me/ and /home/me are one directory
    slug = text.replace("/", "-").replace("\\", "-").replace(":", "")
    return slug if slug.startswith("-") else "-" + slug


def header_value(slug: str) -> str:
    """The slug as the header carries it: percent-encoded UTF-8, since HTTP headers are
    Latin-1 and paths are not (the server decodes it; ASCII slugs are unchanged)."""
    return urllib.parse.quote(slug, safe="-._~/\\:!$&'()*+,;=@")


def is_directory(reference: str) -> bool:
    """Whether a ``project`` value names a working directory (else 'team/project' or id)."""
    return reference.startswith(("-", "/", "\\", "~", ".")) or bool(_WINDOWS_PATH.match(reference))


def directory_slug(path: str | os.PathLike | None = None) -> str:
    """The slug of ``path`` (default: the current directory), made absolute and resolved
    on this machine; a Windows path is taken as written, a slug ('-…') returned as is."""
    if path is not None and (_WINDOWS_PATH.match(str(path)) or str(path).startswith("-")):
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
