"""The client retries a request whose answer it did not get; the server may have stored it
already. A retried capture or append must store its session and messages once, whether the
caller gave ids or not (found in the reliability pass: an append of 300 messages that timed
out twice stored 900)."""

from __future__ import annotations

import urllib.request

import pytest

from memoryapp_client import MemoryClient
from sessions.models import Message, Session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def answers_lost(monkeypatch, no_backoff):
    """The first ``lost`` requests reach the server and are answered, but the answer never
    reaches the client (a read timeout, a dropped connection): it sees a TimeoutError."""
    real = urllib.request.urlopen
    state = {"lost": 0, "sent": 0}

    def urlopen(request, *args, **kwargs):
        response = real(request, *args, **kwargs)
        state["sent"] += 1
        if state["lost"]:
            state["lost"] -= 1
            response.read()
            response.close()
            raise TimeoutError("timed out")
        return response

    monkeypatch.setattr("memoryapp_client.api.urllib.request.urlopen", urlopen)
    return state


def test_an_append_whose_answers_were_lost_stores_each_message_once(agent_env, answers_lost):
    client = MemoryClient()
    session = client.capture(agent_name="dev", messages=[{"role": "user", "content": "start"}])
    answers_lost["lost"] = 2
    result = client.append(
        session["id"],
        [{"role": "assistant", "content": f"step {i}"} for i in range(5)]
        + [{"role": "user", "content": "kept id", "client_id": "mine"}],
    )
    assert answers_lost["sent"] == 4  # the capture, then three tries of the append
    assert result["messages_added"] == 0 and result["duplicates_skipped"] == 6
    stored = Session.objects.get(public_id=session["id"])
    contents = list(
        Message.objects.filter(session=stored).order_by("seq").values_list("content", flat=True)
    )
    assert contents == ["start", *(f"step {i}" for i in range(5)), "kept id"]
    assert stored.message_count == stored.next_seq == 7
    assert Message.objects.get(session=stored, content="kept id").client_id == "mine"


def test_a_capture_whose_answer_was_lost_stores_one_session(agent_env, answers_lost):
    answers_lost["lost"] = 1
    session = MemoryClient().capture(
        agent_name="dev", conversation="User: why?\nAssistant: the migration never ran."
    )
    assert answers_lost["sent"] == 2
    assert Session.objects.count() == 1
    assert session["message_count"] == 2 == Message.objects.count()


def test_an_external_id_given_is_kept(agent_env):
    session = MemoryClient().capture(
        agent_name="dev", external_id="run-7", messages=[{"role": "user", "content": "hi"}]
    )
    assert session["external_id"] == "run-7"
