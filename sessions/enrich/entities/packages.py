"""PACKAGE: Python and JavaScript imports (not stdlib or Node builtins, not relative) and the
arguments of ``pip install``/``uv add``/``npm install``/``cargo add``/``go get``/..."""

from __future__ import annotations

import re
import sys

from sessions.enrich.entities.code_names import PY_KEYWORDS
from sessions.enrich.entities.files import has_known_ext
from sessions.enrich.entities.kinds import PACKAGE
from sessions.enrich.entities.scan import Scan, has, word_starts
from sessions.enrich.text import word_set

MAX_INSTALL_LINE = 4_000  # longer lines are not parsed for installed packages

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
_PY_IMPORT = re.compile(
    r"^[ \t]*(?:\d+(?:→|\t))?(?:[+-][ \t]*|>>>[ \t]+)?(import|from)[ \t]+([^\n]{1,300})", re.M
)
_JS_REQUIRE = re.compile(r"require[ \t]*\([ \t]*(['\"])([^'\"\n]{1,214})\1[ \t]*\)")
# import x from 'y' / export { a } from 'y' / } from 'y' (a multi-line import's last line).
_JS_FROM = re.compile(r"from[ \t]+(['\"])([^'\"\n]{1,214})\1")
_JS_FROM_HEAD = re.compile(r"(?:^|[\s;])(?:import|export)[ \t]|^[ \t]*}")
# import 'y' / import('y')
_JS_BARE_IMPORT = re.compile(r"import[ \t]*(?:\([ \t]*)?(['\"])([^'\"\n]{1,214})\1")
INSTALL_LINE = re.compile(r"^[^\n]{0,4000}?\b(?:install|add|get|require|package|i)\b", re.M)
_INSTALL_WORD = re.compile(r"\b(?:install|add|get|require|package|i)\b")
_SHELL_OPERATORS = re.compile(r"&&|\|\||[;|&<>()`#]|\$\(")
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


def package_from_word(word: str, kind: str) -> str:
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
    if has_known_ext(word):
        return ""  # requirements.txt, a wheel, an archive
    return word


def scan_installs(scan: Scan, line: str, base: int) -> None:
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
                    name = package_from_word(word, kind)
                    if name:
                        name_at = at + max(word.find(name), 0)
                        scan.add(PACKAGE, name, base + name_at, base + name_at + len(name))
            break


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
    if not name or not _PACKAGE_NAME.fullmatch(name) or has_known_ext(name):
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


def scan_imports(scan: Scan, text: str, base: int, code: bool) -> None:
    if "import" in text:
        for match in scan.each(_PY_IMPORT.finditer(text)):
            for module, at in _python_modules(match.group(1), match.group(2)):
                top = module.split(".", 1)[0]
                if top and top not in _STDLIB and top not in PY_KEYWORDS:
                    start = base + match.start(2) + at
                    scan.add(PACKAGE, top, start, start + len(top))
    patterns = []
    if "require" in text:
        patterns.append(_JS_REQUIRE)
    if "import" in text:
        patterns.append(_JS_BARE_IMPORT)
    if "from" in text and has(text, "import", "export", "}"):
        patterns.append(_JS_FROM)
    for pattern, match in word_starts(scan, text, patterns, "_.$@"):
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
