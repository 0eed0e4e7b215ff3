"""A shell call is one concept from import to summary: the importer renders it as its command
line, the entity extractor finds that line as a COMMAND, and the summary says it was run.

The entity extractor and the summary once had a detector each, and a tool named only
"...command" (``runCommand``) was a COMMAND entity but a "used runCommand" in the summary.
"""

from __future__ import annotations

import json

import pytest

from sessions.enrich.entities import COMMAND, extract_session
from sessions.enrich.summary import summarize
from transcripts.formats.openai_chat import parse_openai_chat
from transcripts.shell_tools import is_shell_tool


def openai_session(tool_name: str, command: str, output: str) -> list:
    messages = [
        {"role": "user", "content": "Please run the frontend tests and tell me if they pass."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": tool_name, "arguments": json.dumps({"command": command})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": "All frontend tests pass now."},
    ]  # fmt: skip
    [session] = parse_openai_chat(json.dumps(messages).encode())
    return session.messages


@pytest.mark.parametrize("tool_name", ["runCommand", "Bash", "exec_command", "run_in_terminal"])
def test_a_shell_call_is_a_command_entity_and_a_ran_line(tool_name):
    messages = openai_session(tool_name, "npm test -- --watch=false", "Tests: 12 passed")
    assert messages[1].content == "npm test -- --watch=false"  # rendered as the command

    commands = [e.value for e in extract_session(messages) if e.type == COMMAND]
    summary = summarize(messages)

    assert commands == ["npm test -- --watch=false"]
    assert "ran `npm test -- --watch=false`" in summary
    assert "tests passed (`npm test -- --watch=false`, 12 passed)" in summary
    assert f"used {tool_name}" not in summary


def test_a_tool_that_is_not_a_shell_is_neither():
    messages = openai_session("get_weather", "Paris", '{"temp": 21}')
    assert messages[1].content == "command: Paris"

    assert not [e for e in extract_session(messages) if e.type == COMMAND]
    summary = summarize(messages)
    assert "ran `" not in summary and "used get_weather" in summary


@pytest.mark.parametrize(
    ("name", "shell"),
    [
        ("bash", True),
        ("container.exec", True),
        ("BashOutput", True),
        ("run_shell_command", True),
        ("RunCommand", True),
        ("execute_bash", True),
        ("str_replace_based_edit_tool", False),
        ("read_file", False),
        ("get_user_details", False),
    ],
)
def test_is_shell_tool(name, shell):
    assert is_shell_tool(name) is shell
