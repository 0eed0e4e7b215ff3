"""FILE: paths with a known extension or a directory part, and the paths named by diff
headers, apply_patch, aider's console and pytest node ids."""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import CLASS, FILE, FUNCTION, MAX_VALUE
from sessions.enrich.entities.scan import Scan, char, has, run_before
from sessions.enrich.text import word_set

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
_PATH_RUN = re.compile(r"(?<![\w.~/\\+-])[\w~+-]*+[./\\][\w.~/\\+-]*+")
_KNOWN_NAME_RE = re.compile(r"\b(?:" + "|".join(sorted(_KNOWN_NAMES)) + r")(?:\.[\w-]{1,20})?\b")
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


def has_known_ext(name: str) -> bool:
    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return "." in base.lstrip(".") and base.rsplit(".", 1)[1].lower() in _EXTENSIONS


def _file_value(token: str, before: str, after: str, code: bool) -> str:
    """The path ``token`` names (cleaned of surrounding punctuation), or "" if none."""
    if before in "@$}%…" or after in "@…":
        return ""  # e-mail, $VAR/x, ${X}/y, elided text
    if after == "(" and not (re.search(r"[/\\].", token) and has_known_ext(token)):
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


def scan_files(scan: Scan, text: str, base: int, code: bool) -> None:
    for match in scan.each(_PATH_RUN.finditer(text)):
        start, end = match.span()
        token = match.group()
        if len(token) > 2 * MAX_VALUE:
            continue
        lead = len(token) - len(token.lstrip("+-"))
        before = " " if lead else char(text, start - 1)
        if (
            before == ":"
            and start >= 2
            and text[start - 2].isalpha()
            and token[0] in "\\/"
            and char(text, start - 3) not in _PATH_CHARS
        ):  # C:\Users\x
            start, token, before = start - 2, text[start - 2 : end], char(text, start - 3)
        if "/" not in token and text[max(0, start - 7) : start].endswith(("from ", "import ")):
            continue  # from django.conf import settings: a module, not a file
        value = _file_value(token, before, char(text, end), code)
        if not value:
            continue
        value_start = start + lead
        value_end = value_start + len(value)
        if not scan.blocked(base + value_start, base + value_end):
            scan.add(FILE, value, base + value_start, base + value_end)
    if "file" in text:
        for match in scan.each(_KNOWN_NAME_RE.finditer(text)):
            start, end = match.span()
            if char(text, start - 1) in _PATH_CHARS or char(text, end) in _PATH_CHARS:
                continue  # part of a longer path, found above
            if code and char(text, start - 1) not in _QUOTES:
                continue
            scan.add(FILE, match.group(), base + start, base + end)


def scan_special_files(scan: Scan, text: str, base: int, mode: str) -> None:
    """Paths named by aider's console, diff headers, apply_patch, and pytest node ids."""
    patterns = []
    if has(text, "+++ b/", "--- a/", "diff --git a/", "*** "):
        patterns.append(_DIFF_HEADER)
    if mode != "code" and has(text, "Applied edit to ", " to the chat"):
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
        length = run_before(text, match.start(), _PATH_REVERSED, 300)
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
