"""The hooks (docs/mcp.md) against a live server: context at start (never failing the agent) and
capture at exit (never losing the conversation silently)."""

from __future__ import annotations

import logging
import time

import pytest

from memories.capture.record import MemoryDraft, record
from memoryapp_client import CaptureError, MemoryClient, on_agent_exit, on_agent_start
from memoryapp_client.cli import main
from sessions.models import Session
from tests.client.conftest import day_of, embed_all

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only

LOG = (
    "User: The nightly backup job to S3 fails with AccessDenied since Monday.\n\n"
    "Assistant: The IAM role lost s3:PutObject on the backups bucket; I restored the "
    "policy in infra/iam.tf and re-ran the backup, which now completes.\n"
)


# -- on_agent_start ------------------------------------------------------------------------


@live
def test_start_hook_is_off_by_default(memory, caplog):
    with caplog.at_level(logging.WARNING):
        assert on_agent_start("architect", "security", "authentication") == ""
    assert caplog.records == []


@live
@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_start_hook_gives_seed_000_markdown_when_enabled_by_the_environment(
    memory, monkeypatch, value
):
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", value)
    markdown = on_agent_start("architect", "security", "how did we handle authentication?")
    assert markdown.startswith("## Relevant Past Discussions\n\n### Session: ")
    assert f"### Session: {day_of(memory['auth'])} - Architect (Winston) - security" in markdown
    assert "JWT" in markdown


@live
def test_start_hook_enabled_by_argument_says_where_the_work_stands(memory, monkeypatch, project):
    decision = record(
        project, MemoryDraft(type="decision", content="Ship releases on Tuesdays only")
    ).memory
    finding = record(
        project,
        MemoryDraft(
            type="finding", content="The release job leaks a registry token", resolution="open"
        ),
    ).memory
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", "0")
    assert on_agent_start("dev", "release") == ""  # "0" means off
    markdown = on_agent_start("dev", "release", enabled=True)
    assert f"## Decisions\n- [{decision.public_id}] Ship releases on Tuesdays only" in markdown
    assert f"## Open Findings\n- [{finding.public_id}] The release job leaks" in markdown
    latest = markdown.split("## Latest Sessions\n\n", 1)[1]
    assert "Dev (Amelia) - release" in latest
    assert "Architect" not in latest  # only this agent's sessions
    assert on_agent_start("dev", "release", enabled=False) == ""


@live
def test_start_hook_returns_nothing_when_nothing_is_relevant(memory, monkeypatch):
    monkeypatch.setenv("MEMORYAPP_CONTEXT_ON_START", "1")
    assert on_agent_start("architect", query="quantum chromodynamics lattice gauge") == ""


def test_start_hook_never_fails_when_the_server_is_down(monkeypatch, closed_port_url, caplog):
    monkeypatch.setenv("MEMORYAPP_URL", closed_port_url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", "mem_whatever")
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="memoryapp_client"):
        assert on_agent_start("architect", "security", enabled=True) == ""
    assert time.monotonic() - started < 5
    assert "cannot reach memoryapp" in caplog.text


def test_start_hook_never_fails_without_a_token(monkeypatch, caplog):
    monkeypatch.delenv("MEMORYAPP_TOKEN", raising=False)
    with caplog.at_level(logging.WARNING, logger="memoryapp_client"):
        assert on_agent_start("architect", enabled=True) == ""
    assert "MEMORYAPP_TOKEN" in caplog.text


@live
def test_start_hook_never_fails_when_the_server_says_no(memory, monkeypatch, caplog, agent_token):
    monkeypatch.setenv("MEMORYAPP_TOKEN", "mem_wrong")
    with caplog.at_level(logging.WARNING, logger="memoryapp_client"):
        assert on_agent_start("architect", enabled=True) == ""
    assert "HTTP 401" in caplog.text

    caplog.clear()
    monkeypatch.setenv("MEMORYAPP_TOKEN", agent_token)
    with caplog.at_level(logging.WARNING, logger="memoryapp_client"):
        assert on_agent_start("architect", enabled=True, max_tokens=1) == ""
    assert "max_tokens" in caplog.text


# -- on_agent_exit -------------------------------------------------------------------------


@live
def test_exit_hook_captures_the_raw_log_and_search_finds_it(agent_env, project, capsys):
    session_id = on_agent_exit("devops", "Rex", "incident", "infra", LOG, topics="backup,s3")
    session = Session.objects.get(public_id=session_id)
    assert session.project == project
    assert (session.agent_name, session.agent_persona, session.workflow) == (
        "devops",
        "Rex",
        "incident",
    )
    assert session.message_count == 2 and session.topics == ["backup", "s3"]
    assert session.metadata["project_name"] == "infra"
    assert session.external_id.startswith("hook-")

    embed_all()
    assert main(["search", "backup fails with AccessDenied", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[1] == session_id
    found = MemoryClient().search("IAM policy for the backups bucket", mode="semantic")
    assert found["results"][0]["session"]["id"] == session_id


@live
def test_exit_hook_captures_a_list_of_messages(agent_env):
    messages = [
        {"role": "user", "content": "Rename the Billing class"},
        {"role": "assistant", "content": "Renamed it to Invoicing.", "author": "claude"},
    ]
    session_id = on_agent_exit("dev", "Amelia", "refactor", "", messages, title="Rename")
    session = Session.objects.get(public_id=session_id)
    assert session.message_count == 2 and session.title == "Rename"
    assert session.messages.order_by("seq").last().author == "claude"
    assert "project_name" not in session.metadata


@live
def test_exit_hook_failure_keeps_the_conversation_for_a_retry(
    agent_env, closed_port_url, no_backoff
):
    with pytest.raises(CaptureError) as caught:
        on_agent_exit(
            "devops", "Rex", "incident", "infra", LOG, client=MemoryClient(url=closed_port_url)
        )
    error = caught.value
    assert "was NOT saved" in str(error) and "cannot reach memoryapp" in str(error)
    assert error.payload["conversation"] == LOG
    # Nothing lost: the payload is the capture, and retrying it is idempotent.
    first = MemoryClient().capture(**error.payload)
    again = MemoryClient().capture(**error.payload)
    assert first["id"] == again["id"]
    assert Session.objects.get().message_count == 2


@live
def test_exit_hook_reports_what_the_server_refused(agent_env):
    with pytest.raises(CaptureError) as caught:
        on_agent_exit("devops", "Rex", "incident", "someone/else", LOG)
    assert caught.value.status == 400
    assert "belongs to project" in str(caught.value)
    assert Session.objects.count() == 0

    with pytest.raises(CaptureError, match="HTTP 400: agent_name"):
        on_agent_exit("", "Rex", "incident", "infra", LOG)


def test_exit_hook_without_a_token_raises_instead_of_dropping_the_log(monkeypatch):
    monkeypatch.delenv("MEMORYAPP_TOKEN", raising=False)
    with pytest.raises(CaptureError, match=r"NOT saved.*MEMORYAPP_TOKEN") as caught:
        on_agent_exit("devops", "Rex", "incident", "infra", LOG)
    assert caught.value.payload["conversation"] == LOG


def test_exit_hook_rejects_a_conversation_of_the_wrong_type():
    with pytest.raises(TypeError, match="raw text or a list of message dicts"):
        on_agent_exit("devops", "Rex", "incident", "infra", {"role": "user"})
