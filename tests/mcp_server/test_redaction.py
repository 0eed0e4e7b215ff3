"""What an agent writes through the MCP tools (memories, saved sessions) is redacted as its
project redacts messages, over both transports; a project with redaction off keeps it."""

from __future__ import annotations

import pytest

from memories.models import Memory
from sessions.models import Session
from teams.models import ApiToken, Project
from tests.factories import ProjectFactory
from tests.mcp_server.test_tools import data
from tests.redaction_inputs import EMAIL, REDACTED, SAID

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only


def write_both(agent, token=None) -> tuple[dict, dict]:
    memory = data(
        agent.call(
            "record_memory",
            {"type": "decision", "content": SAID, "rationale": SAID, "topic": EMAIL},
            token=token,
        )
    )
    session = data(
        agent.call(
            "save_session",
            {
                "agent_name": "dev",
                "title": SAID,
                "topics": [EMAIL],
                "messages": [{"role": "user", "content": SAID}],
            },
            token=token,
        )
    )
    return memory, session


@live
def test_memories_and_sessions_written_by_mcp_are_redacted(agent, project):
    Project.objects.filter(pk=project.pk).update(redact_emails=True)
    memory, session = write_both(agent)
    assert memory["content"] == REDACTED
    stored = Memory.objects.get(public_id=memory["id"], project=project)
    assert stored.content == REDACTED and stored.topic == "[REDACTED:email]"
    assert stored.details["rationale"] == REDACTED
    saved = Session.objects.get(public_id=session["id"])
    assert saved.title == REDACTED and saved.topics == ["[REDACTED:email]"]
    assert saved.messages.get().content == REDACTED


@live
def test_a_project_with_redaction_off_keeps_what_it_was_sent(agent):
    off = ProjectFactory(redact_secrets=False, redact_emails=False)
    token = ApiToken.issue(off, name="agent")[1]
    memory, session = write_both(agent, token=token)
    assert memory["content"] == SAID
    assert Memory.objects.get(public_id=memory["id"], project=off).content == SAID
    assert Session.objects.get(public_id=session["id"]).title == SAID
