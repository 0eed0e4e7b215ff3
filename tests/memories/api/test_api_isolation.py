"""Who may do what with memories: owner, teammate and outsider (another team's memory is a
404 everywhere), and API tokens by their permissions (read, write, delete) and project."""

from __future__ import annotations

import pytest

from memories.models import Memory, MemoryScope
from teams.models import Role, TokenPermission
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory
from tests.memories.conftest import ALL, decision, finding, token_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"
READ, WRITE, DELETE = TokenPermission.READ, TokenPermission.WRITE, TokenPermission.DELETE


@pytest.fixture
def ours(agent):
    """A decision and a finding of ``project``; the finding relates to the decision."""
    d = agent.post(URL, decision(), format="json").json()["id"]
    f = agent.post(URL, finding(links=[{"kind": "led_to", "target": d}]), format="json")
    agent.put("/api/v1/agent-states/veritas", {"session_learnings": ["x"]}, format="json")
    return {"decision": d, "finding": f.json()["id"]}


def every_request(ids):
    """(method, url, body) of every memory endpoint about ``ids``' memories."""
    d, f = ids["decision"], ids["finding"]
    return [
        ("get", f"{URL}/{d}", None),
        ("patch", f"{URL}/{d}", {"content": "Changed by someone"}),
        ("delete", f"{URL}/{d}?reason=x", None),
        ("post", f"{URL}/{d}/restore", None),
        ("post", f"{URL}/{f}/resolve", {}),
        ("post", f"{URL}/{f}/links", {"kind": "relates_to", "target": d}),
        ("delete", f"{URL}/{f}/links?kind=led_to&target={d}", None),
        ("get", f"{URL}/{d}/related", None),
        ("get", "/api/v1/agent-states/veritas", None),
    ]


def call(client, method, url, body):
    return (
        getattr(client, method)(url, body, format="json")
        if body is not None
        else getattr(client, method)(url)
    )


def test_an_outsider_gets_404_for_every_memory_and_sees_none(ours, outsider):
    before = list(Memory.objects.values_list("public_id", "status", "content", "resolution"))
    stranger = client_for(outsider)
    for method, url, body in every_request(ours):
        response = call(stranger, method, url, body)
        assert response.status_code == 404, (method, url, response.status_code)
    assert stranger.get(URL).json()["results"] == []
    assert stranger.get(URL, {"q": "OAuth"}).json()["results"] == []
    assert stranger.get(f"{URL}/topics").json()["topics"] == []
    assert stranger.get(f"{URL}/timeline").json()["events"] == []
    # Nor can it point at ours from its own memories.
    own = token_client(ProjectFactory(team=outsider.memberships.first().team), *ALL)
    made = own.post(URL, decision(content="Theirs", supersedes=[ours["decision"]]), format="json")
    assert made.status_code == 404
    assert list(Memory.objects.values_list("public_id", "status", "content", "resolution")) == (
        before
    )


def test_a_teammate_reads_and_writes_but_only_an_admin_deletes(ours, teammate, owner):
    member = client_for(teammate)
    assert member.get(f"{URL}/{ours['decision']}").status_code == 200
    listed = {m["id"] for m in member.get(URL).json()["results"]}
    assert listed == {*ours.values(), "STATE-001"}
    edited = member.patch(f"{URL}/{ours['decision']}", {"pinned": True}, format="json")
    assert edited.status_code == 200
    assert member.post(f"{URL}/{ours['finding']}/resolve", {}, format="json").status_code == 200
    refused = member.delete(f"{URL}/{ours['decision']}?reason=x")
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert client_for(owner).delete(f"{URL}/{ours['decision']}?reason=x").status_code == 204
    assert member.post(f"{URL}/{ours['decision']}/restore").status_code == 403


def test_a_viewer_only_reads(ours, team):
    viewer = client_for(MembershipFactory(team=team, role=Role.VIEWER).user)
    assert viewer.get(f"{URL}/{ours['decision']}").status_code == 200
    assert viewer.get(f"{URL}/topics").status_code == 200
    for method, url, body in every_request(ours)[1:7]:
        assert call(viewer, method, url, body).status_code == 403, (method, url)
    project = Memory.objects.get(public_id=ours["decision"]).project
    record = viewer.post(
        URL, decision(content="x y", project=f"{team.slug}/{project.slug}"), format="json"
    )
    assert record.status_code == 403


@pytest.mark.parametrize(
    ("permissions", "allowed"),
    [
        ((READ,), {"get"}),
        ((READ, WRITE), {"get", "record", "patch", "resolve", "link", "state"}),
        (tuple(ALL), {"get", "record", "patch", "resolve", "link", "state", "delete"}),
        ((WRITE,), {"record", "patch", "resolve", "link", "state"}),
    ],
)
def test_token_permissions(project, ours, permissions, allowed):
    client = token_client(project, *permissions)
    d, f = ours["decision"], ours["finding"]
    answers = {
        "get": client.get(f"{URL}/{d}").status_code,
        "record": client.post(URL, finding(content="Logs hold tokens"), format="json").status_code,
        "patch": client.patch(f"{URL}/{d}", {"tags": ["x"]}, format="json").status_code,
        "resolve": client.post(f"{URL}/{f}/resolve", {}, format="json").status_code,
        "link": client.post(
            f"{URL}/{d}/links", {"kind": "relates_to", "target": f}, format="json"
        ).status_code,
        "state": client.put(
            "/api/v1/agent-states/dev", {"session_learnings": ["y"]}, format="json"
        ).status_code,
        "delete": client.delete(f"{URL}/{d}?reason=x").status_code,
    }
    for action, code in answers.items():
        if action in allowed:
            assert code < 300, (action, code)
        else:
            assert code == 403, (action, code)


def test_a_token_sees_its_project_and_what_the_team_shares(team, project, ours):
    sibling = ProjectFactory(team=team)
    other = token_client(sibling, *ALL)
    assert other.get(f"{URL}/{ours['decision']}").status_code == 404
    assert other.get(URL).json()["results"] == []
    Memory.objects.filter(public_id=ours["decision"], project=project).update(
        scope=MemoryScope.TEAM
    )
    assert [m["id"] for m in other.get(URL).json()["results"]] == [ours["decision"]]
    assert other.get(f"{URL}/{ours['decision']}").status_code == 200
