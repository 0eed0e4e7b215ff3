"""Capture under real concurrency: many HTTP clients on a real server, retrying as real
clients do, while a real worker embeds and enriches the same sessions (issue 14).

Every request must succeed, every message must be stored exactly once with contiguous
sequence numbers, PostgreSQL must report no deadlock, and every message must end embedded
exactly once.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.db.models import Count

from sessions.enrich.chunking import chunk_message, header_for
from sessions.forget.lifecycle import purge, soft_delete
from sessions.models import Message, MessageChunk, Session
from teams.models import ApiToken
from tests.conftest import REPO_ROOT, child_env, eager_worker
from tests.factories import ProjectFactory
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CLIENTS = 20
APPENDS = 25


def deadlocks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def assert_embedded_exactly_once(session_ids, timeout=300):
    messages = Message.objects.filter(session_id__in=session_ids)
    assert wait_for(lambda: not messages.exclude(enrichment_status="done").exists(), timeout), (
        f"{messages.exclude(enrichment_status='done').count()} message(s) never embedded"
    )
    per_message = dict(
        MessageChunk.objects.filter(session_id__in=session_ids)
        .values_list("message_id")
        .annotate(n=Count("id"))
        .values_list("message_id", "n")
    )
    for message in messages:
        expected = len(chunk_message(message.content, header=header_for(message.role, "")))
        assert per_message.get(message.id, 0) == expected, message


@pytest.fixture(scope="module")
def race_worker(django_db_setup, django_db_blocker):
    """A real worker that enriches sessions the moment they are captured."""
    with eager_worker("race-worker.log") as worker:
        yield worker


@pytest.fixture
def server(live_server, live_http, race_worker):
    """The live server and an HTTP session with a token of a fresh project."""
    project = ProjectFactory()
    _, raw = ApiToken.issue(project, name="race")
    return live_server.url, live_http(raw, pool=CLIENTS * 2), project


def test_concurrent_appends_each_sent_twice_store_every_message_once(server):
    base, http, _project = server
    created = http.post(f"{base}/api/v1/sessions", json={"agent_name": "race", "messages": []})
    assert created.status_code == 201, created.text
    session_id = created.json()["id"]
    url = f"{base}/api/v1/sessions/{session_id}/messages"
    before = deadlocks()
    statuses: list[int] = []
    lock = threading.Lock()

    def client(c):
        for i in range(APPENDS):
            body = {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"client {c} message {i}: the deploy pipeline step {i} passed",
                "client_id": f"c{c}-m{i}",
            }
            for _attempt in range(2):  # a retrying client sends each message twice
                response = http.post(url, json=body, timeout=60)
                with lock:
                    statuses.append(response.status_code)

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client, range(CLIENTS)))

    assert statuses.count(201) == CLIENTS * APPENDS * 2, {s: statuses.count(s) for s in statuses}
    stored = list(
        Message.objects.filter(session__public_id=session_id)
        .order_by("seq")
        .values_list("seq", "client_id")
    )
    assert [seq for seq, _ in stored] == list(range(CLIENTS * APPENDS))
    assert sorted(cid for _, cid in stored) == sorted(
        f"c{c}-m{i}" for c in range(CLIENTS) for i in range(APPENDS)
    )
    # Each client's messages keep the order it sent them in.
    for c in range(CLIENTS):
        mine = [cid for _, cid in stored if cid.startswith(f"c{c}-")]
        assert mine == [f"c{c}-m{i}" for i in range(APPENDS)]
    session = Session.objects.get(public_id=session_id)
    assert session.message_count == CLIENTS * APPENDS
    assert deadlocks() == before
    assert_embedded_exactly_once([session.pk])
    assert deadlocks() == before


# One writer process: the API's own views (Django's test client, no server), so each process
# runs the whole request path on its own connection. Mode "append" posts three messages at
# a time to the session; mode "resend" re-sends the whole session by its external id with
# one more message each time (capture keeps what it holds, by client id). Each request is
# sent twice, as a retrying client does.
WRITER = """
import sys, django
django.setup()
from django.test import Client
token, session_id, mode, me, rounds = sys.argv[1:6]
client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
sent = [{"role": "user", "content": "the first message", "client_id": "first"}]
for i in range(int(rounds)):
    if mode == "append":
        url = f"/api/v1/sessions/{session_id}/messages"
        body = {"messages": [
            {"role": "assistant", "content": f"{me} says {i}.{k}", "client_id": f"{me}-{i}-{k}"}
            for k in range(3)
        ]}
    else:
        url = "/api/v1/sessions"
        sent.append({"role": "user", "content": f"{me} says {i}", "client_id": f"{me}-{i}"})
        body = {"agent_name": "race", "external_id": "multi", "messages": sent}
    for _attempt in range(2):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code in (200, 201), response.content
"""


def test_appends_and_resends_from_several_processes_store_every_message_once(server):
    """Writers in separate processes (as gunicorn's workers are) on a session that holds one
    message, while the worker embeds it: contiguous seqs, each message once and in its
    writer's order, the counters right, no deadlock."""
    base, http, project = server
    _, token = ApiToken.issue(project, name="writers")
    first = {"role": "user", "content": "the first message", "client_id": "first"}
    created = http.post(
        f"{base}/api/v1/sessions",
        json={"agent_name": "race", "external_id": "multi", "messages": [first]},
    )
    assert created.status_code == 201, created.text
    session_id = created.json()["id"]
    env = child_env()
    rounds = 15
    modes = {"a": "append", "b": "append", "c": "append", "r": "resend"}
    before = deadlocks()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, token, session_id, mode, me, str(rounds)],
            cwd=REPO_ROOT,
            env=env,
        )
        for me, mode in modes.items()
    ]
    assert [writer.wait(300) for writer in writers] == [0] * len(writers)

    stored = list(
        Message.objects.filter(session__public_id=session_id)
        .order_by("seq")
        .values_list("seq", "client_id")
    )
    expected = ["first"] + [f"r-{i}" for i in range(rounds)]
    for me, mode in modes.items():
        if mode == "append":
            expected += [f"{me}-{i}-{k}" for i in range(rounds) for k in range(3)]
    assert [seq for seq, _ in stored] == list(range(len(expected)))
    assert sorted(cid for _, cid in stored) == sorted(expected)
    for me in modes:  # each writer's messages in the order it sent them
        mine = [cid for _, cid in stored if cid.startswith(f"{me}-")]
        assert mine == [cid for cid in expected if cid.startswith(f"{me}-")]
    session = Session.objects.get(public_id=session_id)
    assert session.message_count == session.next_seq == len(expected)
    assert deadlocks() == before
    assert_embedded_exactly_once([session.pk])
    assert deadlocks() == before


def test_concurrent_whole_captures_of_one_external_id_make_one_session(server):
    base, http, _project = server
    before = deadlocks()

    def send(k):
        # Each client sends the transcript as far as it got: the first 5 + k messages.
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} of the run"}
            for i in range(5 + k)
        ]
        return http.post(
            f"{base}/api/v1/sessions",
            json={"agent_name": "race", "external_id": "shared-run", "messages": messages},
            timeout=60,
        ).status_code

    with ThreadPoolExecutor(CLIENTS) as pool:
        statuses = list(pool.map(send, range(CLIENTS)))
    assert statuses.count(201) == 1 and statuses.count(200) == CLIENTS - 1, statuses
    session = Session.objects.get(external_id="shared-run")
    stored = list(session.messages.order_by("seq").values_list("seq", "content"))
    assert stored == [(i, f"turn {i} of the run") for i in range(5 + CLIENTS - 1)]
    assert deadlocks() == before
    assert_embedded_exactly_once([session.pk])


def test_purging_a_session_while_it_is_embedded(server):
    base, http, _project = server
    messages = [
        {"role": "user", "content": f"line {i} of a long log about the release " * 8}
        for i in range(800)
    ]
    doomed = http.post(
        f"{base}/api/v1/sessions", json={"agent_name": "race", "messages": messages}
    ).json()["id"]
    kept = http.post(
        f"{base}/api/v1/sessions",
        json={"agent_name": "race", "messages": messages[:50]},
    ).json()["id"]
    # Wait until the worker is in the middle of the big session.
    assert wait_for(
        lambda: MessageChunk.objects.filter(session__public_id=doomed).exists(), timeout=120
    )
    assert Message.objects.filter(session__public_id=doomed, enrichment_status="pending").exists()
    # What DELETE …?purge=true (an admin's) and the daily beat purge both run.
    session = Session.objects.get(public_id=doomed)
    started = time.monotonic()
    soft_delete(session)
    purge(session)
    assert time.monotonic() - started < 10
    assert not Message.objects.filter(session__public_id=doomed).exists()
    assert not Session.objects.filter(public_id=doomed).exists()
    # The worker carries on with the rest.
    assert_embedded_exactly_once([Session.objects.get(public_id=kept).pk])
