"""The entity types, and the limits every scanner respects."""

from __future__ import annotations

FILE = "FILE"
FUNCTION = "FUNCTION"
CLASS = "CLASS"
ERROR = "ERROR"
COMMAND = "COMMAND"
URL = "URL"
PACKAGE = "PACKAGE"
TYPES = (FILE, FUNCTION, CLASS, ERROR, COMMAND, URL, PACKAGE)

MAX_VALUE = 500  # Entity.value / Entity.normalized are CharField(max_length=500)
Found = tuple[str, str, int, int]  # (type, value, start, end); start = end = -1: not in content
