"""Stop the worker and Redis in the middle of a large import, start them again: every
message ends up embedded exactly once, nothing lost (issue: enrichment status and recovery)."""

import json
import os
import signal
import time

import pytest
from django.conf import settings
from django.db.models import Count

from memoryapp.celery import app as celery_app
from memoryapp.local import embedded
from sessions.capture.service import capture_session
from sessions.enrich.chunking import chunk_message, header_for
from sessions.models import Message, MessageChunk, Session
from sessions.tasks import sweep
from tests.conftest import TEST_OUTPUT, WorkerProcess, purge_test_queue
from tests.factories import ProjectFactory
from tests.waiting import wait_for
from transcripts.base import ParsedMessage, ParsedSession


def capture(project, name, count):
    messages = [
        ParsedMessage(
            role="user" if i % 2 == 0 else "assistant",
            content=f"{name} message {i}: we discussed the deploy pipeline and step {i} of it.",
            client_id=f"{name}-{i}",
        )
        for i in range(count)
    ]
    return capture_session(
        project,
        ParsedSession(source_format="api", agent_name="bench", external_id=name, messages=messages),
    )


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="stops the embedded Redis")
@pytest.mark.django_db(transaction=True)
def test_worker_killed_and_redis_stopped_mid_import_loses_nothing(django_db_setup):
    project = ProjectFactory()
    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / "recovery-worker-1.log")
    worker.start()
    try:
        for s in range(4):
            capture(project, f"import-{s}", 500)
        # Let it get going, then kill it without warning in the middle of the work.
        assert wait_for(lambda: MessageChunk.objects.exists(), timeout=120)
        worker.process.send_signal(signal.SIGKILL)
        worker.process.wait()
    finally:
        worker.stop()
    done_before = Message.objects.filter(enrichment_status="done").count()
    assert 0 < done_before < 2000, "the kill should land in the middle of the import"

    # Redis goes away too; capture still works (the poke fails quietly) and loses nothing.
    embedded.stop_redis()
    try:
        result = capture(project, "while-redis-was-down", 300)
        assert len(result.added) == 300
    finally:
        embedded.start_redis()

    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / "recovery-worker-2.log")
    worker.start()
    try:
        # What beat does each minute (on a fresh connection: the pooled ones died with Redis).
        with celery_app.connection_for_write() as conn:
            sweep.apply_async(queue=settings.CELERY_TASK_DEFAULT_QUEUE, connection=conn)
        assert wait_for(
            lambda: not Message.objects.exclude(enrichment_status="done").exists(), timeout=600
        ), f"still pending: {Message.objects.exclude(enrichment_status='done').count()}"
    finally:
        worker.stop()

    assert Message.objects.count() == 2300
    # Exactly once: each message has exactly the chunks its text makes, no more.
    per_message = dict(
        MessageChunk.objects.values_list("message_id")
        .annotate(n=Count("id"))
        .values_list("message_id", "n")
    )
    for message in Message.objects.all():
        expected = len(
            chunk_message(message.content, header=header_for(message.role, message.author))
        )
        assert per_message.get(message.id, 0) == expected


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="restarts the embedded PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_postgres_restarted_during_imports_clients_get_json_503_and_nothing_is_lost(
    live_server,
):
    """A client imports file after file, retrying on 503 as the README says, while the
    worker embeds; PostgreSQL is restarted in the middle. Clients only ever see JSON (201 or
    503 with Retry-After), every file ends stored once, every message embedded once."""
    import threading

    import requests
    from django.db import connection

    from teams.models import ApiToken

    project = ProjectFactory()
    _, raw = ApiToken.issue(project, name="restart")
    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / "restart-worker.log")
    worker.start()
    files = 12
    statuses, bodies = [], []

    def client():
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {raw}"
        for f in range(files):
            body = json.dumps(
                {
                    "id": f"restart-file-{f}",  # a retry of a committed import adds nothing
                    "messages": [
                        {
                            "role": "user" if i % 2 == 0 else "assistant",
                            "content": f"file {f} turn {i}: the migration of table {i} went fine",
                        }
                        for i in range(400)
                    ],
                }
            ).encode()
            while True:
                try:
                    response = http.post(
                        f"{live_server.url}/api/v1/import?format=openai_chat",
                        data=body,
                        headers={"Content-Type": "application/octet-stream"},
                        timeout=60,
                    )
                except requests.ConnectionError:
                    time.sleep(0.5)  # the test server itself is fine; be safe anyway
                    continue
                statuses.append(response.status_code)
                bodies.append((response.headers.get("Content-Type", ""), response.headers))
                if response.status_code != 503:
                    break
                time.sleep(min(float(response.headers.get("Retry-After", 1)), 2))

    try:
        thread = threading.Thread(target=client)
        thread.start()
        assert wait_for(lambda: len(statuses) >= 2, timeout=120)
        embedded.stop_postgres()
        time.sleep(3)
        embedded.start_postgres()
        thread.join(timeout=600)
        assert not thread.is_alive()
        connection.close()  # the test's own connection died with the server
        # What beat does each minute: pick up what the restart interrupted.
        with celery_app.connection_for_write() as conn:
            sweep.apply_async(queue=settings.CELERY_TASK_DEFAULT_QUEUE, connection=conn)
        assert wait_for(
            lambda: not Message.objects.exclude(enrichment_status="done").exists(), timeout=600
        ), f"still pending: {Message.objects.exclude(enrichment_status='done').count()}"
    finally:
        worker.stop()

    # 200: a retry of an import whose first try committed just before the restart.
    assert set(statuses) <= {200, 201, 503}, statuses
    assert 503 in statuses, "the restart should have been seen by the client"
    assert Session.objects.filter(project=project).count() == files
    for (content_type, headers), status in zip(bodies, statuses, strict=True):
        assert content_type.startswith("application/json"), (status, content_type)
        if status == 503:
            assert int(headers["Retry-After"]) > 0
    assert Message.objects.filter(session__project=project).count() == files * 400
    per_message = dict(
        MessageChunk.objects.values_list("message_id")
        .annotate(n=Count("id"))
        .values_list("message_id", "n")
    )
    for message in Message.objects.filter(session__project=project):
        expected = len(chunk_message(message.content, header=header_for(message.role, "")))
        assert per_message.get(message.id, 0) == expected
