"""What an agent's tool calls did: the files they edited, the commands they ran, and the
status of a call's result.

Edits come from ``Edit``/``Write``-style calls, ``apply_patch`` patches and fields like
``path:``; commands from shell calls (``transcripts.shell_tools``), ranked so that test,
build, install and commit commands come first and read-only ones (``ls``, ``cat``, ``sed
-n``) last. A test run is a shell call whose command runs a test tool (pytest, jest, go test,
cargo test, ...); its status is read from the result: pytest/jest/cargo/unittest counts
first, then ``FAIL``/``PASS`` markers, then the exit code, then ``is_error``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sessions.enrich.transcript import attr, call_id, metadata_of

# Tools that only look (reads, searches, plans): named only when nothing else was done.
LOW_SIGNAL_TOOLS = {
    "read", "read_file", "view", "view_file", "glob", "grep", "ls", "list", "list_dir",
    "list_files", "search", "search_files", "todowrite", "todoread", "think", "skill",
    "webfetch", "websearch", "web_search", "fetch", "find", "codebase_search", "file_search",
    "update_plan", "task", "agent", "exitplanmode",
}  # fmt: skip
# Look-ups (get_user_details) are named after the tools that change something.
LOOKUP_TOOL = re.compile(
    r"^(?:get|search|list|find|fetch|read|lookup|look_up|query|calculate|check|view|show"
    r"|describe|retrieve|load)(?:_|$)",
    re.I,
)
_EDIT_HEAD = re.compile(r"^(?:Edit notebook|Edit|Write|Create|MultiEdit)\s+(\S+)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File:\s*(\S+)", re.M)
_PATH_FIELD = re.compile(r"^(?:path|file_path|file|filename|target_file):\s*(\S+)", re.M)
TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|karma|rspec|phpunit"
    r"|ctest|unittest|nosetests|(?:go|cargo|npm|pnpm|yarn|bun|deno|mvn|gradle|gradlew"
    r"|dotnet|mix|swift|flutter|dart|make|just|manage\.py|django-admin|rake|bundle exec rake)"
    r"\s+(?:run\s+)?(?:-\S+\s+)*test\w*|npm t\b)",
)
TEST_TOOL = re.compile(r"test", re.I)
_READ_ONLY_COMMAND = re.compile(
    r"^(?:ls|ll|cat|head|tail|less|more|sed -n|grep|rg|ag|find|fd|pwd|echo|printf|cd|wc"
    r"|tree|which|type|file|stat|du|df|env|printenv|whoami|date|true|nl|awk|sort|uniq"
    r"|git (?:status|log|diff|show|branch|remote|config --get|rev-parse|blame)|jq|bat)\b"
)
_SIGNIFICANT_COMMAND = re.compile(
    r"^(?:git (?:commit|push|merge|rebase|checkout -b|switch -c|tag|apply|revert|cherry-pick)"
    r"|(?:pip|pip3|uv|poetry|npm|pnpm|yarn|bun|cargo|go|apt|apt-get|brew|gem|composer)"
    r" (?:install|add|remove|uninstall|build|publish|run|sync|get|i)\b"
    r"|make\b|docker|kubectl|terraform|alembic|ruff|black|mypy|eslint|prettier|tsc|cmake"
    r"|python|python3|node|npx|uvx|cp|mv|rm|mkdir|chmod|curl|wget)"
)
_COUNTS = re.compile(
    r"(\d+)\s+(passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|pending"
    r"|todo|tests? passed|tests? failed)\b",
    re.I,
)
_EXIT_CODE = re.compile(
    r"(?:exited with code|exit code:?|exit status:?|returncode[=:]?)\s*(-?\d+)", re.I
)


def command_line(content: str) -> str:
    """The first command of a shell call (without a leading ``cd dir &&``)."""
    for line in content.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            line = re.sub(r"^cd\s+\S+\s*(?:&&|;)\s*", "", line)
            return line
    return ""


def edited_files(tool_name: str, content: str) -> list[str]:
    """The files an edit, write or patch call changes; [] for other calls."""
    head = content[:2000]
    match = _EDIT_HEAD.match(head)
    if match:
        return [match.group(1)]
    patched = _PATCH_FILE.findall(head if "*** Begin Patch" not in content else content[:20000])
    if patched:
        return patched
    name = tool_name.lower()
    if any(k in name for k in ("edit", "write", "create", "replace", "patch", "insert")):
        field = _PATH_FIELD.search(head)
        if field:
            return [field.group(1)]
    return []


def command_rank(command: str) -> int:
    """0 tests, 1 builds/installs/commits/file operations, 2 other, 3 scripts, 4 read-only."""
    if TEST_COMMAND.search(command):
        return 0
    if _SIGNIFICANT_COMMAND.match(command):
        return 1
    if _READ_ONLY_COMMAND.match(command):
        return 4
    if re.match(r"^(?:[A-Za-z_]\w*=|if |for |while |case |\{|\(|export )", command):
        return 3
    return 2


def result_status(result: Any, *, test_run: bool) -> tuple[str, str]:
    """(status, detail) of a tool result: status in passed/failed/error (tests) or ok/failed/
    error (other calls); ``("", "")`` when nothing tells."""
    meta = metadata_of(result)
    content = str(attr(result, "content") or "")
    tail = content[-3000:]
    ok_word, fail_word = ("passed", "failed") if test_run else ("ok", "failed")
    if test_run:
        counts: dict[str, int] = {}
        for number, label in _COUNTS.findall(tail):
            key = label.lower().split()[-1].rstrip("s")
            key = {"passe": "passed", "faile": "failed"}.get(key, key)
            if key in ("passed", "failed", "error"):
                counts[key] = int(number)
        detail = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if v)
        if counts.get("failed"):
            return "failed", detail
        if counts.get("error"):
            return "error", detail
        if counts.get("passed"):
            return "passed", detail
        if re.search(r"^(?:FAIL|FAILED|--- FAIL)\b|test result: FAILED|\bFAILED \(", tail, re.M):
            return "failed", ""
        if re.search(r"^(?:PASS|OK|ok\s)\b|test result: ok|\bAll tests passed", tail, re.M):
            return "passed", ""
    code: int | None = None
    for key in ("exit_code", "returncode", "exitCode"):
        if isinstance(meta.get(key), int):
            code = meta[key]
            break
    if code is None:
        found = _EXIT_CODE.search(content[:400]) or _EXIT_CODE.search(tail)
        if found:
            code = int(found.group(1))
    if code is not None:
        return (ok_word, "") if code == 0 else (fail_word, f"exit {code}")
    if meta.get("is_error") is True or meta.get("status") in ("error", "failed"):
        return "error", ""
    if re.match(r"^\s*(?:Error|Exception|Traceback|fatal)\b", content):
        return "error", ""
    if meta.get("is_error") is False or meta.get("status") in ("ok", "success", "completed"):
        return ok_word, ""
    return "", ""


def find_result(messages: Sequence[Any], call_pos: int) -> Any | None:
    """The result of the call at ``call_pos``: the next tool message with its call id, or
    the first one without an id."""
    wanted = call_id(messages[call_pos])
    first_tool = None
    for pos in range(call_pos + 1, min(len(messages), call_pos + 200)):
        message = messages[pos]
        if attr(message, "role") != "tool":
            continue
        result_id = call_id(message) if wanted else ""
        if wanted and result_id == wanted:
            return message
        if first_tool is None and not result_id:
            first_tool = message
    return first_tool
