"""A signed-in person who belongs to no team gets one page on every UI URL, GET or POST:
it says they are not in a team and to ask an admin to add them, with 403 (never a 500,
never a half-empty page)."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, reverse

from tests.web.conftest import client_for
from web import urls as web_urls

pytestmark = pytest.mark.django_db

# Values for the URL converters, so every pattern of web/urls.py can be reversed.
ARGUMENTS = {"string": "2025-01-01-architect-abc123", "int": 1, "path": "ada@example.com"}


def every_ui_url() -> list[str]:
    urls = []
    for pattern in web_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        kwargs = {
            name: ARGUMENTS[type(converter).__name__.removesuffix("Converter").lower()]
            for name, converter in pattern.pattern.converters.items()
        }
        urls.append(reverse(f"web:{pattern.name}", kwargs=kwargs))
    return urls


@pytest.fixture
def teamless_client(user):
    return client_for(user)


def test_every_ui_url_is_covered():
    urls = every_ui_url()
    assert "/trash" in urls and "/trash/restore" in urls and "/sessions/bulk-delete" in urls
    assert len(urls) == len(web_urls.urlpatterns)


@pytest.mark.parametrize("url", every_ui_url())
@pytest.mark.parametrize("method", ["get", "post"])
def test_every_ui_url_tells_a_teamless_person_what_to_do(teamless_client, url, method):
    response = getattr(teamless_client, method)(url, {"session": ["x"], "confirm": "1"})
    assert response.status_code == 403, (url, method)
    body = response.content.decode()
    assert "You are not in a team yet" in body
    assert "Ask an admin of your team to add you" in body
    # The page offers what still works without a team.
    assert reverse("logout") in body


def test_a_person_with_a_team_is_not_sent_there(member_client, team_session):
    response = member_client.get("/trash")
    assert response.status_code == 200
    assert b"You are not in a team yet" not in response.content
