"""The session page's size card, quota badges and pin toggle."""

from __future__ import annotations

import pytest
from django.urls import reverse

from sessions.models import Message, Session

pytestmark = pytest.mark.django_db


def pin_url(session, seq):
    return reverse("web:pin", args=[session.public_id, seq])


def test_the_session_page_shows_the_size_breakdown(member_client, team_session):
    page = member_client.get(reverse("web:session", args=[team_session.public_id]))
    assert page.status_code == 200
    for label in (b"Tool output", b"Vectors", b"Entities", b"Total", b"<meter"):
        assert label in page.content
    assert page.context["size"]["tool_output_bytes"] == len("3 passed")


def test_a_session_past_the_warning_share_has_a_badge_on_its_page_and_in_the_list(
    member_client, team_session
):
    project = team_session.project
    project.session_quota_bytes = 10_000
    project.save()
    Session.objects.filter(pk=team_session.pk).update(size_bytes=8_400)
    page = member_client.get(reverse("web:session", args=[team_session.public_id]))
    listing = member_client.get(reverse("web:sessions"))
    assert b"84% of quota" in page.content and b"84% of quota" in listing.content
    Session.objects.filter(pk=team_session.pk).update(size_bytes=7_900)
    assert b"% of quota" not in member_client.get(reverse("web:sessions")).content


def test_pin_and_unpin_from_the_session_page(member_client, team_session):
    page = member_client.get(reverse("web:session", args=[team_session.public_id]))
    assert pin_url(team_session, 0).encode() in page.content
    response = member_client.post(pin_url(team_session, 0), {"pinned": "true"})
    assert response.status_code == 302 and response["Location"].endswith("?at=0#m-0")
    assert Message.objects.get(session=team_session, seq=0).pinned
    page = member_client.get(reverse("web:session", args=[team_session.public_id]))
    assert b">pinned<" in page.content and b">Unpin<" in page.content
    member_client.post(pin_url(team_session, 0), {"pinned": "false"})
    assert not Message.objects.get(session=team_session, seq=0).pinned
    assert member_client.post(pin_url(team_session, 99), {"pinned": "true"}).status_code == 404
    assert member_client.get(pin_url(team_session, 0)).status_code == 405


def test_viewers_have_no_pin_button_and_cannot_pin(viewer_client, team_session):
    page = viewer_client.get(reverse("web:session", args=[team_session.public_id]))
    assert pin_url(team_session, 0).encode() not in page.content
    assert viewer_client.post(pin_url(team_session, 0), {"pinned": "true"}).status_code == 403
    assert not Message.objects.get(session=team_session, seq=0).pinned


def test_another_teams_person_cannot_pin(outsider_client, team_session):
    assert outsider_client.post(pin_url(team_session, 0), {"pinned": "true"}).status_code == 404
    assert not Message.objects.get(session=team_session, seq=0).pinned
