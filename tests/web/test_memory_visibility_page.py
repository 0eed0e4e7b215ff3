"""Who reads a memory, on its page (docs/visibility.md): the page shows its owner and
visibility; its owner shares it with the team or takes it back, an admin of the team may only
make it less visible, nobody else gets the control; every change goes through
``memories.visibility.change`` (the API's path), and a refusal changes nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memories.capture.record import MemoryDraft, record
from memories.models import Memory, MemoryType
from teams.models import Visibility
from tests.web.conftest import client_for

pytestmark = pytest.mark.django_db


def memory_of(project, owner, visibility, content="Retry the payment webhook twice, not once"):
    memory = record(project, MemoryDraft(type=MemoryType.DECISION, content=content)).memory
    Memory.objects.filter(pk=memory.pk).update(owner=owner, visibility=visibility)
    memory.refresh_from_db()
    return memory


def page(memory) -> str:
    return reverse("web:memory", args=[memory.project_id, memory.public_id])


def control(memory) -> str:
    return reverse("web:memory-visibility", args=[memory.project_id, memory.public_id])


def visibility_of(memory) -> str:
    return Memory.objects.values_list("visibility", flat=True).get(pk=memory.pk)


def test_the_owner_shares_a_private_memory_and_the_teammate_then_reads_it(
    member_client, member, viewer_client, project
):
    memory = memory_of(project, member, Visibility.PRIVATE)
    assert viewer_client.get(page(memory)).status_code == 404
    html = member_client.get(page(memory)).content.decode()
    assert "Who reads it" in html and "pill-vis-private" in html and "(you)" in html
    assert f'action="{control(memory)}"' in html
    for value in ("private", "summary", "team"):
        assert f'value="{value}"' in html, value

    response = member_client.post(control(memory), {"visibility": "team"}, follow=True)
    assert "Now shared with the team." in response.content.decode()
    assert visibility_of(memory) == "team"
    shared = viewer_client.get(page(memory))
    assert shared.status_code == 200 and "pill-vis-team" in shared.content.decode()

    # ... and takes it back.
    response = member_client.post(control(memory), {"visibility": "private"}, follow=True)
    assert "Now private: only its owner reads it." in response.content.decode()
    assert viewer_client.get(page(memory)).status_code == 404


def test_an_admin_makes_a_team_memory_private_but_not_a_summary_one_team(
    admin_client, member, project
):
    team = memory_of(project, member, Visibility.TEAM)
    html = admin_client.get(page(team)).content.decode()
    assert "Set visibility" in html and "only its owner makes it more visible" in html
    response = admin_client.post(control(team), {"visibility": "private"}, follow=True)
    assert "Now private: only its owner reads it." in response.content.decode()
    assert visibility_of(team) == "private"

    summary = memory_of(project, member, Visibility.SUMMARY, content="Pin the SDK to 4.2")
    html = admin_client.get(page(summary)).content.decode()
    assert 'value="private"' in html and 'value="team"' not in html  # no such choice
    forged = admin_client.post(control(summary), {"visibility": "team"}, follow=True)
    assert "Visibility not changed: an admin may make a memory less visible, not more" in (
        forged.content.decode()
    )
    assert visibility_of(summary) == "summary"


def test_an_admin_cannot_make_a_private_memory_team(admin_client, member, project):
    private = memory_of(project, member, Visibility.PRIVATE)
    assert admin_client.get(page(private)).status_code == 404  # it does not read it
    assert admin_client.post(control(private), {"visibility": "team"}).status_code == 404
    assert visibility_of(private) == "private"


@pytest.mark.parametrize("who", ["member", "viewer"])
def test_someone_who_is_not_the_owner_gets_no_control_and_a_forged_post_is_refused(
    request, who, admin, project
):
    client = client_for(request.getfixturevalue(who))
    memory = memory_of(project, admin, Visibility.TEAM)
    html = client.get(page(memory)).content.decode()
    assert "Who reads it" in html and "pill-vis-team" in html
    assert "Set visibility" not in html and control(memory) not in html
    forged = client.post(control(memory), {"visibility": "private"}, follow=True)
    assert "Visibility not changed: only the memory&#x27;s owner changes its visibility" in (
        forged.content.decode()
    )
    assert visibility_of(memory) == "team"
    # A memory it does not read is not found.
    private = memory_of(project, admin, Visibility.PRIVATE, content="Salaries are in sheet 3")
    assert client.post(control(private), {"visibility": "team"}).status_code == 404
    assert visibility_of(private) == "private"


def test_the_control_needs_post_and_csrf(member, project):
    memory = memory_of(project, member, Visibility.PRIVATE)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(member)
    assert strict.post(control(memory), {"visibility": "team"}).status_code == 403
    assert client_for(member).get(control(memory)).status_code == 405
    assert visibility_of(memory) == "private"


def test_the_list_shows_each_memory_s_visibility(member_client, member, project):
    memory_of(project, member, Visibility.PRIVATE)
    memory_of(project, member, Visibility.TEAM, content="Deploy on Tuesdays")
    html = member_client.get("/memories", {"project": project.pk}).content.decode()
    assert "pill-vis-private" in html and "pill-vis-team" in html
