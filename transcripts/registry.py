"""Every transcript format, collected from ``transcripts.formats``: one module each.

A format module ends with ``FORMAT = Format(...)`` (``transcripts.format``): its name, how it
is described, how its files are recognised and how they are parsed. Nothing else lists the
formats: detection, ``parse``, the API's ``format`` parameter, the sessions'
``source_format`` choices, the commands' help and the docs' table all read ``FORMATS``. So a
new format is one new module (and its tests), with no migration.
"""

from __future__ import annotations

import importlib
import pkgutil

from . import formats
from .format import Format


def _discover() -> dict[str, Format]:
    found = [
        importlib.import_module(f"{formats.__name__}.{module.name}").FORMAT
        for module in pkgutil.iter_modules(formats.__path__)
    ]
    found.sort(key=lambda declared: declared.position)
    return {declared.name: declared for declared in found}


FORMATS: dict[str, Format] = _discover()


def supported_formats() -> str:
    """One line of every format, for error messages."""
    return "; ".join(f"{name} ({declared.description})" for name, declared in FORMATS.items())


def stored_formats() -> list[tuple[str, str]]:
    """``(name, label)`` of the formats whose sessions keep them as their ``source_format``."""
    return [(name, declared.label) for name, declared in FORMATS.items() if declared.label]


def documentation_table() -> str:
    """The docs' table of import formats (docs/api.md holds it as written here)."""
    rows = [f"| `{name}` | {declared.documentation} |" for name, declared in FORMATS.items()]
    return "\n".join(["| `format` | what |", "|---|---|", *rows])
