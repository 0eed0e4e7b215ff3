"""Names in code: FUNCTION (definitions, ``f()`` mentions), CLASS (definitions, names with a
class suffix) and the ERROR class names (``*Error``, ``*Exception``, errno names)."""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import CLASS, ERROR, FUNCTION
from sessions.enrich.entities.scan import Scan, char, has, run_before, word_starts
from sessions.enrich.text import word_set

PY_KEYWORDS = word_set(
    "if elif else for while with return yield lambda not and or in is assert del raise try "
    "except finally import from as class def pass break continue global nonlocal await async "
    "print exec match case"
)
_JS_KEYWORDS = word_set(
    "if for while switch catch function return typeof instanceof new delete void throw do "
    "case require import export super this constructor await async yield"
)
_BUILTINS = word_set(
    """
    len range str int float bool dict list set tuple isinstance issubclass super open format
    get type id map filter zip enumerate sorted reversed min max sum abs any all iter next
    repr hash input vars dir getattr setattr hasattr delattr round object property
    staticmethod classmethod callable chr ord hex bin oct divmod pow slice frozenset bytes
    bytearray memoryview globals locals eval compile help breakpoint exit quit
    """
)
_GENERIC_METHODS = word_set(
    """
    append extend pop push shift unshift keys values items join split strip lstrip rstrip
    replace lower upper get set add remove update copy clear sort map filter forEach then
    catch finally toString log error warn info debug find index count insert length size
    """
)
_NOT_FUNCTIONS = PY_KEYWORDS | _JS_KEYWORDS | _BUILTINS

_CLASS_SUFFIXES = tuple(
    sorted(
        word_set(
            """
            Service Controller Manager Handler Model View ViewSet Serializer Factory Client
            Provider Repository Builder Adapter Middleware Component Config Configuration Form
            Admin TestCase Mixin Parser Importer Exporter Extractor Worker Router Request
            Response Schema Validator Helper Helpers Utils Engine Registry Loader Writer Reader
            Processor Generator Listener Observer Strategy Command Query QuerySet Filter Context
            Entity Dto DTO Event Module Dataset DataFrame Tensor Field Widget Plugin Visitor
            Wrapper Proxy Dispatcher Scheduler Executor Connection Cursor Transaction Record
            Fixture Reducer Props Screen Page Layout Container Modal Dialog Button Backend
            Pipeline Resolver Mutation Interceptor Guard Decorator Descriptor Iterator
            Tokenizer Encoder Decoder Formatter Renderer
            """
        ),
        key=len,
        reverse=True,
    )
)
_ERROR_SUFFIXES = ("Error", "Exception")
# PascalCase words that are products and languages, not classes.
_NOT_CLASSES = word_set(
    """
    TypeScript JavaScript CoffeeScript PyTorch TensorFlow GitHub GitLab BitBucket PostgreSQL
    MySQL MongoDB NoSQL FastAPI NumPy SciPy OpenAI ChatGPT LinkedIn YouTube WordPress
    PowerShell DevOps VSCode JetBrains PyPI PyCharm IntelliJ CamelCase PascalCase MacBook
    LangChain LlamaIndex HuggingFace DeepMind DeepSeek OpenRouter CircleCI TravisCI GraphQL
    WebSocket WebAssembly CloudFlare Cloudflare DynamoDB BigQuery SQLite MariaDB RabbitMQ
    ElasticSearch Elasticsearch OAuth FirstStep SuperTeam Superteam ChromaDB InfluxDB
    ClickHouse CockroachDB TimescaleDB MongoDB FaunaDB PlanetScale NextAuth NextJS NodeJS
    MultiEdit NotebookEdit NotebookRead WebFetch WebSearch TodoWrite TodoRead AskUserQuestion
    ExitPlanMode SlashCommand BashOutput KillShell KillBash SessionStart SessionEnd PreToolUse
    PostToolUse UserPromptSubmit PreCompact SubagentStop LoCoMo
    """
)
_OTHER_ERRORS = word_set(
    "KeyboardInterrupt StopIteration StopAsyncIteration SystemExit GeneratorExit "
    "ENOENT EACCES EPERM EEXIST ECONNREFUSED ECONNRESET EADDRINUSE ETIMEDOUT EPIPE "
    "ENOTFOUND EISDIR ENOTDIR EMFILE"
)
# Capitalised identifiers with a second capital (ValueError, UserService, HTTPError, ENOENT).
_IDENT_CAP = re.compile(r"\b[A-Z][a-z0-9]*+[A-Z][A-Za-z0-9]{1,80}+\b")
_DEF = re.compile(r"def[ \t]+([A-Za-z_]\w{0,100}+)[ \t]*\(")
_JS_FUNCTION = re.compile(r"function(?:[ \t]*\*[ \t]*|[ \t]+)([A-Za-z_$][\w$]{0,100}+)[ \t]*\(")
_ARROW = re.compile(
    r"(?:const|let|var)[ \t]+([A-Za-z_$][\w$]{0,100}+)[ \t]*(?::[^=\n]{1,100})?=[ \t]*"
    r"(?:async[ \t]*)?(?:function\b|\([^()\n]{0,200}\)[ \t]*(?::[^=\n]{1,100})?=>|"
    r"[A-Za-z_$][\w$]{0,50}+[ \t]*=>)"
)
_GO_FUNC = re.compile(r"func[ \t]+(?:\([^()\n]{0,100}\)[ \t]*)?([A-Za-z_]\w{0,100}+)[ \t]*[(\[]")
_RUST_FN = re.compile(r"fn[ \t]+([a-z_]\w{0,100}+)[ \t]*[(<]")
_CALL_NAME = re.compile(r"[A-Za-z_$][\w$]{0,60}(?:\.[A-Za-z_$][\w$]{0,60}){0,3}")
_NAME_REVERSED = re.compile(r"[\w$.]{1,250}")
_CLASS_DEF = re.compile(
    r"(?:class|interface|struct|enum|trait|record|protocol)[ \t]+([A-Z]\w{0,100}+)"
    r"(?=[ \t]*(?:[(:{<\r\n]|$|extends\b|implements\b))",
    re.M,
)
# A word right before or after a backticked PascalCase name that says it is a class ("the
# `Session` model", "class `Foo`", "`Bar` instances", "extends `Base`").
_CLASS_WORDS = (
    r"(?:class|classes|subclass|subclasses|instance|instances|object|objects|model|models|"
    r"component|components|interface|struct|enum|constructor|dataclass|extends|inherits from)"
)
_CLASS_BEFORE = re.compile(rf"\b{_CLASS_WORDS}[ \t]+$", re.I)
_CLASS_AFTER = re.compile(rf"[ \t]+{_CLASS_WORDS}\b", re.I)
_CLASS_KEYWORDS = ("class", "interface", "struct", "enum", "trait", "record", "protocol")


def scan_identifiers(scan: Scan, text: str, base: int) -> None:
    """Capitalised identifiers: ``*Error``/``*Exception`` -> ERROR, class suffixes -> CLASS."""
    for match in scan.each(_IDENT_CAP.finditer(text)):
        name = match.group()
        start, end = match.span()
        if char(text, start - 1) == "$" or char(text, end) == "$":
            continue
        if name.endswith(_ERROR_SUFFIXES):
            prefix = name[: -5 if name.endswith("Error") else -9]
            if prefix:
                scan.add(ERROR, name, base + start, base + end)
            continue
        if name in _OTHER_ERRORS:
            scan.add(ERROR, name, base + start, base + end)
            continue
        if not name.endswith(_CLASS_SUFFIXES) or name in _NOT_CLASSES:
            continue
        before, after = char(text, start - 1), text[end : end + 7]
        if before in "/\\-" or after.startswith("/") or re.match(r"\.[a-z]{1,5}\b", after):
            continue  # part of a path or a file name (UserService.java)
        suffix = next(s for s in _CLASS_SUFFIXES if name.endswith(s))
        prefix = name[: -len(suffix)]
        if prefix and re.search(r"[a-z]", name) and not (prefix.isupper() and len(prefix) < 2):
            scan.add(CLASS, name, base + start, base + end)


def scan_class_defs(scan: Scan, text: str, base: int) -> None:
    if not has(text, *_CLASS_KEYWORDS):
        return
    for match in scan.each(_CLASS_DEF.finditer(text)):
        if char(text, match.start() - 1).isalnum() or char(text, match.start() - 1) in "_.":
            continue
        name = match.group(1)
        if name.endswith(_ERROR_SUFFIXES) or name in _NOT_CLASSES:
            continue  # an error class is an ERROR (found by scan_identifiers)
        if _IDENT_CAP.fullmatch(name) and name.endswith(_CLASS_SUFFIXES):
            continue  # found by scan_identifiers already
        scan.add(CLASS, name, base + match.start(1), base + match.end(1))


def _function_name_ok(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    if len(last) < 2 or (last.startswith("__") and last.endswith("__")):
        return False
    if "." in name:
        return (
            last not in _GENERIC_METHODS
            and last not in _NOT_FUNCTIONS
            and name.split(".", 1)[0] != "console"
        )
    return name not in _NOT_FUNCTIONS


def scan_function_defs(scan: Scan, text: str, base: int, code: bool) -> None:
    patterns = []
    if "def" in text:
        patterns.append(_DEF)
    if "function" in text:
        patterns.append(_JS_FUNCTION)
    if code:
        if has(text, "=>", "function"):
            patterns.append(_ARROW)
        if "func" in text:
            patterns.append(_GO_FUNC)
        if "fn" in text:
            patterns.append(_RUST_FN)
    for _, match in word_starts(scan, text, patterns, "_.$"):
        name = match.group(1)
        if _function_name_ok(name):
            scan.add(FUNCTION, name, base + match.start(1), base + match.end(1))


def scan_calls(scan: Scan, text: str, base: int) -> None:
    """``name()`` mentions in prose (empty parentheses: a mention, not a call in code)."""
    position = 0
    while scan.budget > 0:
        i = text.find("()", position)
        if i < 0:
            break
        position = i + 2
        scan.budget -= 1
        length = run_before(text, i, _NAME_REVERSED, 250)
        after = char(text, i + 2)
        if not length or after.isalnum() or after in "_(":
            continue
        start = i - length
        while start < i and text[start] == ".":
            start += 1
        name = text[start:i]
        if (
            _CALL_NAME.fullmatch(name)
            and not name[:1].isupper()
            and ".." not in name
            and _function_name_ok(name)
        ):
            scan.add(FUNCTION, name, base + start, base + i)


def scan_backticked_name(
    scan: Scan, text: str, span: re.Match[str], stripped: str, start: int, *, prose: bool
) -> None:
    """A backticked ``f(args)`` in prose (FUNCTION), or a backticked PascalCase name that a
    word next to it calls a class ("the `Session` model", "`Bar` instances")."""
    call = re.fullmatch(r"([A-Za-z_$][\w$]{0,60}(?:\.[A-Za-z_$][\w$]{0,60}){0,3})\(.*\)", stripped)
    if call:
        name = call.group(1)
        if (
            prose
            and not name[:1].isupper()
            and not stripped.endswith("()")  # name() is found by scan_calls
            and _function_name_ok(name)
            and not re.fullmatch(r"[\d\s,]+", stripped[len(name) + 1 : -1])  # vector(384)
        ):
            scan.add(FUNCTION, name, start, start + len(name))
        return
    if (
        len(stripped) <= 80
        and re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)*", stripped)
        and stripped not in _NOT_CLASSES
        and stripped not in _OTHER_ERRORS
        and not stripped.endswith(_ERROR_SUFFIXES)
        and not stripped.endswith(_CLASS_SUFFIXES)  # found by scan_identifiers
        and (
            _CLASS_BEFORE.search(text[max(0, span.start() - 20) : span.start()])
            or _CLASS_AFTER.match(text, span.end())
        )
    ):
        scan.add(CLASS, stripped, start, start + len(stripped))
