"""Entities (seed 003): files, functions, classes, errors, commands, URLs and packages that a
session mentions, found by regular expressions. Pure Python: no Django, no database.

Public API:

- ``extract_from_text(text)``: ``[(type, value, start, end), ...]`` in Markdown-ish prose with
  fenced code blocks; offsets index ``text``.
- ``extract_from_message(role, content, tool_name="", metadata=None)``: the same for one
  message, aware of how the importers render tool calls (``sessions/capture/importers/_render.py``):
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
examines at most ``MAX_CANDIDATES`` matches (the rest of a pathological message is ignored):
a 5 MB adversarial message takes about a second.
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sessions.capture.shell_tools import is_shell_tool
from sessions.enrich.text import word_set
from sessions.enrich.transcript import attr

FILE = "FILE"
FUNCTION = "FUNCTION"
CLASS = "CLASS"
ERROR = "ERROR"
COMMAND = "COMMAND"
URL = "URL"
PACKAGE = "PACKAGE"
TYPES = (FILE, FUNCTION, CLASS, ERROR, COMMAND, URL, PACKAGE)

MAX_VALUE = 500  # Entity.value / Entity.normalized are CharField(max_length=500)
MAX_COMMAND = 200  # a command line is cut here (on a word boundary when there is one)
MAX_ERROR_LINE = 120  # an "error: ..." line is cut here
CONTEXT_CHARS = 160
MAX_CANDIDATES = 50_000  # matches examined per message; bounds the work on huge messages
MAX_INSTALL_LINE = 4_000  # longer lines are not parsed for installed packages

Found = tuple[str, str, int, int]  # (type, value, start, end); start = end = -1: not in content


@dataclass
class Extracted:
    type: str
    value: str
    normalized: str
    context: str
    count: int
    first_index: int


# ---------------------------------------------------------------------------------------------
# normalize

_TRAILING_PUNCT = ".,;:!?'\"`*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_PEP503 = re.compile(r"[-_.]+")
_SPACES = re.compile(r"\s+")
_DEF_PREFIX = re.compile(r"^(?:async\s+def|def|async\s+function|function|func|fn)\s+")


def _strip_url(url: str) -> str:
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
        text = _strip_url(text.split("#", 1)[0])
        if text.endswith("/") and text.count("/") > 3:
            text = text.rstrip("/")
    elif type == PACKAGE:
        if "/" not in text:
            text = _PEP503.sub("-", text)
    elif type == COMMAND:
        text = _SPACES.sub(" ", text)
    return text.lower()[:MAX_VALUE]


# ---------------------------------------------------------------------------------------------
# vocabulary

_EXTENSIONS = word_set(
    """
    py pyi pyx pxd ipynb js mjs cjs ts mts cts tsx jsx vue svelte astro go rs java kt kts scala
    groovy gradle rb erb php c h cpp cxx hpp hxx cs swift dart lua ex exs erl elm zig sol
    md mdx rst adoc txt json jsonl json5 yaml yml toml ini cfg conf properties xml plist csv
    tsv sql graphql gql proto prisma sh bash zsh fish ps1 psm1 bat cmd html htm css scss sass
    less lock log tf tfvars hcl dockerfile cmake mk mod sum png jpg jpeg gif svg webp ico pdf
    zip gz tgz whl pem crt db sqlite sqlite3 parquet pkl pt pth onnx patch diff
    """
)
_KNOWN_NAMES = word_set(
    "Dockerfile Containerfile Makefile GNUmakefile Procfile Gemfile Rakefile Vagrantfile "
    "Jenkinsfile Justfile Pipfile Brewfile Podfile Caddyfile Snakefile"
)
_DOTFILES = word_set(
    """
    .env .gitignore .gitattributes .gitmodules .dockerignore .editorconfig .npmrc .nvmrc
    .yarnrc .prettierrc .prettierignore .eslintrc .eslintignore .babelrc .bashrc .zshrc
    .profile .bash_profile .python-version .node-version .tool-versions .flake8 .pylintrc
    .coveragerc .htaccess .vimrc .envrc .netrc .pypirc .mailmap .clang-format .ruby-version
    """
)
# Names that are variables, not files: "self.lock", "process.env", "config.json" is a file
# only with a directory or quotes around it in code.
_OBJECT_STEMS = word_set(
    "self this cls window document console process os sys np pd math json ctx req res "
    "obj args kwargs options opts event e err"
)
# Extensions that are also attribute names (torch.log, mock.patch, np.sum, self.db): with no
# directory and no quote before them, the name must look like a file name.
_AMBIGUOUS_EXTENSIONS = word_set("log patch diff sum mod db lock sql pt cmd")
_AMBIGUOUS_STEMS = word_set(
    "go yarn cargo poetry pipfile uv composer gemfile flake podfile mix bun package-lock "
    "npm-debug yarn-error error access debug server build output install app test data"
)
_DOMAINS = word_set("docs.rs")
# "Node.js", "Next.js": libraries, not files.
_JS_LIBRARIES = word_set(
    "node next nuxt vue react angular express chart three d3 socket ember backbone "
    "alpine solid svelte nest p5 anime moment day video"
)
# First directory of an extensionless absolute path that is a filesystem path (a URL route
# like /api/v1/sessions is not a file).
_FS_ROOTS = word_set(
    "home Users usr etc var tmp opt mnt srv root bin sbin lib lib64 workspace workspaces "
    "Volumes private app code data work Library Applications System nix snap media "
    "builds repo repos src"
)
_QUOTES = "'\"`<"
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~/\\+-")

_PY_KEYWORDS = word_set(
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
_NOT_FUNCTIONS = _PY_KEYWORDS | _JS_KEYWORDS | _BUILTINS

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

# Command-line tools recognised at the start of an inline code span.
_CLI_TOOLS = word_set(
    """
    pytest npm npx yarn pnpm bun deno pip pip3 pipx uv uvx poetry pipenv conda mamba pdm rye
    git gh docker docker-compose podman kubectl helm minikube kind terraform ansible make
    cmake cargo rustc rustup go node python python3 ts-node tsx tsc curl wget ls cd cat grep
    rg find sed awk mkdir rm cp mv chmod chown touch ssh scp rsync tar unzip brew apt apt-get
    sudo systemctl journalctl aws gcloud az psql mysql redis-cli sqlite3 ruff black isort mypy
    flake8 pylint eslint prettier jest vitest mocha playwright mvn gradle dotnet bundle rails
    rake gem composer php java javac bash sh zsh source export echo head tail wc diff ln du
    df ps lsof tmux celery gunicorn uvicorn flask django-admin alembic tox nox pre-commit nvm
    pyenv virtualenv heroku vercel netlify firebase supabase wrangler solana anchor forge
    hardhat ollama
    """
)
# Tools that are English words too: the span must go on with one of these.
_SUBCOMMANDS = {
    "go": word_set("build run test mod get install vet fmt generate work tool env"),
}
_SHELL_LANGS = word_set("bash sh shell zsh fish ksh powershell pwsh ps1 cmd bat")
_CONSOLE_LANGS = word_set("console terminal shell-session shellsession sh-session")
_PROSE_LANGS = word_set("markdown md mdx")
# Blocks read like tool output (paths need no quotes; no "name()" mentions): logs and config.
_OUTPUT_LANGS = word_set(
    "text txt output log plaintext plain dockerfile docker yaml yml toml ini cfg conf env "
    "dotenv properties makefile make gitignore nginx apache csv tsv"
)
_SHELL_KEYWORDS = word_set(
    "if then else elif fi for while until do done case esac function select in return exit "
    "local declare readonly set unset shift break continue true false trap wait eval exec "
    "{ } ( ) [ [[ ]] ;; EOF"
)

_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}
_NODE_BUILTINS = word_set(
    """
    assert async_hooks buffer child_process cluster console constants crypto dgram dns domain
    events fs http http2 https inspector module net os path perf_hooks process punycode
    querystring readline repl stream string_decoder sys timers tls trace_events tty url util
    v8 vm wasi worker_threads zlib test
    """
)
_GO_STDLIB = word_set(
    """
    fmt os io net time strings strconv errors context sync log bytes bufio sort math flag
    path regexp testing unicode encoding crypto html image reflect runtime embed hash mime
    """
)
# Installers: the words after the prefix (flags aside) are packages of that ecosystem.
_INSTALLERS = sorted(
    (
        (tuple(prefix.split()), kind)
        for prefix, kind in [
            ("pip install", "py"),
            ("pip3 install", "py"),
            ("pipx install", "py"),
            ("python -m pip install", "py"),
            ("python3 -m pip install", "py"),
            ("py -m pip install", "py"),
            ("uv pip install", "py"),
            ("uv add", "py"),
            ("uv tool install", "py"),
            ("poetry add", "py"),
            ("pipenv install", "py"),
            ("pdm add", "py"),
            ("rye add", "py"),
            ("conda install", "py"),
            ("mamba install", "py"),
            ("npm install", "js"),
            ("npm i", "js"),
            ("npm add", "js"),
            ("yarn add", "js"),
            ("yarn global add", "js"),
            ("pnpm add", "js"),
            ("pnpm install", "js"),
            ("pnpm i", "js"),
            ("bun add", "js"),
            ("bun install", "js"),
            ("cargo add", "rs"),
            ("cargo install", "rs"),
            ("go get", "go"),
            ("go install", "go"),
            ("gem install", "rb"),
            ("bundle add", "rb"),
            ("composer require", "php"),
            ("brew install", "sys"),
            ("apt-get install", "sys"),
            ("apt install", "sys"),
            ("dotnet add package", "cs"),
        ]
    ),
    key=lambda item: -len(item[0]),
)
_FLAGS_WITH_ARGUMENT = word_set(
    "-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -t "
    "--target -f --find-links --registry --prefix --group --python -p --channel --source "
    "--version --tag --cwd --filter -w --workspace"
)

# ---------------------------------------------------------------------------------------------
# patterns (compiled once). Most start with a literal, so the regex engine's fast search skips
# text without it; the others start at the start of a run (a lookbehind); no nested unbounded
# quantifiers; possessive quantifiers (Python 3.11) where backtracking could only fail.

_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n`]*$", re.M)
_URL_RE = re.compile(r"(?:https?|ftp|wss?)://[^\s<>\"'`]+", re.I)
_EMAIL_AT = re.compile(r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_EMAIL_LOCAL_REVERSED = re.compile(r"[\w.+-]{1,64}")
_PATH_RUN = re.compile(r"(?<![\w.~/\\+-])[\w~+-]*+[./\\][\w.~/\\+-]*+")
_KNOWN_NAME_RE = re.compile(r"\b(?:" + "|".join(sorted(_KNOWN_NAMES)) + r")(?:\.[\w-]{1,20})?\b")
# Capitalised identifiers with a second capital (ValueError, UserService, HTTPError, ENOENT).
_IDENT_CAP = re.compile(r"\b[A-Z][a-z0-9]*+[A-Z][A-Za-z0-9]{1,80}+\b")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_PANIC = re.compile(r"^[ \t]*(panic: [^\n]{1,120})", re.M)
_RUST_CODE = re.compile(r"error\[(E\d{4})\]|(E0\d{3})")
_TS_CODE = re.compile(r"error (TS\d{4,5})\b")
_HTTP_STATUS = re.compile(
    r"([45]\d\d)[ \t]+(?:Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|"
    r"Method Not Allowed|Not Acceptable|Request Timeout|Conflict|Gone|Payload Too Large|"
    r"Unsupported Media Type|Unprocessable (?:Entity|Content)|Too Many Requests|"
    r"Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Gateway Timeout)\b",
    re.I,
)
_SEGFAULT = re.compile(r"Segmentation fault\b")
# An error line a tool printed: "fatal: not a git repository", "Error: payment failed".
_ERROR_LINE = re.compile(
    r"^[ \t]*((?:error|fatal|Error|ERROR|FATAL)(?:\[\w{1,10}\])?:[ \t]+\S[^\n]{2,300}"
    r"|npm ERR! [^\n]{3,300})",
    re.M,
)
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
_INLINE_CODE = re.compile(r"`([^`\n]{1,300})`(?!`)")
_PY_IMPORT = re.compile(
    r"^[ \t]*(?:\d+(?:→|\t))?(?:[+-][ \t]*|>>>[ \t]+)?(import|from)[ \t]+([^\n]{1,300})", re.M
)
_JS_REQUIRE = re.compile(r"require[ \t]*\([ \t]*(['\"])([^'\"\n]{1,214})\1[ \t]*\)")
# import x from 'y' / export { a } from 'y' / } from 'y' (a multi-line import's last line).
_JS_FROM = re.compile(r"from[ \t]+(['\"])([^'\"\n]{1,214})\1")
_JS_FROM_HEAD = re.compile(r"(?:^|[\s;])(?:import|export)[ \t]|^[ \t]*}")
# import 'y' / import('y')
_JS_BARE_IMPORT = re.compile(r"import[ \t]*(?:\([ \t]*)?(['\"])([^'\"\n]{1,214})\1")
_PROMPT_LINE = re.compile(r"^[ \t]*[$%][ \t]+([A-Za-z_./~][^\n]{0,1000})", re.M)
_AIDER_RUN = re.compile(r"^([^\n]{1,300})\nRun shell command\?", re.M)
_AIDER_FILE = re.compile(
    r"^(?:Applied edit to ([^\n]{1,500}?)|Added ([^\n]{1,500}?) to the chat\.?)[ \t\r]*$", re.M
)
_DIFF_HEADER = re.compile(
    r"^(?:\+\+\+ b/|--- a/|diff --git a/|\*\*\* (?:Update|Add|Delete) File: |\*\*\* Move to: )"
    r"(\S{1,500})(?: b/\S{1,500})?",
    re.M,
)
_PYTEST_ID = re.compile(r"\.py::(\w{1,100})(?:::(\w{1,100}))?")
_PATH_REVERSED = re.compile(r"[\w./-]{1,300}")
_LINES = re.compile(r"[^\n]+")
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w{0,30})\1")
_INSTALL_LINE = re.compile(r"^[^\n]{0,4000}?\b(?:install|add|get|require|package|i)\b", re.M)
_INSTALL_WORD = re.compile(r"\b(?:install|add|get|require|package|i)\b")
_SHELL_OPERATORS = re.compile(r"&&|\|\||[;|&<>()`#]|\$\(")
_ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_]\w*=[^\s'\"$()`]*[ \t]+)+")
_PY_NAME = re.compile(r"[A-Za-z_]\w*")
_IMPORTED = r"[A-Za-z_]\w*(?:[ \t]+as[ \t]+[A-Za-z_]\w*)?"
_FROM_IMPORT = re.compile(
    rf"([A-Za-z_][\w.]*)[ \t]+import[ \t]+(?:\*|\(?[ \t]*{_IMPORTED}(?:[ \t]*,[ \t]*{_IMPORTED})*"
    r"[ \t]*,?[ \t]*\)?|\([ \t]*)"
)
_PACKAGE_NAME = re.compile(
    r"(?:@[A-Za-z0-9][\w.-]{0,100}/)?[A-Za-z0-9][\w.+-]{0,200}|"
    r"[a-z0-9][\w-]{0,60}(?:\.[a-z0-9][\w-]{0,60})+(?:/[\w.~-]{1,100}){1,5}"
)


# ---------------------------------------------------------------------------------------------
# the scanner


class _Scan:
    """What one message yields. FILE candidates inside a URL, an e-mail address or a path a
    specific pattern already took are skipped (``block``/``blocked``); every match examined
    spends one unit of ``budget``."""

    def __init__(self) -> None:
        self.found: list[Found] = []
        self.budget = MAX_CANDIDATES
        self._blocked: list[tuple[int, int]] = []

    def add(self, type: str, value: str, start: int, end: int) -> None:
        value = value.strip()
        if value and len(value) <= MAX_VALUE:
            self.found.append((type, value, start, end))

    def each(self, matches: Iterable[Any], cost: int = 1) -> Iterator[Any]:
        for match in matches:
            if self.budget <= 0:
                return
            self.budget -= cost
            yield match

    def block(self, start: int, end: int) -> None:
        bisect.insort(self._blocked, (start, end))

    def blocked(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._blocked, (start, float("inf")))
        return any(s < end and start < e for s, e in self._blocked[max(i - 3, 0) : i + 1])

    def result(self) -> list[Found]:
        seen: set[tuple[str, str, int]] = set()
        out = []
        for item in sorted(self.found, key=lambda f: (f[2], f[3], f[0])):
            key = (item[0], item[1], item[2])
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out


def _char(text: str, i: int) -> str:
    return text[i] if 0 <= i < len(text) else " "


def _has(text: str, *needles: str) -> bool:
    return any(needle in text for needle in needles)


def _run_before(text: str, i: int, pattern: re.Pattern[str], limit: int) -> int:
    """Length of the run of ``pattern`` characters that ends at ``i``."""
    match = pattern.match(text[max(0, i - limit) : i][::-1])
    return len(match.group()) if match else 0


# --- FILE ----------------------------------------------------------------------------------


def _has_known_ext(name: str) -> bool:
    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return "." in base.lstrip(".") and base.rsplit(".", 1)[1].lower() in _EXTENSIONS


def _file_value(token: str, before: str, after: str, code: bool) -> str:
    """The path ``token`` names (cleaned of surrounding punctuation), or "" if none."""
    if before in "@$}%…" or after in "@…":
        return ""  # e-mail, $VAR/x, ${X}/y, elided text
    if after == "(" and not (re.search(r"[/\\].", token) and _has_known_ext(token)):
        return ""  # obj.method(), but src/app.tsx(12,5) is a file
    if "://" in token or token.startswith("//"):
        return ""
    token = token.lstrip("+-").rstrip(".-+~")
    trailing_slash = token.endswith(("/", "\\"))
    if len(token) < 2 or len(token) > MAX_VALUE:
        return ""
    path = token.replace("\\", "/")
    drive = bool(re.match(r"[A-Za-z]:/", path))
    rooted = drive or path.startswith(("/", "~/", "./", "../"))
    parts = [p for p in path.split("/") if p]
    if not parts or any("..." in p for p in parts) or path.startswith("path/to/"):
        return ""  # ~/.codex/sessions/.../x.jsonl is elided; path/to/x.py a placeholder
    if "//" in path[1:]:
        return ""
    has_dir = len(parts) > 1 or path.startswith(("/", "~/"))
    first = parts[0]
    if (
        "/" in path
        and not rooted
        and "." in first.strip(".")
        and not first.startswith(".")
        and first.rsplit(".", 1)[1].lower() not in _EXTENSIONS
    ):
        return ""  # github.com/user/repo, x.com/: a domain, not a directory
    base = parts[-1]
    name = base[1:] if base.startswith(".") else base
    stem, dot, ext = name.rpartition(".")
    if base.startswith("."):
        stem = "." + stem if dot else ""
    known = False
    if dot and stem and ext.isalnum() and ext.lower() in _EXTENSIONS:
        known = not (
            (len(stem.lstrip(".")) == 1 and len(ext) == 1)  # a.m., i.e
            or (not has_dir and stem.lower() in _OBJECT_STEMS)  # self.lock, process.env
            or (not has_dir and ext.lower() == "js" and stem.lower() in _JS_LIBRARIES)
            or not re.search(r"[A-Za-z]", stem)
            or (
                not has_dir
                and before not in "'\""
                and ext.lower() in _AMBIGUOUS_EXTENSIONS
                and stem.lower() not in _AMBIGUOUS_STEMS
                and not re.search(r"[-\d]", stem)
            )
            or (not has_dir and path.lower() in _DOMAINS)
        )
    elif (
        base in _KNOWN_NAMES
        or base.startswith(("Dockerfile.", "Containerfile."))
        or base in _DOTFILES
        or base.startswith(".env.")
    ):
        known = True
    if not known:
        if drive or path.startswith(("~/", "./", "../")):
            real = len([p for p in parts if p not in (".", "..", "~")])
            known = real >= (2 if path.startswith(".") else 1)
        elif path.startswith("/"):
            known = len(parts) >= 2 and parts[0] in _FS_ROOTS
        elif trailing_slash and all(re.fullmatch(r"[\w.-]+", p) for p in parts):
            # src/, skills/data/specs/ (but not sed's s/x/y/)
            known = len(first) > 1 and bool(re.search(r"[a-z]", first)) and not first[0].isdigit()
    if not known or (code and not has_dir and before not in _QUOTES):
        return ""
    return token


def _scan_files(scan: _Scan, text: str, base: int, code: bool) -> None:
    for match in scan.each(_PATH_RUN.finditer(text)):
        start, end = match.span()
        token = match.group()
        if len(token) > 2 * MAX_VALUE:
            continue
        lead = len(token) - len(token.lstrip("+-"))
        before = " " if lead else _char(text, start - 1)
        if (
            before == ":"
            and start >= 2
            and text[start - 2].isalpha()
            and token[0] in "\\/"
            and _char(text, start - 3) not in _PATH_CHARS
        ):  # C:\Users\x
            start, token, before = start - 2, text[start - 2 : end], _char(text, start - 3)
        if "/" not in token and text[max(0, start - 7) : start].endswith(("from ", "import ")):
            continue  # from django.conf import settings: a module, not a file
        value = _file_value(token, before, _char(text, end), code)
        if not value:
            continue
        value_start = start + lead
        value_end = value_start + len(value)
        if not scan.blocked(base + value_start, base + value_end):
            scan.add(FILE, value, base + value_start, base + value_end)
    if "file" in text:
        for match in scan.each(_KNOWN_NAME_RE.finditer(text)):
            start, end = match.span()
            if _char(text, start - 1) in _PATH_CHARS or _char(text, end) in _PATH_CHARS:
                continue  # part of a longer path, found above
            if code and _char(text, start - 1) not in _QUOTES:
                continue
            scan.add(FILE, match.group(), base + start, base + end)


def _scan_special_files(scan: _Scan, text: str, base: int, mode: str) -> None:
    """Paths named by aider's console, diff headers, apply_patch, and pytest node ids."""
    patterns = []
    if _has(text, "+++ b/", "--- a/", "diff --git a/", "*** "):
        patterns.append(_DIFF_HEADER)
    if mode != "code" and _has(text, "Applied edit to ", " to the chat"):
        patterns.append(_AIDER_FILE)
    for pattern in patterns:
        for match in scan.each(pattern.finditer(text)):
            group = 1 if match.group(1) else 2 if pattern is _AIDER_FILE else 1
            value = match.group(group).strip()
            if value and value != "/dev/null":
                start = base + match.start(group)
                scan.add(FILE, value, start, start + len(value))
                scan.block(start, base + match.end())
    if ".py::" not in text:
        return
    for match in scan.each(_PYTEST_ID.finditer(text)):
        length = _run_before(text, match.start(), _PATH_REVERSED, 300)
        if not length:
            continue
        start = match.start() - length
        path = text[start : match.start() + 3]
        scan.add(FILE, path, base + start, base + match.start() + 3)
        scan.block(base + start, base + match.start() + 3)
        middle, last = match.group(1), match.group(2)
        func, func_at = (last, match.start(2)) if last else (middle, match.start(1))
        if func.startswith("test"):
            scan.add(FUNCTION, func, base + func_at, base + func_at + len(func))
        if last and middle.startswith("Test"):
            scan.add(CLASS, middle, base + match.start(1), base + match.end(1))


# --- URL -----------------------------------------------------------------------------------


def _scan_urls(scan: _Scan, text: str, base: int) -> None:
    if "://" in text:
        for match in scan.each(_URL_RE.finditer(text)):
            scan.block(base + match.start(), base + match.end())
            url = _strip_url(match.group())
            host = url.split("://", 1)[1].split("/", 1)[0]
            if len(url) <= MAX_VALUE and re.fullmatch(r"[\w.\[\]:@-]+", host or "$"):
                scan.add(URL, url, base + match.start(), base + match.start() + len(url))
    if "@" in text:
        for match in scan.each(_EMAIL_AT.finditer(text)):
            local = _run_before(text, match.start(), _EMAIL_LOCAL_REVERSED, 64)
            if local:
                scan.block(base + match.start() - local, base + match.end())


# --- ERROR and CLASS -------------------------------------------------------------------------


def _scan_errors(scan: _Scan, text: str, base: int, output: bool) -> None:
    if "Traceback" in text:
        for match in scan.each(_TRACEBACK.finditer(text)):
            scan.add(ERROR, "Traceback", base + match.start(), base + match.start() + 9)
    if "panic: " in text:
        for match in scan.each(_PANIC.finditer(text)):
            value = match.group(1).rstrip()
            scan.add(ERROR, value, base + match.start(1), base + match.start(1) + len(value))
    if "E0" in text:
        for match in scan.each(_RUST_CODE.finditer(text)):
            group = 1 if match.group(1) else 2
            start, end = match.span(group)
            if group == 2 and (
                _char(text, start - 1).isalnum()
                or _char(text, end).isalnum()
                or "-" in (_char(text, start - 1) + _char(text, end))
            ):
                continue
            scan.add(ERROR, match.group(group), base + start, base + end)
    if "error TS" in text:
        for match in scan.each(_TS_CODE.finditer(text)):
            scan.add(ERROR, match.group(1), base + match.start(1), base + match.end(1))
    for match in scan.each(_HTTP_STATUS.finditer(text)):
        if _char(text, match.start() - 1).isalnum() or _char(text, match.start() - 1) in "._":
            continue
        scan.add(ERROR, match.group(), base + match.start(), base + match.end())
    if "Segmentation fault" in text:
        for match in scan.each(_SEGFAULT.finditer(text)):
            scan.add(ERROR, match.group(), base + match.start(), base + match.end())
    if output and _has(text, "rror:", "RROR:", "atal:", "ATAL:", "rror[", "npm ERR!"):
        for match in scan.each(_ERROR_LINE.finditer(text)):
            value = match.group(1).strip()
            if len(value) > MAX_ERROR_LINE:
                cut = value[:MAX_ERROR_LINE]
                space = cut.rfind(" ")
                value = cut[:space] if space > MAX_ERROR_LINE // 2 else cut
            start = base + match.start(1)
            scan.add(ERROR, value, start, start + len(value))


def _scan_identifiers(scan: _Scan, text: str, base: int) -> None:
    """Capitalised identifiers: ``*Error``/``*Exception`` -> ERROR, class suffixes -> CLASS."""
    for match in scan.each(_IDENT_CAP.finditer(text)):
        name = match.group()
        start, end = match.span()
        if _char(text, start - 1) == "$" or _char(text, end) == "$":
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
        before, after = _char(text, start - 1), text[end : end + 7]
        if before in "/\\-" or after.startswith("/") or re.match(r"\.[a-z]{1,5}\b", after):
            continue  # part of a path or a file name (UserService.java)
        suffix = next(s for s in _CLASS_SUFFIXES if name.endswith(s))
        prefix = name[: -len(suffix)]
        if prefix and re.search(r"[a-z]", name) and not (prefix.isupper() and len(prefix) < 2):
            scan.add(CLASS, name, base + start, base + end)


def _scan_class_defs(scan: _Scan, text: str, base: int) -> None:
    if not _has(text, *_CLASS_KEYWORDS):
        return
    for match in scan.each(_CLASS_DEF.finditer(text)):
        if _char(text, match.start() - 1).isalnum() or _char(text, match.start() - 1) in "_.":
            continue
        name = match.group(1)
        if name.endswith(_ERROR_SUFFIXES) or name in _NOT_CLASSES:
            continue  # an error class is an ERROR (found by _scan_identifiers)
        if _IDENT_CAP.fullmatch(name) and name.endswith(_CLASS_SUFFIXES):
            continue  # found by _scan_identifiers already
        scan.add(CLASS, name, base + match.start(1), base + match.end(1))


# --- FUNCTION ------------------------------------------------------------------------------


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


def _scan_function_defs(scan: _Scan, text: str, base: int, code: bool) -> None:
    patterns = []
    if "def" in text:
        patterns.append(_DEF)
    if "function" in text:
        patterns.append(_JS_FUNCTION)
    if code:
        if _has(text, "=>", "function"):
            patterns.append(_ARROW)
        if "func" in text:
            patterns.append(_GO_FUNC)
        if "fn" in text:
            patterns.append(_RUST_FN)
    for pattern in patterns:
        for match in scan.each(pattern.finditer(text)):
            before = _char(text, match.start() - 1)
            if before.isalnum() or before in "_.$":
                continue
            name = match.group(1)
            if _function_name_ok(name):
                scan.add(FUNCTION, name, base + match.start(1), base + match.end(1))


def _scan_calls(scan: _Scan, text: str, base: int) -> None:
    """``name()`` mentions in prose (empty parentheses: a mention, not a call in code)."""
    position = 0
    while scan.budget > 0:
        i = text.find("()", position)
        if i < 0:
            break
        position = i + 2
        scan.budget -= 1
        length = _run_before(text, i, _NAME_REVERSED, 250)
        after = _char(text, i + 2)
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


# --- COMMAND and PACKAGE ---------------------------------------------------------------------


def _strip_comment(line: str) -> str:
    """``make run   # start it`` -> ``make run`` (a `` #`` outside quotes starts a comment)."""
    position = line.find(" #")
    while position >= 0:
        before = line[:position]
        if before.count("'") % 2 == 0 and before.count('"') % 2 == 0:
            return before.rstrip()
        position = line.find(" #", position + 2)
    return line


def _clip_command(line: str) -> str:
    line = _strip_comment(line.strip()) if " #" in line else line.strip()
    if len(line) <= MAX_COMMAND:
        return line
    cut = line[:MAX_COMMAND]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_COMMAND // 2 else cut).rstrip()


def _add_command(scan: _Scan, command: str, start: int) -> None:
    value = _clip_command(command)
    scan.add(COMMAND, value, start, start + len(value))
    _scan_installs(scan, command, start)


def _package_from_word(word: str, kind: str) -> str:
    word = word.strip("'\"")
    if not word or word.startswith(("-", ".", "/", "~", "$", "git+")) or "://" in word:
        return ""
    if kind == "py":
        word = re.split(r"[<>=!~;\[ ,]", word, maxsplit=1)[0]
    elif "=" in word:
        return ""
    elif kind == "js":
        if word.startswith("@"):
            scope, _, rest = word.partition("/")
            word = f"{scope}/{rest.split('@', 1)[0]}" if rest else ""
        else:
            word = word.split("@", 1)[0]
        if word.startswith(("file:", "link:", "workspace:", "npm:")):
            return ""
    elif kind in ("go", "rs"):
        word = word.split("@", 1)[0]
        word = word[:-4] if word.endswith("/...") else word
    if not word or not _PACKAGE_NAME.fullmatch(word):
        return ""
    if kind == "go":
        return word if "/" in word else ""
    if "/" in word and not word.startswith("@"):
        return ""  # a path, not a package
    if _has_known_ext(word):
        return ""  # requirements.txt, a wheel, an archive
    return word


def _scan_installs(scan: _Scan, line: str, base: int) -> None:
    """Packages named by ``pip install x``, ``npm install y``, ``uv add z``, ... in one line."""
    if len(line) > MAX_INSTALL_LINE or not _INSTALL_WORD.search(line):
        return
    position = 0
    for piece in _SHELL_OPERATORS.split(line):
        piece_start = line.find(piece, position)
        position = piece_start + len(piece)
        words = piece.split()
        while words and (words[0] == "sudo" or re.match(r"[A-Za-z_]\w*=", words[0])):
            words = words[1:]
        if len(words) > 1 and words[0] in ("npm", "pnpm", "yarn", "apt-get", "apt"):
            head = [words[0]]
            rest_at = 1
            while rest_at < len(words) and words[rest_at].startswith("-"):
                rest_at += 1  # npm -g install x
            words = head + words[rest_at:]
        for prefix, kind in _INSTALLERS:
            if tuple(words[: len(prefix)]) != prefix:
                continue
            skip_next = False
            cursor = piece_start + piece.find(prefix[-1]) + len(prefix[-1])
            for word in words[len(prefix) :]:
                at = line.find(word, cursor)
                cursor = at + len(word)
                if skip_next:
                    skip_next = False
                elif word.startswith("-"):
                    skip_next = word in _FLAGS_WITH_ARGUMENT
                else:
                    name = _package_from_word(word, kind)
                    if name:
                        name_at = at + max(word.find(name), 0)
                        scan.add(PACKAGE, name, base + name_at, base + name_at + len(name))
            break


def _command_of(line: str) -> str:
    """The command of a shell line; "" for comments, keywords and bare assignments."""
    line = line.strip()
    if not line or line.startswith("#"):
        return ""
    match = _ASSIGNMENTS.match(line)
    if match:
        line = line[match.end() :]
    elif re.match(r"[A-Za-z_]\w*=", line):
        return ""  # FOO="$(...)": an assignment, not a command
    word = line.split(None, 1)[0] if line else ""
    if not word or word in _SHELL_KEYWORDS or word.endswith((";", ")")) or word[0].isdigit():
        return ""
    return line if re.fullmatch(r"[A-Za-z0-9_./~][\w./~+:-]*", word) else ""


def _inline_command(span: str) -> bool:
    words = span.split()
    if len(words) < 2:
        return False
    tool = words[0]
    if tool.startswith("./") and len(tool) > 2:
        return True
    if tool not in _CLI_TOOLS:
        return False
    if tool in ("python", "python3"):
        return words[1].startswith("-") or words[1].endswith(".py") or "/" in words[1]
    if tool == "find":
        return words[1].startswith((".", "/", "~", "-"))
    needs = _SUBCOMMANDS.get(tool)
    return needs is None or words[1] in needs


def _heredocs(scan: _Scan, text: str) -> list[tuple[int, int]]:
    """Spans of here-document bodies (``cat > x.py <<'EOF' ... EOF``): code, not commands."""
    spans: list[tuple[int, int]] = []
    if "<<" not in text:
        return spans
    position = 0
    missing: set[str] = set()  # terminators not found after an earlier here-document
    for match in scan.each(_HEREDOC.finditer(text)):
        name = match.group(2)
        if match.start() < position or name in missing:
            continue
        body_start = text.find("\n", match.end())
        if body_start < 0:
            break
        body_start += 1
        terminator = re.compile(rf"^[ \t]*{name}[ \t\r]*$", re.M).search(text, body_start)
        if terminator:
            spans.append((body_start, terminator.start()))
            position = terminator.end()
        else:
            missing.add(name)
    return spans


def _scan_shell(scan: _Scan, text: str, base: int, *, console: bool, commands: bool) -> None:
    """A shell script: its lines as COMMANDs (``commands``), the files, URLs and installed
    packages in it; here-document bodies are scanned as code."""
    # A console transcript (``$ `` prompts) in a code block; a tool call's script never is.
    prompted = console or (
        commands and _has(text, "$ ", "$\t") and bool(re.search(r"^[ \t]*\$[ \t]", text, re.M))
    )
    pieces = []
    position = 0
    for start, end in _heredocs(scan, text):
        pieces.append((position, start))
        _scan_region(scan, text[start:end], base + start, "code")
        position = end
    pieces.append((position, len(text)))
    for piece_start, piece_end in pieces:
        piece = text[piece_start:piece_end]
        if prompted:
            for match in scan.each(_PROMPT_LINE.finditer(piece)):
                command = _command_of(match.group(1))
                at = piece_start + match.start(1)
                if command:
                    _add_command(scan, command, base + at + match.group(1).find(command))
                _scan_urls(scan, match.group(1), base + at)
                _scan_files(scan, match.group(1), base + at, code=False)
            continue
        if commands:
            pending: list[str] = []  # the lines of a command continued with a backslash
            pending_at = 0
            for match in scan.each(_LINES.finditer(piece)):
                line = match.group().rstrip("\r")
                if not pending:
                    pending_at = piece_start + match.start()
                if line.endswith("\\"):
                    pending.append(line[:-1].strip())
                    continue
                joined = " ".join([*pending, line.strip()]) if pending else match.group()
                pending = []
                command = _command_of(joined)
                if command:
                    _add_command(scan, command, base + pending_at + max(joined.find(command), 0))
        else:
            for match in scan.each(_INSTALL_LINE.finditer(piece)):
                line_end = piece.find("\n", match.start())
                line = piece[match.start() : line_end if line_end >= 0 else len(piece)]
                _scan_installs(scan, line, base + piece_start + match.start())
        _scan_urls(scan, piece, base + piece_start)
        _scan_files(scan, piece, base + piece_start, code=False)


# --- PACKAGE from imports --------------------------------------------------------------------


def _js_package(spec: str) -> str:
    if spec.startswith((".", "/", "~", "@/", "#", "node:", "http", "data:", "$", "virtual:")):
        return ""
    if spec.startswith("@"):
        parts = spec.split("/")
        name = "/".join(parts[:2]) if len(parts) >= 2 else ""
    else:
        first = spec.split("/", 1)[0]
        if "." in first and "/" in spec:  # a Go module path
            name = "/".join(spec.split("/")[:3])
        elif first in _NODE_BUILTINS:
            return ""
        else:
            name = first
    if not name or not _PACKAGE_NAME.fullmatch(name) or _has_known_ext(name):
        return ""
    return name


def _python_modules(keyword: str, rest: str) -> list[tuple[str, int]]:
    """(top-level module, offset in ``rest``) of a Python import statement, [] if not one."""
    if re.search(r"['\"{]|\brequire\b", rest):
        return []  # JavaScript
    rest = rest.split("#", 1)[0].rstrip().rstrip(";").rstrip()
    if keyword == "from":
        match = _FROM_IMPORT.fullmatch(rest)
        return [(match.group(1), 0)] if match else []
    modules = []
    position = 0
    for item in rest.split(","):
        words = item.split()
        at = rest.find(item.strip(), position)
        position = at + len(item.strip())
        if not (len(words) == 1 or (len(words) == 3 and words[1] == "as")):
            return []
        if not all(_PY_NAME.fullmatch(p) for p in words[0].split(".")):
            return []
        modules.append((words[0], at))
    return modules


def _scan_imports(scan: _Scan, text: str, base: int, code: bool) -> None:
    if "import" in text:
        for match in scan.each(_PY_IMPORT.finditer(text)):
            for module, at in _python_modules(match.group(1), match.group(2)):
                top = module.split(".", 1)[0]
                if top and top not in _STDLIB and top not in _PY_KEYWORDS:
                    start = base + match.start(2) + at
                    scan.add(PACKAGE, top, start, start + len(top))
    patterns = []
    if "require" in text:
        patterns.append(_JS_REQUIRE)
    if "import" in text:
        patterns.append(_JS_BARE_IMPORT)
    if "from" in text and _has(text, "import", "export", "}"):
        patterns.append(_JS_FROM)
    for pattern in patterns:
        for match in scan.each(pattern.finditer(text)):
            before = _char(text, match.start() - 1)
            if before.isalnum() or before in "_.$@":
                continue
            spec = match.group(2)
            if pattern is _JS_FROM:
                line_start = text.rfind("\n", max(0, match.start() - 300), match.start()) + 1
                head = text[max(line_start, match.start() - 300) : match.start()]
                if not _JS_FROM_HEAD.search(head) or (head.lstrip().startswith("}") and not code):
                    continue
            elif match.group(1) == '"' and spec.split("/")[0] in _GO_STDLIB:
                continue  # Go's import "fmt"
            name = _js_package(spec)
            if name:
                start = base + match.start(2)
                scan.add(PACKAGE, name, start, start + len(name))


# --- regions ---------------------------------------------------------------------------------


def _scan_inline_spans(scan: _Scan, text: str, base: int, mode: str) -> None:
    if "`" not in text:
        return
    for match in scan.each(_INLINE_CODE.finditer(text)):
        if _char(text, match.start() - 1) == "`":
            continue
        span = match.group(1)
        stripped = span.strip()
        if stripped.startswith("$ "):
            stripped = stripped[2:].lstrip()
        start = base + match.start(1) + span.find(stripped)
        if _inline_command(stripped):
            _add_command(scan, stripped, start)
            continue
        if re.match(r"(?:import|from)[ \t]", stripped):
            _scan_imports(scan, stripped, start, code=False)
            continue
        call = re.fullmatch(
            r"([A-Za-z_$][\w$]{0,60}(?:\.[A-Za-z_$][\w$]{0,60}){0,3})\(.*\)", stripped
        )
        if call:
            name = call.group(1)
            if (
                mode == "prose"
                and not name[:1].isupper()
                and not stripped.endswith("()")  # name() is found by _scan_calls
                and _function_name_ok(name)
                and not re.fullmatch(r"[\d\s,]+", stripped[len(name) + 1 : -1])  # vector(384)
            ):
                scan.add(FUNCTION, name, start, start + len(name))
            continue
        if (
            len(stripped) <= 80
            and re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)*", stripped)
            and stripped not in _NOT_CLASSES
            and stripped not in _OTHER_ERRORS
            and not stripped.endswith(_ERROR_SUFFIXES)
            and not stripped.endswith(_CLASS_SUFFIXES)  # found by _scan_identifiers
            and (
                _CLASS_BEFORE.search(text[max(0, match.start() - 20) : match.start()])
                or _CLASS_AFTER.match(text, match.end())
            )
        ):
            scan.add(CLASS, stripped, start, start + len(stripped))


def _scan_region(scan: _Scan, text: str, base: int, mode: str) -> None:
    """One region: ``prose`` (what people write), ``output`` (what tools print), ``code``."""
    code = mode == "code"
    _scan_special_files(scan, text, base, mode)
    _scan_urls(scan, text, base)
    _scan_files(scan, text, base, code=code)
    _scan_errors(scan, text, base, output=mode == "output")
    _scan_identifiers(scan, text, base)
    _scan_class_defs(scan, text, base)
    _scan_function_defs(scan, text, base, code)
    _scan_imports(scan, text, base, code)
    if code:
        return
    if mode == "prose":
        _scan_calls(scan, text, base)
    _scan_inline_spans(scan, text, base, mode)
    if _has(text, "$ ", "% ", "$\t", "%\t"):
        for match in scan.each(_PROMPT_LINE.finditer(text)):
            command = _command_of(match.group(1))
            if command:
                _add_command(scan, command, base + match.start(1) + match.group(1).find(command))
    if "Run shell command?" in text:
        for match in scan.each(_AIDER_RUN.finditer(text)):
            command = _command_of(match.group(1))
            if command:
                _add_command(scan, command, base + match.start(1) + match.group(1).find(command))


def _fenced(text: str) -> Iterator[tuple[int, int, str | None]]:
    """(start, end, language) pieces of ``text``; language None outside code fences."""
    position = 0
    while True:
        opening = _FENCE_OPEN.search(text, position)
        if not opening:
            break
        fence = opening.group(1)
        language = opening.group(2).lower().strip("{}.")
        body_start = min(opening.end() + 1, len(text))
        closing = re.compile(
            rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t\r]*$", re.M
        ).search(text, body_start)
        body_end = closing.start() if closing else len(text)
        if opening.start() > position:
            yield position, opening.start(), None
        yield body_start, max(body_end, body_start), language
        if not closing:
            return
        position = closing.end()
    if position < len(text):
        yield position, len(text), None


def _scan_text(scan: _Scan, text: str, base: int, mode: str, depth: int = 0) -> None:
    """Markdown-ish text: prose (or tool output) with fenced blocks by language."""
    if "```" not in text and "~~~" not in text:
        _scan_region(scan, text, base, mode)
        return
    for start, end, language in scan.each(_fenced(text), cost=10):
        piece = text[start:end]
        if language is None:
            _scan_region(scan, piece, base + start, mode)
        elif language in _SHELL_LANGS or language in _CONSOLE_LANGS:
            console = language in _CONSOLE_LANGS
            _scan_shell(scan, piece, base + start, console=console, commands=True)
        elif language in _PROSE_LANGS and depth < 2:
            _scan_text(scan, piece, base + start, mode, depth + 1)
        elif language in _OUTPUT_LANGS or language == "":
            _scan_region(scan, piece, base + start, "output")
        else:
            _scan_region(scan, piece, base + start, "code")


# ---------------------------------------------------------------------------------------------
# public API


def extract_from_text(text: str) -> list[Found]:
    """Entities in Markdown-ish prose: ``[(type, value, start, end), ...]`` by position."""
    scan = _Scan()
    if text:
        _scan_text(scan, text, 0, "prose")
    return scan.result()


_FILE_TOOLS = word_set(
    "edit write read multiedit notebookedit notebookread create str_replace_editor view "
    "view_file read_file write_file edit_file create_file apply_patch str_replace "
    "str_replace_based_edit_tool"
)
_WEB_TOOLS = word_set("webfetch websearch web_search web_fetch fetch browse browser")
_FILE_HEAD = re.compile(r"(?:Edit notebook|Edit|Write|Read|Create|View)[ \t]+(\S[^\n]*?)[ \t\r]*")
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file")
_FIRST_COMMAND_LINE = re.compile(r"^[ \t\r]*([^\s#][^\n]*)", re.M)


def _file_tool(scan: _Scan, content: str, lowered: str, extra: dict[str, Any]) -> None:
    if lowered == "apply_patch" or content.startswith("*** Begin Patch"):
        _scan_region(scan, content, 0, "code")
        return
    newline = content.find("\n")
    head = content if newline < 0 else content[:newline]
    match = _FILE_HEAD.fullmatch(head)
    path = ""
    if match:
        path = re.sub(r"[ \t]*\(all occurrences\)$", "", match.group(1))
        scan.add(FILE, path, match.start(1), match.start(1) + len(path))
    else:
        path = next((extra[k].strip() for k in _PATH_KEYS if isinstance(extra.get(k), str)), "")
        if path:
            scan.add(FILE, path, -1, -1)
    if newline < 0:
        return
    body, at = content[newline + 1 :], newline + 1
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if re.search(r"requirements[\w.-]*\.txt$", path):
        for line in scan.each(_LINES.finditer(body)):
            text = line.group().lstrip("+- ")
            if text and not text.startswith("#"):
                name = _package_from_word(text.split()[0], "py")
                if name:
                    name_at = at + line.start() + line.group().find(name)
                    scan.add(PACKAGE, name, name_at, name_at + len(name))
    elif ext in ("md", "mdx", "txt", "rst", "markdown"):
        _scan_text(scan, body, at, "prose")
    else:
        _scan_region(scan, body, at, "code")


def _tool_call(scan: _Scan, content: str, tool_name: str, metadata: dict[str, Any]) -> None:
    lowered = tool_name.lower()
    extra = metadata.get("input_extra")
    extra = extra if isinstance(extra, dict) else {}
    if is_shell_tool(tool_name):
        first = _FIRST_COMMAND_LINE.search(content)
        if first:
            command = _clip_command(first.group(1))
            scan.add(COMMAND, command, first.start(1), first.start(1) + len(command))
        _scan_shell(scan, content, 0, console=False, commands=False)
    elif lowered in _FILE_TOOLS:
        _file_tool(scan, content, lowered, extra)
    elif lowered in _WEB_TOOLS or "fetch" in lowered:
        _scan_urls(scan, content, 0)
        if not any(f[0] == URL for f in scan.found) and isinstance(extra.get("url"), str):
            scan.add(URL, extra["url"], -1, -1)
    else:
        _scan_text(scan, content, 0, "prose")


def extract_from_message(
    role: str, content: str, tool_name: str = "", metadata: dict[str, Any] | None = None
) -> list[Found]:
    """Entities of one message, as ``[(type, value, start, end), ...]`` by position.

    An assistant message with a ``tool_name`` is a tool call (its content rendered by the
    importers); a ``tool`` message is tool output; anything else is prose. Offsets index
    ``content``; an entity taken from ``metadata`` has ``start = end = -1``.
    """
    content = content if isinstance(content, str) else ""
    metadata = metadata if isinstance(metadata, dict) else {}
    scan = _Scan()
    if tool_name and role == "assistant":
        _tool_call(scan, content, tool_name, metadata)
    elif content:
        _scan_text(scan, content, 0, "output" if role == "tool" else "prose")
    return scan.result()


def context_of(text: str, start: int, end: int, width: int = CONTEXT_CHARS) -> str:
    """About ``width`` characters of ``text`` around ``[start, end)``, cut on word boundaries
    and on one line (whitespace runs become one space)."""
    if start < 0 or end > len(text) or start > end:
        return " ".join(text[: width * 2].split())[:width]
    room = max(width - (end - start), 40)
    left, right = start - room // 2, end + room - room // 2
    if left < 0:  # no room on the left: take it on the right, and the other way round
        left, right = 0, right - left
    if right > len(text):
        left, right = max(0, left - (right - len(text))), len(text)
    if left > 0:
        gap = re.search(r"\s", text[left:start])
        left = left + gap.end() if gap else start
    if right < len(text) and not text[right].isspace():
        tail = text[end:right]
        cut = max(tail.rfind(" "), tail.rfind("\n"), tail.rfind("\t"))
        right = end + cut if cut >= 0 else end
    return " ".join(text[left:right].split())


def extract_session(messages: Iterable[Any]) -> list[Extracted]:
    """The entities of a session, one per ``(type, normalized)``, in order of first appearance.

    ``messages``: objects (or dicts) with ``role``, ``content``, ``tool_name``, ``metadata``.
    ``count`` is the number of occurrences in the session, ``context`` and ``first_index``
    (index in ``messages``) those of the first one. A Python "package" that is the session's
    own code is dropped: ``from dataset import x`` when ``dataset.py`` is mentioned, ``from
    sessions.models import X`` when a relative path under ``sessions/`` is.
    """
    entities: dict[tuple[str, str], Extracted] = {}
    for index, message in enumerate(messages):
        content = attr(message, "content", None)
        content = content if isinstance(content, str) else ""
        found = extract_from_message(
            attr(message, "role"),
            content,
            attr(message, "tool_name"),
            attr(message, "metadata", None),
        )
        for type, value, start, end in found:
            key = (type, normalize(type, value))
            if not key[1]:
                continue
            entity = entities.get(key)
            if entity is None:
                entities[key] = Extracted(
                    type=type,
                    value=value[:MAX_VALUE],
                    normalized=key[1],
                    context=context_of(content, start, end),
                    count=1,
                    first_index=index,
                )
            else:
                entity.count += 1
    local: set[str] = set()
    for type, normalized in entities:
        if type != FILE:
            continue
        parts = [p for p in normalized.split("/") if p not in ("", ".", "..", "~")]
        if not parts or {"node_modules", "site-packages", "dist-packages"} & set(parts):
            continue
        if parts[-1].endswith(".py"):
            local.add(parts[-1][:-3])
        if not normalized.startswith(("/", "~")) and not re.match(r"[a-z]:/", normalized):
            local.update(parts[:-1])
    local_keys = {_PEP503.sub("-", name) for name in local}
    return [
        entity
        for (type, normalized), entity in entities.items()
        if not (type == PACKAGE and normalized in local_keys)
    ]


__all__ = [
    "CLASS",
    "COMMAND",
    "ERROR",
    "FILE",
    "FUNCTION",
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
