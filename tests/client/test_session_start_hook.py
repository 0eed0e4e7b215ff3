"""`memoryapp context --hook` as Claude Code's SessionStart hook: the project's context as
`additionalContext` when enabled, and never a failed start."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memories.capture.record import MemoryDraft, record
from memoryapp_client.cli import main
from memoryapp_client.hooks import session_start_hook
from tests.conftest import REPO_ROOT

live = pytest.mark.django_db(transaction=True)

# What Claude Code sends a SessionStart hook on stdin.
START = {
    "session_id": "abc123",
    "transcript_path": "/home/me/.claude/projects/-home-me-app/abc123.jsonl",
    "cwd": "/home/me/app",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def run_hook(monkeypatch, capsys, stdin: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["context", "--hook"])
    out, err = capsys.readouterr()
    return code, out, err


@live
def test_off_by_default_it_prints_nothing(memory, monkeypatch, capsys):
    assert run_hook(monkeypatch, capsys, json.dumps(START)) == (0, "", "")


@live
@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_enabled_it_gives_claude_code_the_projects_context(
    memory, project, monkeypatch, capsys, source
):
    finding = record(
        project, MemoryDraft(type="finding", content="The login rate limit is off in staging")
    ).memory
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", "1")
    code, out, err = run_hook(monkeypatch, capsys, json.dumps({**START, "source": source}))
    assert code == 0 and err == ""
    output = json.loads(out)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert f"## Open Findings\n- [{finding.public_id}] The login rate limit" in context
    latest = context.split("## Latest Sessions\n\n", 1)[1]
    # Every agent's sessions: the project's context, not one agent's.
    assert "Architect (Winston)" in latest and "Dev (Amelia)" in latest


@live
def test_enabled_with_nothing_known_yet_it_prints_nothing(agent_env, monkeypatch, capsys):
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", "1")
    assert run_hook(monkeypatch, capsys, json.dumps(START)) == (0, "", "")


def hook_process(stdin: str, **env: str) -> subprocess.CompletedProcess:
    """The hook as Claude Code runs it: a process with the JSON on its stdin."""
    return subprocess.run(
        [sys.executable, "-m", "memoryapp_client.cli", "context", "--hook"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        env={**os.environ, "MEMORYAPP_CONTEXT_ON_START": "1", **env},
    )


@pytest.mark.parametrize(
    ("stdin", "says"),
    [("not json", "not JSON"), ("[1, 2]", "expected a JSON object"), ("", None)],
)
def test_bad_input_never_fails_the_start(stdin, says, closed_port_url):
    done = hook_process(stdin, MEMORYAPP_URL=closed_port_url, MEMORYAPP_TOKEN="mem_x")
    assert done.returncode == 0 and done.stdout == ""
    # No input at all is treated as an empty event: then the server is asked (and is down).
    assert (says or "cannot reach memoryapp") in done.stderr


def test_a_server_that_is_down_never_fails_the_start(closed_port_url):
    done = hook_process(json.dumps(START), MEMORYAPP_URL=closed_port_url, MEMORYAPP_TOKEN="mem_x")
    assert (done.returncode, done.stdout) == (0, "")
    assert "memoryapp: no past context" in done.stderr and "cannot reach" in done.stderr
    assert "None" not in done.stderr  # the hook names no agent, and says so by silence


def test_no_token_never_fails_the_start():
    env = {key: value for key, value in os.environ.items() if key != "MEMORYAPP_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "memoryapp_client.cli", "context", "--hook"],
        input=json.dumps(START),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        env={**env, "MEMORYAPP_CONTEXT_ON_START": "1"},
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert "MEMORYAPP_TOKEN" in done.stderr


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    stdin=st.one_of(
        st.text(),
        st.recursive(
            st.none() | st.booleans() | st.text(),
            lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        ).map(json.dumps),
    )
)
def test_whatever_arrives_on_stdin_the_hook_never_raises(stdin, monkeypatch, closed_port_url):
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", "1")
    monkeypatch.setenv("MEMORYAPP_URL", closed_port_url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", "mem_x")
    monkeypatch.setattr("memoryapp_client.api.time.sleep", lambda seconds: None)
    assert session_start_hook(stdin) == ""
