"""Who reads a session, from the `memoryapp` command (docs/visibility.md): `capture
--visibility` (or $MEMORYAPP_VISIBILITY), `memoryapp visibility SESSION... V` (all or
nothing, the server's refusal said plainly), and the owner and visibility in
`memoryapp sessions list`."""

from __future__ import annotations

import json

import pytest

from memoryapp_client import MemoryClient
from memoryapp_client.cli import main
from memoryapp_client.hooks import on_agent_exit
from sessions.models import Session
from teams.models import ApiToken, Role
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def person(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user


@pytest.fixture
def person_env(monkeypatch, live_server, project, person):
    """The command with a token acting for ``person`` (as the tokens page makes them)."""
    _, raw = ApiToken.issue(project, name="mine", person=person)
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", raw)
    monkeypatch.delenv("MEMORYAPP_VISIBILITY", raising=False)


def test_capture_with_a_visibility(person_env, person, shared_dir, monkeypatch, capsys):
    sample = shared_dir / "samples" / "claude_code" / "raze.jsonl"
    assert main(["capture", "--visibility", "private", str(sample)]) == 0
    session = Session.objects.get(source_format="claude_code")
    assert (session.owner_id, session.visibility) == (person.pk, "private")

    monkeypatch.setenv("MEMORYAPP_VISIBILITY", "summary")
    session_id = on_agent_exit("dev", "", "none", "", "User: hi\nAssistant: hello")
    assert Session.objects.get(public_id=session_id).visibility == "summary"


def test_change_the_visibility_of_sessions(person_env, person, capsys):
    client = MemoryClient()
    first = client.capture(agent_name="dev", messages=[{"role": "user", "content": "a"}])["id"]
    second = client.capture(
        agent_name="dev", visibility="private", messages=[{"role": "user", "content": "b"}]
    )["id"]

    assert main(["visibility", first, second, "private"]) == 0
    out = capsys.readouterr().out
    assert f"{first}: now private" in out and f"{second}: already private" in out
    assert set(Session.objects.values_list("visibility", flat=True)) == {"private"}

    assert main(["sessions", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "OWNER" in lines[0] and "VISIBILITY" in lines[0]
    assert all(person.username in line and "private" in line for line in lines[1:])

    assert main(["visibility", first, "--json", "team"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] == [first]


def test_a_refusal_is_said_and_changes_nothing(person_env, project, capsys):
    mine = MemoryClient().capture(agent_name="dev", messages=[{"role": "user", "content": "a"}])
    project.allowed_visibilities = ["summary", "team"]
    project.save(update_fields=["allowed_visibilities"])
    assert main(["visibility", mine["id"], "private"]) == 1
    assert "does not allow 'private'" in capsys.readouterr().err
    assert main(["visibility", "2025-01-15-nobody-000000", "summary"]) == 1
    assert "No such session" in capsys.readouterr().err
    assert Session.objects.get(public_id=mine["id"]).visibility == "team"
