"""The team deployment, used as its users use it: web (gunicorn), worker and beat started by
docker-compose.yaml's commands on separate PostgreSQL and Redis servers, reached through a
TLS proxy's headers (tests/deployment/harness.py says how it runs without Docker).

The tests of this module share one deployment and run in order: the restarts come last."""

from __future__ import annotations

import os
import re
import subprocess
import uuid

import pytest
import requests

from tests.deployment.harness import (
    ADMIN_PASSWORD,
    REPO_ROOT,
    SITE_HOST,
    PostgresServer,
    pg_bin,
    wait_until,
)

pytestmark = pytest.mark.deployment

EMBED_TIMEOUT = 180.0


def site(deployment) -> requests.Session:
    return deployment.http()


def url(deployment, path: str) -> str:
    return deployment.base_url + path


@pytest.fixture(scope="module")
def token(deployment):
    """An API token, made as docs/operations.md says (`manage.py create_api_token`)."""
    made = deployment.manage("create_api_token", "--team", "demo", "--project", "demo")
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def agent(deployment, token):
    session = site(deployment)
    session.headers["Authorization"] = f"Bearer {token}"
    return session


def capture(deployment, agent, text: str, external_id: str | None = None) -> requests.Response:
    return agent.post(
        url(deployment, "/api/v1/sessions"),
        json={
            "agent_name": "deploy-agent",
            "external_id": external_id or uuid.uuid4().hex,
            "title": "deployment check",
            "messages": [
                {"role": "user", "content": text, "client_id": "m1"},
                {"role": "assistant", "content": f"Noted: {text}", "client_id": "m2"},
            ],
        },
        timeout=60,
    )


def search(deployment, agent, q: str, mode: str) -> list[dict]:
    response = agent.get(
        url(deployment, "/api/v1/search"), params={"q": q, "mode": mode, "limit": 20}, timeout=60
    )
    assert response.status_code == 200, response.text
    return response.json()["results"]


def found_sessions(results: list[dict]) -> set[str]:
    return {
        str(r["session"]["id"] if isinstance(r["session"], dict) else r["session"]) for r in results
    }


def embedded_and_found(deployment, agent, session_id: str, text: str) -> bool:
    """The worker has embedded every message and a search by meaning alone finds the session."""
    pipeline = agent.get(url(deployment, "/api/v1/pipeline"), timeout=30).json()
    if pipeline["messages"]["pending"]:
        return False
    return session_id in found_sessions(search(deployment, agent, text, "semantic"))


def test_the_web_start_applied_the_migrations_and_made_the_admin(deployment):
    plan = deployment.manage("migrate", "--plan")
    assert plan.returncode == 0, plan.stderr
    assert "No planned migration operations." in plan.stdout
    assert deployment.postgres.query("SELECT extversion FROM pg_extension WHERE extname='vector'")
    web_log = deployment.processes["web"].log.read_text()
    assert "Created admin user 'admin' with the password from MEMORYAPP_ADMIN_PASSWORD." in web_log
    assert ADMIN_PASSWORD not in web_log


def test_health_reports_postgres_pgvector_redis_and_the_worker(deployment):
    health = deployment.health()
    assert health["status"] == "ok"
    assert health["checks"]["database"]["pgvector"].startswith("0.8")
    assert health["checks"]["workers"]["count"] >= 1


def test_plain_http_is_redirected_to_https(deployment):
    response = requests.get(
        url(deployment, "/accounts/login/"), headers={"Host": SITE_HOST}, allow_redirects=False
    )
    assert response.status_code == 301
    assert response.headers["Location"] == f"https://{SITE_HOST}/accounts/login/"


def sign_in(browser, deployment, password: str) -> requests.Response:
    login = url(deployment, "/accounts/login/")
    page = browser.get(login, timeout=30)
    assert page.status_code == 200
    assert "Strict-Transport-Security" in page.headers
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return browser.post(
        login,
        data={"username": "admin", "password": password, "csrfmiddlewaretoken": csrf},
        headers={"Referer": f"https://{SITE_HOST}/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )


def test_the_admin_signs_in_through_the_proxy(deployment):
    browser = site(deployment)
    refused = sign_in(browser, deployment, "not-the-password")
    assert refused.status_code == 200, refused.text[:500]
    assert "sessionid" not in browser.cookies
    signed_in = sign_in(browser, deployment, ADMIN_PASSWORD)
    assert signed_in.status_code == 302, signed_in.text[:500]
    cookies = signed_in.raw.headers.getlist("Set-Cookie")
    session_cookie = [c for c in cookies if c.startswith("sessionid=")]
    assert session_cookie and "; Secure" in session_cookie[0], cookies
    home = browser.get(url(deployment, "/"), timeout=30)
    assert home.status_code == 200
    assert "admin" in home.text


def test_the_ui_static_files_come_from_whitenoise(deployment):
    browser = site(deployment)
    page = browser.get(url(deployment, "/accounts/login/"), timeout=30)
    stylesheets = re.findall(r'href="(/static/[^"]+\.css)"', page.text)
    assert stylesheets, page.text[:1000]
    for path in stylesheets:
        plain = browser.get(url(deployment, path), timeout=30)
        assert plain.status_code == 200, path
        assert plain.headers["Content-Type"].startswith("text/css")
        # collectstatic compressed it at image build; whitenoise serves the gzip copy.
        packed = browser.get(
            url(deployment, path), headers={"Accept-Encoding": "gzip"}, stream=True, timeout=30
        )
        assert packed.headers.get("Content-Encoding") == "gzip", path
    assert browser.get(url(deployment, "/static/no-such-file.css"), timeout=30).status_code == 404


def test_a_capture_is_embedded_by_the_worker_and_found(deployment, agent):
    text = "The billing service retries webhooks with exponential backoff for 3 days"
    response = capture(deployment, agent, text)
    assert response.status_code == 201, response.text
    session_id = str(response.json()["id"])
    # Keyword search finds it the moment it is committed, before any worker ran.
    assert session_id in found_sessions(search(deployment, agent, "billing webhooks", "keyword"))
    wait_until(
        lambda: embedded_and_found(
            deployment, agent, session_id, "how long are payment callbacks retried"
        ),
        EMBED_TIMEOUT,
        "the capture's embedding by the worker",
        interval=2.0,
    )
    hybrid = search(deployment, agent, "webhook retries", "hybrid")
    assert session_id in found_sessions(hybrid)


def test_beat_sends_the_sweeper_and_the_worker_runs_it(deployment):
    beat_log = deployment.processes["beat"].log
    worker_log = deployment.processes["worker"].log
    wait_until(
        lambda: "Sending due task sweep-enrichment" in beat_log.read_text(),
        120,
        "beat sending the sweeper",
        log=beat_log,
    )
    wait_until(
        lambda: re.search(
            r"Task sessions\.tasks\.sweep\[[\w-]+\] succeeded", worker_log.read_text()
        ),
        120,
        "the worker running the sweeper",
        log=worker_log,
    )
    assert deployment.processes["beat"].running


# One subject per service, so that a search by meaning tells the captures apart.
RESTART_CAPTURES = {
    "web": "The nightly backup job copies the orders database to cold storage at 2am",
    "worker": "Frontend builds use pnpm workspaces and vite for the analytics dashboard",
    "beat": "The support rota rotates every Monday between four engineers",
    "redis": "The Kubernetes cluster autoscaler adds nodes when pods stay pending",
    "postgres": "Invoices are rendered to PDF with weasyprint and emailed to customers",
}


def beat_starts(deployment) -> int:
    return (deployment.root / "beat.log").read_text().count("beat: Starting...")


def restart(deployment, service: str) -> None:
    if service == "beat":
        # /healthz does not ask beat: wait for the new one's "Starting" (compose's check).
        seen = beat_starts(deployment)
        deployment.start(service)
        wait_until(lambda: beat_starts(deployment) > seen, 120, "beat's start")
    elif service in ("web", "worker"):
        deployment.start(service)
    elif service == "redis":
        deployment.redis.start()
    else:
        deployment.postgres.start()


def messages_of(deployment, agent, session_id: str) -> list[str]:
    response = agent.get(
        url(deployment, f"/api/v1/sessions/{session_id}/messages"), params={"limit": 100}
    )
    assert response.status_code == 200, response.text
    return [m["content"] for m in response.json()["results"]]


def test_stopping_and_starting_each_service_loses_no_captured_message(deployment, agent):
    captured: dict[str, str] = {}  # session id -> its text
    for service, text in RESTART_CAPTURES.items():
        external_id = f"restart-{service}-{uuid.uuid4().hex[:8]}"
        # Stop it (as `docker compose stop SERVICE`), capture while it is down, start it.
        if service in ("web", "worker", "beat"):
            deployment.stop(service)
        elif service == "redis":
            deployment.redis.stop()
        else:
            deployment.postgres.stop()
        if service == "web":
            with pytest.raises(requests.ConnectionError):
                capture(deployment, agent, text, external_id)
        elif service == "postgres":
            refused = capture(deployment, agent, text, external_id)
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"] == "30"
        else:
            # Without a worker, beat or Redis, capture goes on.
            response = capture(deployment, agent, text, external_id)
            assert response.status_code == 201, (service, response.text)
            captured[str(response.json()["id"])] = text
        restart(deployment, service)
        deployment.wait_healthy()
        if service in ("web", "postgres"):
            # The client retries what failed, with the same external_id.
            response = capture(deployment, agent, text, external_id)
            assert response.status_code == 201, (service, response.text)
            captured[str(response.json()["id"])] = text
    assert len(captured) == len(RESTART_CAPTURES)
    # A worker that loses Redis while it holds an unacknowledged task can exit ("Unrecoverable
    # error", kombu 5.7); compose's restart policy, which the harness applies, brings it back.
    print(f"restarted by the restart policy: {deployment.restarts or 'none'}")
    for session_id, text in captured.items():
        assert messages_of(deployment, agent, session_id) == [text, f"Noted: {text}"]
        wait_until(
            lambda session_id=session_id, text=text: embedded_and_found(
                deployment, agent, session_id, text
            ),
            EMBED_TIMEOUT,
            f"the embedding of {text!r}",
            interval=2.0,
        )


def documented_block(marker: str) -> str:
    """The shell block that follows ``<!-- marker... -->`` in docs/operations.md."""
    text = (REPO_ROOT / "docs" / "operations.md").read_text()
    match = re.search(rf"<!-- {marker}\b[^>]*-->\n```sh\n(.*?)```", text, re.S)
    assert match, f"docs/operations.md has no {marker} block"
    return match.group(1)


def run_documented(marker: str, cwd, **env: str) -> None:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", documented_block(marker)],
        cwd=cwd,
        env=dict(os.environ, PATH=f"{pg_bin()}:{os.environ['PATH']}", **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{marker}:\n{result.stdout}\n{result.stderr}"


def snapshot(deployment, agent) -> dict:
    """What users see: the sessions with their messages, the memories, search answers."""
    sessions = agent.get(url(deployment, "/api/v1/sessions"), params={"limit": 500}).json()
    memories = agent.get(url(deployment, "/api/v1/memories"), params={"limit": 100}).json()
    searches = {}
    for q in ("webhook retries", "how are invoices sent to customers", "pnpm"):
        searches[q] = [
            (
                r["session"]["id"] if isinstance(r["session"], dict) else r["session"],
                r["message"]["seq"],
                round(r["relevance"], 4),
            )
            for r in search(deployment, agent, q, "hybrid")
        ]
    return {
        "sessions": sorted(
            (s["id"], s["title"], tuple(messages_of(deployment, agent, s["id"])))
            for s in sessions["results"]
        ),
        "memories": sorted((m["id"], m["type"], m["content"]) for m in memories["results"]),
        "search": searches,
    }


def test_a_dump_of_the_running_deployment_restored_into_a_fresh_server_answers_the_same(
    deployment, agent, deploy_root
):
    recorded = agent.post(
        url(deployment, "/api/v1/memories"),
        json={"type": "fact", "content": "The staging database is restored from backups weekly"},
        timeout=60,
    )
    assert recorded.status_code == 201, recorded.text

    def idle():
        state = agent.get(url(deployment, "/api/v1/pipeline"), timeout=30).json()
        return not state["messages"]["pending"] and not state["sessions"]["pending"]

    wait_until(idle, EMBED_TIMEOUT, "the enrichment of every session", interval=2.0)
    before = snapshot(deployment, agent)
    assert before["sessions"]
    assert before["memories"] and all(before["search"].values())
    dumps = deploy_root / "dumps"
    dumps.mkdir()
    app_url = deployment.env()["DATABASE_URL"]
    run_documented("backup-procedure", dumps, DATABASE_URL=app_url)
    (dump,) = dumps.glob("memoryapp-*.dump")

    fresh = PostgresServer(deploy_root / "pg-restored").init()
    original = deployment.postgres
    try:
        for service in ("web", "worker", "beat"):
            deployment.stop(service)
        deployment.postgres = fresh
        run_documented(
            "restore-procedure",
            dumps,
            DATABASE_URL=deployment.env()["DATABASE_URL"],
            DUMP=dump.name,
        )
        for service in ("web", "worker", "beat"):
            deployment.start(service)
        deployment.wait_healthy()
        after = snapshot(deployment, agent)
        assert after == before
    finally:
        for service in ("web", "worker", "beat"):
            deployment.stop(service)
        deployment.postgres = original
        fresh.stop()
