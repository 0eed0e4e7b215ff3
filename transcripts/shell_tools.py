"""Which tool calls run shell commands, by the tool's name.

The importers render such a call as its command line (``importers/_render.py``), and
enrichment reads that line back: as a COMMAND entity (``sessions/enrich/entities``) and as a
"ran …" action in the summary (``sessions/enrich/summary``). One test, so the three agree.
"""

from __future__ import annotations

# Names (lower-cased) of the shell tools of known agents.
SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "exec",
        "exec_command",
        "local_shell",
        "container.exec",
        "run_command",
        "run_shell_command",
        "execute_command",
        "terminal",
        "run_terminal_cmd",
        "powershell",
    }
)
# Parts of the names of other agents' shell tools (BashOutput, runInTerminal, RunCommand).
_SHELL_HINTS = ("bash", "shell", "exec", "terminal", "command")


def is_shell_tool(name: str) -> bool:
    """True when a tool called ``name`` runs a shell command."""
    lowered = name.lower()
    return lowered in SHELL_TOOLS or any(hint in lowered for hint in _SHELL_HINTS)
