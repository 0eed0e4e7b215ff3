"""Capture sequences over REST: whatever mix of creates, appends and re-sends a client sends,
the stored transcript is the one it meant, with contiguous sequence numbers (issue 14)."""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from sessions.models import Message, Session
from teams.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def transcript(session_id):
    return list(
        Message.objects.filter(session__public_id=session_id)
        .order_by("seq")
        .values_list("seq", "content")
    )


def message(i, *, with_id=False):
    body = {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
    if with_id:
        body["client_id"] = f"m{i}"
    return body


def create(agent, messages, **fields):
    response = agent.post(
        "/api/v1/sessions", {"agent_name": "dev", "messages": messages, **fields}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    return response.json()


def append(agent, session_id, messages):
    response = agent.post(
        f"/api/v1/sessions/{session_id}/messages", {"messages": messages}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("with_id", [False, True])
def test_a_session_with_one_message_grows_by_appends(agent, with_id):
    session_id = create(agent, [message(0, with_id=with_id)])["id"]
    for i in (1, 2, 3):
        append(agent, session_id, [message(i, with_id=with_id)])
    assert transcript(session_id) == [(i, f"message {i}") for i in range(4)]
    assert Session.objects.get(public_id=session_id).message_count == 4


def test_a_session_created_empty_takes_one_message_at_a_time(agent):
    session_id = create(agent, [])["id"]
    for i in range(3):
        single = agent.post(f"/api/v1/sessions/{session_id}/messages", message(i), format="json")
        assert single.status_code == 201, single.content
        assert single.json()["messages"][0]["seq"] == i
    assert transcript(session_id) == [(0, "message 0"), (1, "message 1"), (2, "message 2")]


def test_re_sending_a_one_message_session_with_one_more_appends_it(agent):
    first = create(agent, [message(0)], external_id="run-1")
    again = create(agent, [message(0), message(1)], external_id="run-1")
    assert again["id"] == first["id"]
    assert again["messages_added"] == 1 and again["duplicates_skipped"] == 1
    assert transcript(first["id"]) == [(0, "message 0"), (1, "message 1")]


def test_re_sending_a_session_keeps_the_fields_it_leaves_out(agent):
    first = create(
        agent, [message(0)], external_id="run-2", workflow="create-architecture", status="active"
    )
    again = create(agent, [message(0), message(1)], external_id="run-2")
    assert again["id"] == first["id"]
    assert again["workflow"] == "create-architecture"
    assert again["status"] == "active"
    # A field sent again is updated.
    final = create(agent, [], external_id="run-2", status="completed")
    assert final["status"] == "completed" and final["workflow"] == "create-architecture"


def test_a_new_session_without_workflow_or_status_gets_the_defaults(agent):
    body = create(agent, [message(0)])
    assert body["workflow"] == "none" and body["status"] == "completed"


# --- property: any sequence of operations stores the intended transcript ------------------

# An operation sends messages [start, end) of the intended transcript:
#   ("create", end)          whole session with messages [0, end), by external id
#   ("append", start, end)   POST …/messages with that range
#   ("resend", end)          the whole session again with [0, end), by external id
# Without client ids a re-sent range can only be recognised by position (a whole-session
# re-send); with them, any overlapping range is recognised.
operation = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 12), st.integers(1, 6)),
    st.tuples(st.just("resend"), st.integers(0, 12)),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    with_ids=st.booleans(),
    first=st.integers(0, 3),
    operations=st.lists(operation, max_size=8),
    batch=st.booleans(),
)
def test_any_capture_sequence_stores_the_intended_transcript(
    agent, with_ids, first, operations, batch
):
    external_id = uuid.uuid4().hex
    sent = first  # the intended transcript is messages [0, sent)
    session_id = create(
        agent, [message(i, with_id=with_ids) for i in range(first)], external_id=external_id
    )["id"]
    for op in operations:
        if op[0] == "append":
            # Without ids, only what is new can be appended (nothing could tell a repeat).
            start = min(op[1], sent) if with_ids else sent
            end = start + op[2]
            wanted = [message(i, with_id=with_ids) for i in range(start, end)]
            if batch:
                append(agent, session_id, wanted)
            else:
                for single in wanted:
                    append(agent, session_id, [single])
            sent = max(sent, end)
        else:
            end = op[1]  # shorter than what is stored is fine: by position or by id
            body = create(
                agent,
                [message(i, with_id=with_ids) for i in range(end)],
                external_id=external_id,
            )
            assert body["id"] == session_id
            sent = max(sent, end)
    assert transcript(session_id) == [(i, f"message {i}") for i in range(sent)]
    session = Session.objects.get(public_id=session_id)
    assert session.message_count == sent
