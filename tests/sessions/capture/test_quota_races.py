"""Compaction with the real worker: vectors follow the compacted text, and ten clients
appending at once to a session at the compaction threshold lose and duplicate nothing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from sessions.capture.service import capture_session
from sessions.forget.compaction import compact_on_request
from sessions.models import Message, MessageChunk
from teams.models import ApiToken
from tests.factories import ProjectFactory
from tests.sessions.capture.test_capture_races import (
    assert_embedded_exactly_once,
    deadlocks,
    race_worker,  # noqa: F401 (a fixture)
)
from tests.waiting import wait_for
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CLIENTS = 10


def days_ago(days: float):
    return timezone.now() - timedelta(days=days)


def keyword_hits(client, word: str) -> set[str]:
    response = client.get("/api/v1/search", {"q": word, "mode": "keyword"})
    assert response.status_code == 200, response.content
    return {hit["session"]["id"] for hit in response.json()["results"]}


@pytest.mark.usefixtures("race_worker")
def test_vectors_and_keywords_follow_compaction():
    project = ProjectFactory()
    _, raw = ApiToken.issue(project, name="search")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    filler = "The build log goes on with ordinary lines about compiling modules.\n"
    log = filler * 100 + "middle wombatmarker line\n" + filler * 100 + "tail quokkamarker line\n"
    old = days_ago(10)
    messages = [
        ParsedMessage("user", "Please fix the failing deploy step.", timestamp=old),
        ParsedMessage("assistant", "Looking at the deploy configuration now. " * 20, timestamp=old),
        ParsedMessage(
            "tool", "config: zebramarker on\n" + "setting ok\n" * 60, tool_name="sh", timestamp=old
        ),
        ParsedMessage("user", "Now show me the build log.", timestamp=days_ago(3)),
        ParsedMessage("tool", log, tool_name="sh", timestamp=days_ago(3)),
        ParsedMessage("assistant", "The build is green again.", timestamp=days_ago(3)),
    ]
    session = capture_session(project, ParsedSession("api", messages, agent_name="dev")).session
    done = Message.objects.filter(session=session).exclude(enrichment_status="done")
    assert wait_for(lambda: not done.exists(), 240)
    for word in ("zebramarker", "wombatmarker", "quokkamarker"):
        assert keyword_hits(client, word) == {session.public_id}, word
    assert MessageChunk.objects.filter(session=session, text__contains="zebramarker").exists()

    result = compact_on_request(session)  # and pokes the worker
    assert result.messages_removed == 2 and result.bytes_freed > 0
    summary = Message.objects.get(session=session, seq=2)
    assert summary.role == "system" and "zebramarker" not in summary.content
    assert wait_for(lambda: not done.exists(), 240)
    assert keyword_hits(client, "zebramarker") == set()
    assert keyword_hits(client, "wombatmarker") == set()  # folded away
    assert keyword_hits(client, "quokkamarker") == {session.public_id}  # kept in the tail
    chunks = MessageChunk.objects.filter(session=session)
    assert not chunks.filter(text__contains="zebramarker").exists()
    assert not chunks.filter(text__contains="wombatmarker").exists()
    assert chunks.filter(text__contains="quokkamarker").exists()
    assert_embedded_exactly_once([session.pk])


@pytest.mark.usefixtures("race_worker")
def test_ten_clients_appending_at_the_compaction_threshold(live_server, live_http):
    project = ProjectFactory(session_quota_bytes=100_000)
    _, raw = ApiToken.issue(project, name="race")
    old = [
        ParsedMessage(
            "user" if i % 2 == 0 else "assistant", f"turn {i} " + "x" * 3190, timestamp=days_ago(10)
        )
        for i in range(30)
    ]
    session = capture_session(project, ParsedSession("api", old, agent_name="dev")).session
    assert session.size_bytes >= 95_000  # at the compaction share already
    http = live_http(raw, pool=CLIENTS * 2)
    url = f"{live_server.url}/api/v1/sessions/{session.public_id}/messages"
    before = deadlocks()
    answers = []
    lock = threading.Lock()

    def client(c):
        body = {"role": "user", "content": f"client {c} says " + "y" * 1000, "client_id": f"c{c}"}
        response = http.post(url, json=body, timeout=120)
        with lock:
            answers.append((response.status_code, response.json()))

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client, range(CLIENTS)))

    assert [status for status, _ in answers] == [201] * CLIENTS, answers
    states = sorted(body["quota"]["state"] for _, body in answers)
    assert states.count("compacted") == 1, states
    stored = list(Message.objects.filter(session=session).values_list("seq", "client_id"))
    new = sorted(cid for _, cid in stored if cid)
    assert new == sorted(f"c{c}" for c in range(CLIENTS))  # each once
    seqs = [seq for seq, _ in stored]
    assert len(seqs) == len(set(seqs)) == 1 + CLIENTS
    assert sorted(seqs)[1:] == list(range(30, 30 + CLIENTS))
    session.refresh_from_db()
    assert session.message_count == 1 + CLIENTS
    assert session.size_bytes == sum(
        len(c.encode())
        for c in Message.objects.filter(session=session).values_list("content", flat=True)
    )
    assert deadlocks() == before
    assert_embedded_exactly_once([session.pk])
    assert deadlocks() == before
