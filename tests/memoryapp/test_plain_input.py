"""What DRF would quietly guess is a 400 naming the field (core/plain_input.py): a
number where the schema says text, and a one-value query parameter given several times.
Found by the schema fuzz test; each case used to answer 200/201 with a guess."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memories.models import Memory
from sessions.models import Session
from teams.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/context?topic=auth&topic=db", "topic"),
        ("/api/v1/context?current_workflow=a&current_workflow=b", "current_workflow"),
        ("/api/v1/search?q=token&q=refresh", "q"),
        ("/api/v1/sessions?agent=a&agent=b", "agent"),
        ("/api/v1/memories?status=active&status=all", "status"),
    ],
)
def test_a_one_value_parameter_given_twice_is_refused_by_name(agent, url, field):
    response = agent.get(url)
    assert response.status_code == 400, response.content
    assert response.json()[field] == ["given 2 times; give it once"]


def test_a_parameter_that_takes_several_may_be_repeated(agent):
    response = agent.get("/api/v1/memories?type=decision&type=finding")
    assert response.status_code == 200, response.content


def test_a_number_for_a_memory_s_text_is_refused_and_nothing_is_recorded(agent):
    response = agent.post(
        "/api/v1/memories",
        {"type": "finding", "content": "No expiry", "topic": 5, "impact": 0.5},
        format="json",
    )
    assert response.status_code == 400, response.content
    body = response.json()
    assert "must be text" in body["topic"][0] and "must be text" in body["impact"][0]
    assert not Memory.objects.exists()


def test_a_number_for_a_session_s_text_is_refused_and_nothing_is_captured(agent):
    response = agent.post(
        "/api/v1/sessions",
        {"agent_name": "architect", "title": 42, "messages": [{"role": "user", "content": 7}]},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "must be text" in response.json()["title"][0]
    assert not Session.objects.exists()
