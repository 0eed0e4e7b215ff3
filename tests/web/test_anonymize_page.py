"""The session page's "Anonymise…": a preview with the options, then apply after a tick."""

from __future__ import annotations

import pytest
from django.urls import reverse

from sessions.models import Message, Pseudonym
from web.forms import AnonymizeForm

pytestmark = pytest.mark.django_db


@pytest.fixture
def named(team_session):
    Message.objects.filter(session=team_session, seq=0).update(
        content="Why does login redirect? Ask dana.ortiz@example.org"
    )
    return team_session


def url(session):
    return reverse("web:anonymize", args=[session.public_id])


def test_preview_then_apply_after_confirmation(admin_client, named):
    page = admin_client.get(reverse("web:session", args=[named.public_id]))
    assert url(named).encode() in page.content  # the action is offered to admins

    preview = admin_client.get(url(named))
    assert preview.status_code == 200
    assert b"dana.ortiz@example.org" in preview.content and b"[EMAIL-1]" in preview.content
    assert b"csrfmiddlewaretoken" in preview.content
    assert b"Derived from it and rewritten too: 0 memories" in preview.content

    # Without the tick nothing is written, and the page says why.
    form = {name: "on" for name in AnonymizeForm.OPTIONS}
    refused = admin_client.post(url(named), {**form, "action": "apply"})
    assert refused.status_code == 200 and b"Tick this to apply" in refused.content
    assert "dana.ortiz" in Message.objects.get(session=named, seq=0).content
    assert not Pseudonym.objects.exists()

    # An option unticked: the preview follows.
    no_emails = {k: v for k, v in form.items() if k != "remove_emails"}
    again = admin_client.post(url(named), {**no_emails, "action": "preview"})
    assert b"[EMAIL-1]" not in again.content

    done = admin_client.post(url(named), {**form, "action": "apply", "confirm": "on"})
    assert done.status_code == 302
    assert Message.objects.get(session=named, seq=0).content.endswith("Ask [EMAIL-1]")


def test_members_may_not_and_outsiders_do_not_see_it(member_client, outsider_client, named):
    page = member_client.get(reverse("web:session", args=[named.public_id]))
    assert url(named).encode() not in page.content
    assert member_client.get(url(named)).status_code == 403
    assert outsider_client.get(url(named)).status_code == 404
    assert outsider_client.post(url(named), {"action": "apply", "confirm": "on"}).status_code == 404
    assert "dana.ortiz" in Message.objects.get(session=named, seq=0).content
