"""COMMAND: reading shell lines (comments, assignments, here-documents) and recognising a
command in an inline code span."""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import COMMAND
from sessions.enrich.entities.packages import scan_installs
from sessions.enrich.entities.scan import Scan
from sessions.enrich.text import word_set

MAX_COMMAND = 200  # a command line is cut here (on a word boundary when there is one)

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
_SHELL_KEYWORDS = word_set(
    "if then else elif fi for while until do done case esac function select in return exit "
    "local declare readonly set unset shift break continue true false trap wait eval exec "
    "{ } ( ) [ [[ ]] ;; EOF"
)
PROMPT_LINE = re.compile(r"^[ \t]*[$%][ \t]+([A-Za-z_./~][^\n]{0,1000})", re.M)
AIDER_RUN = re.compile(r"^([^\n]{1,300})\nRun shell command\?", re.M)
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w{0,30})\1")
_ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_]\w*=[^\s'\"$()`]*[ \t]+)+")


def _strip_comment(line: str) -> str:
    """``make run   # start it`` -> ``make run`` (a `` #`` outside quotes starts a comment)."""
    position = line.find(" #")
    while position >= 0:
        before = line[:position]
        if before.count("'") % 2 == 0 and before.count('"') % 2 == 0:
            return before.rstrip()
        position = line.find(" #", position + 2)
    return line


def clip_command(line: str) -> str:
    line = _strip_comment(line.strip()) if " #" in line else line.strip()
    if len(line) <= MAX_COMMAND:
        return line
    cut = line[:MAX_COMMAND]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_COMMAND // 2 else cut).rstrip()


def add_command(scan: Scan, command: str, start: int) -> None:
    value = clip_command(command)
    scan.add(COMMAND, value, start, start + len(value))
    scan_installs(scan, command, start)


def command_of(line: str) -> str:
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


def inline_command(span: str) -> bool:
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


def heredocs(scan: Scan, text: str) -> list[tuple[int, int]]:
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
