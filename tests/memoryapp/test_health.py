"""GET /healthz reports the database (with pgvector), the broker and the workers."""

import time

import pytest

from memoryapp import health

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_healthy_when_database_broker_and_a_worker_are_up(client, celery_worker_process):
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["database"]["pgvector"].startswith("0.")
    assert int(body["checks"]["database"]["postgres"].split(".")[0]) >= 16
    assert body["checks"]["broker"] == {"ok": True}
    assert body["checks"]["workers"]["count"] >= 1
    assert body["checks"]["workers"]["names"]


@pytest.mark.slow
def test_healthy_answer_comes_without_waiting_out_the_ping_timeout(client, celery_worker_process):
    # The ping used to wait its whole timeout for more replies: ~1 s per call, all green.
    for _ in range(3):
        started = time.monotonic()
        response = client.get("/healthz")
        took = time.monotonic() - started
        assert response.status_code == 200, response.json()
        assert took < health.WORKER_PING_TIMEOUT / 2, took


def test_unavailable_when_no_worker_answers(client, monkeypatch):
    monkeypatch.setattr(health.celery_app.control, "ping", lambda **kwargs: [])
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["workers"] == {
        "ok": False,
        "count": 0,
        "error": "no Celery worker answered a ping",
    }


def test_unavailable_when_the_broker_is_unreachable(client, settings, monkeypatch, tmp_path):
    # Point the Celery app at a socket where no Redis listens.
    monkeypatch.setattr(
        health.celery_app.conf, "broker_url", f"redis+socket://{tmp_path}/none.sock"
    )
    response = client.get("/healthz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["broker"]["ok"] is False
    assert "Error" in checks["broker"]["error"]
    assert checks["workers"]["error"] == "broker is down"


def test_unavailable_within_seconds_when_the_broker_does_not_answer(client, unresponsive_broker):
    # Without socket timeouts the check waited on the kernel's connect timeout (minutes).
    started = time.monotonic()
    response = client.get("/healthz")
    assert time.monotonic() - started < 5
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert "Timeout connecting" in checks["broker"]["error"]
    assert checks["workers"]["error"] == "broker is down"


def test_healthz_refuses_post(client):
    assert client.post("/healthz").status_code == 405
