"""The key an entity is deduplicated and searched by: the only place that rule lives."""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import COMMAND, FILE, FUNCTION, MAX_VALUE, PACKAGE, URL

_TRAILING_PUNCT = ".,;:!?'\"`*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
PEP503 = re.compile(r"[-_.]+")
_SPACES = re.compile(r"\s+")
_DEF_PREFIX = re.compile(r"^(?:async\s+def|def|async\s+function|function|func|fn)\s+")


def strip_url(url: str) -> str:
    """A URL without trailing punctuation and without an unbalanced closing bracket."""
    while url:
        last = url[-1]
        unbalanced = last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])
        if last not in _TRAILING_PUNCT and not unbalanced:
            break
        url = url[:-1]
    return url


def normalize(type: str, value: str) -> str:
    """The key an entity is deduplicated and searched by: lowercase, at most 500 characters.

    - FILE: ``./`` prefixes dropped, ``\\`` -> ``/``, no trailing punctuation or ``/``.
    - FUNCTION: no ``def ``/``function `` prefix, nothing from the first ``(`` on.
    - URL: no trailing punctuation, no ``#fragment``, no trailing ``/`` after a path.
    - PACKAGE: PEP 503 (runs of ``-_.`` -> ``-``) for plain names; scoped npm names and Go
      module paths (with a ``/``) only lowercased.
    - COMMAND: whitespace runs collapsed to one space.
    - ERROR, CLASS: as they are.

    Then every key is lowercased (the API lowercases the query; see the module docstring).
    """
    text = value.strip()
    if type == FILE:
        text = text.strip("'\"`").replace("\\", "/")
        while text.startswith("./"):
            text = text[2:]
        text = text.rstrip(_TRAILING_PUNCT + ")]}")
        if len(text) > 1:
            text = text.rstrip("/") or "/"
    elif type == FUNCTION:
        text = _DEF_PREFIX.sub("", text).split("(", 1)[0].strip()
    elif type == URL:
        text = strip_url(text.split("#", 1)[0])
        if text.endswith("/") and text.count("/") > 3:
            text = text.rstrip("/")
    elif type == PACKAGE:
        if "/" not in text:
            text = PEP503.sub("-", text)
    elif type == COMMAND:
        text = _SPACES.sub(" ", text)
    return text.lower()[:MAX_VALUE]
