"""Entities: files, functions, classes, errors, commands, URLs and packages that a
session mentions, found by regular expressions. Pure Python: no Django, no database.

Public API:

- ``extract_from_text(text)``: ``[(type, value, start, end), ...]`` in Markdown-ish prose with
  fenced code blocks; offsets index ``text``.
- ``extract_from_message(role, content, tool_name="", metadata=None)``: the same for one
  message, aware of how the importers render tool calls (``transcripts/_render.py``):
  a shell call's content is its command (first line -> COMMAND, plus the files, URLs and
  installed packages in it), an Edit/Write/Read call's first line names the file, a tool
  result is tool output (no ``name()`` mentions there: a dumped source file is full of calls).
- ``extract_session(messages)``: ``[Extracted, ...]`` deduplicated per session by
  ``(type, normalize(type, value))``, with occurrence counts and the context of the first one.
- ``normalize(type, value)``: the dedup and search key; the only place that rule lives.

**Keys are lowercase**, for every type. ``sessions/api/filters.py`` lowercases the ``?entity=``
query before comparing it with ``Entity.normalized``, so a key with capitals could never be
found (``?entity=ValueError`` or ``?entity=src/App.tsx``); ``value`` keeps the case as first
seen. The price: two paths that differ only by case (``README.md``/``readme.md``) are one
entity within a session.

**Precision over recall.** What is found:

- FILE: a path whose name has a known extension (``src/auth.py``, ``README.md``, ``.env``,
  ``Dockerfile``), or an absolute/home/relative path with a directory part (``/etc/nginx``,
  ``~/.config``, ``./scripts/run``, ``src/``). Not URLs, e-mail addresses, domains
  (``example.com``, ``github.com/x``), versions (``1.2.3``), ``e.g.``, ``Node.js``,
  ``self.lock``; in code only quoted names or paths with a directory. Directories count.
- FUNCTION: ``def f(``, ``function f(``, arrow functions/``func``/``fn`` in code, pytest ids,
  and in prose ``f()``/``obj.f()`` and backticked ``f(args)``; not keywords and builtins.
- CLASS: ``class X`` (and interface/struct/enum/trait), capitalised identifiers with a class
  suffix (``UserService``, ``AuthController``), a backticked PascalCase name next to a word
  that says so ("the `Session` model").
- ERROR: ``*Error``/``*Exception``, ``Traceback``, ``panic: ...``, Rust ``E0xxx``, TypeScript
  ``TS2322``, HTTP ``404 Not Found``, errno names (``ENOENT``), and the ``error:``/``fatal:``
  lines a tool printed.
- COMMAND: a shell tool call's first line, lines of ``bash``/``sh``/``console`` blocks,
  ``$ `` prompts, aider's "Run shell command?" lines, backticked spans that start with a
  known CLI tool and have an argument.
- URL: ``http(s)://``, ``ftp://``, ``ws(s)://``.
- PACKAGE: Python ``import x``/``from x import`` (top level, not relative, not stdlib),
  ``require('x')``/``import ... from 'x'`` (not relative, not Node builtins), the arguments of
  ``pip install``/``uv add``/``npm install``/``cargo add``/``go get``/..., the lines of a
  written ``requirements*.txt``. A session's own modules are dropped (``extract_session``).

**Linear time.** Patterns start with a literal where they can (found by the regex engine's
fast search), the others at the start of a run of the characters they consume, quantifiers
are bounded or possessive, patterns whose keyword is absent are not run, and one message
examines at most ``MAX_CANDIDATES`` matches (the rest of a pathological message is ignored),
so even megabytes of adversarial text are scanned quickly
(``tests/sessions/enrich/test_entities.py`` bounds it). Patterns are compiled once; none nests
unbounded quantifiers, and quantifiers are possessive (Python 3.11) where backtracking could
only fail.

The modules: ``kinds`` (the types and limits), ``normalize``, ``scan`` (what a message
yields, within a budget), one module per kind of entity (``files``, ``urls``, ``errors``,
``code_names`` for functions, classes and error classes, ``commands``, ``packages``),
``regions`` (prose, tool output, code blocks and shell scripts), ``messages`` (one message,
with the tool calls) and ``session`` (a whole session).
"""

from sessions.enrich.entities.kinds import (
    CLASS,
    COMMAND,
    ERROR,
    FILE,
    FUNCTION,
    MAX_VALUE,
    PACKAGE,
    TYPES,
    URL,
)
from sessions.enrich.entities.messages import extract_from_message, extract_from_text
from sessions.enrich.entities.normalize import normalize
from sessions.enrich.entities.session import Extracted, context_of, extract_session

__all__ = [
    "CLASS",
    "COMMAND",
    "ERROR",
    "FILE",
    "FUNCTION",
    "MAX_VALUE",
    "PACKAGE",
    "TYPES",
    "URL",
    "Extracted",
    "context_of",
    "extract_from_message",
    "extract_from_text",
    "extract_session",
    "normalize",
]
