"""The `memoryapp` command against a live server: uploads, the Claude Code hook, errors."""

import io
import json
import subprocess
import sys

import pytest

from memoryapp_client import MemoryClient, MemoryError
from memoryapp_client.cli import main
from sessions.models import Session
from teams.models import ApiToken
from tests.conftest import REPO_ROOT


@pytest.fixture
def token(project):
    return ApiToken.issue(project, name="cli")[1]


@pytest.fixture
def cli_env(monkeypatch, live_server, token):
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", token)


@pytest.mark.django_db(transaction=True)
def test_capture_uploads_files_and_folders(cli_env, shared_dir, capsys):
    assert main(["capture", str(shared_dir / "samples" / "claude_code")]) == 0
    out = capsys.readouterr().out
    assert "agentic-wallet.jsonl: 1 session(s)" in out
    assert "raze.jsonl: 1 session(s)" in out
    assert Session.objects.filter(source_format="claude_code").count() == 2
    # Again: nothing new.
    assert main(["capture", str(shared_dir / "samples" / "claude_code" / "raze.jsonl")]) == 0
    assert "0 new message(s)" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_a_folder_s_files_in_no_known_format_are_passed_over_but_a_named_one_fails(
    cli_env, shared_dir, tmp_path, capsys
):
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "README.md").write_text("# Our transcripts\n\nKept here for the team.\n")
    (folder / "broken.jsonl").write_text('{"type": "user", "message": {"content": "hi"\n')
    (folder / "raze.jsonl").write_bytes(
        (shared_dir / "samples" / "claude_code" / "raze.jsonl").read_bytes()
    )
    # The README is no transcript: passed over. A broken file is still a failure.
    assert main(["capture", str(folder)]) == 1
    captured = capsys.readouterr()
    assert "raze.jsonl: 1 session(s)" in captured.out
    assert "README.md: skipped, not a transcript" in captured.err
    assert "broken.jsonl: HTTP 400" in captured.err
    (folder / "broken.jsonl").unlink()
    assert main(["capture", str(folder)]) == 0
    capsys.readouterr()
    # Named on its own, the README is an error, and the message has no empty fields.
    assert main(["capture", str(folder / "README.md")]) == 1
    err = capsys.readouterr().err
    assert "README.md: HTTP 400: cannot tell the format" in err
    assert "None" not in err


@pytest.mark.django_db(transaction=True)
def test_works_as_a_claude_code_session_end_hook(cli_env, shared_dir, monkeypatch, capsys):
    transcript = shared_dir / "samples" / "claude_code" / "agentic-wallet.jsonl"
    hook_input = {
        "session_id": "abc",
        "transcript_path": str(transcript),
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(hook_input)))
    assert main(["capture", "--hook"]) == 0
    assert Session.objects.filter(source_format="claude_code").count() == 1
    assert "1 session(s)" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_a_hook_never_fails_the_agent_even_when_the_server_says_no(
    live_server, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", "mem_wrong")
    broken = tmp_path / "t.jsonl"
    broken.write_text("{}\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"transcript_path": str(broken)})))
    assert main(["capture", "--hook"]) == 0
    assert "HTTP 401" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_client_reports_server_errors_with_their_detail(cli_env):
    client = MemoryClient()
    with pytest.raises(MemoryError) as caught:
        client.import_bytes(b"{not json", format="claude_code")
    assert caught.value.status == 400
    assert "line 1" in str(caught.value)
    assert caught.value.code == "MEM_E102" and "MEM_E102" not in str(caught.value)


@pytest.mark.django_db(transaction=True)
def test_delete_session_needs_the_delete_permission(cli_env, monkeypatch, project):
    session_id = MemoryClient().capture(
        agent_name="dev", messages=[{"role": "user", "content": "scratch"}]
    )["id"]
    with pytest.raises(MemoryError) as caught:
        MemoryClient().delete_session(session_id)  # read and write only
    assert caught.value.status == 403 and caught.value.code == "MEM_E112"
    assert "lacks the 'delete' permission" in str(caught.value)
    _, deleter = ApiToken.issue(project, permissions=["delete"])
    monkeypatch.setenv("MEMORYAPP_TOKEN", deleter)
    assert MemoryClient().delete_session(session_id, reason="scratch run") is True
    session = Session.objects.get(public_id=session_id)
    assert session.deleted_at is not None and session.delete_reason == "scratch run"
    assert MemoryClient().delete_session("2025-01-15-nobody-000000") is False


def test_without_a_token_it_says_how_to_make_one(monkeypatch):
    monkeypatch.delenv("MEMORYAPP_TOKEN", raising=False)
    with pytest.raises(MemoryError, match="create_api_token"):
        MemoryClient()


def test_the_console_script_has_helpful_help():
    result = subprocess.run(
        [sys.executable, "-m", "memoryapp_client.cli", "capture", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--hook" in result.stdout and "SessionEnd" in result.stdout


@pytest.mark.django_db(transaction=True)
def test_output_piped_into_a_reader_that_stops_early_is_no_traceback(memory):
    """`memoryapp sessions list --json | head`: the reader closes the pipe, and the command
    stops quietly rather than printing a BrokenPipeError traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryapp_client.cli", "sessions", "list", "--json"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # before it writes: its first write finds no reader
    stderr = process.stderr.read()
    assert process.wait(timeout=60) != 0  # it could not say everything
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr


def test_the_package_runs_as_the_command():
    """`python -m memoryapp_client` is `memoryapp`, for a checkout without the console script
    on the PATH (the MCP configs of a bare venv)."""
    result = subprocess.run(
        [sys.executable, "-m", "memoryapp_client", "sessions", "list", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "--all-projects" in result.stdout
