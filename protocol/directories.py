"""The project of a working directory (seed 004): one slug, made the same way everywhere.

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

DIRECTORY_HEADER = "X-Memoryapp-Directory"

WINDOWS_PATH = re.compile(r"^[A-Za-z]:([\\/]|$)")


def project_slug(path: str | os.PathLike) -> str:
    """Seed 004's slug of a path, as given (no resolving): idempotent on a slug."""
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
    return reference.startswith(("-", "/", "\\", "~", ".")) or bool(WINDOWS_PATH.match(reference))
