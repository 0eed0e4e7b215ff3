"""Shared fixtures: real PostgreSQL (pytest-django's test database on the configured server),
a real Celery worker process on real Redis, and the owner/teammate/outsider trio."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote

import pytest
import requests
from django.conf import settings
from django.db import connection

from memoryapp.celery import app as celery_app
from teams.models import Role
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory, UserFactory

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = REPO_ROOT.parent / "shared"
TEST_OUTPUT = REPO_ROOT / "test-output"


def database_url_of(settings_dict: dict) -> str:
    host = quote(
        settings_dict.get("HOST") or settings_dict.get("OPTIONS", {}).get("host", ""), safe=""
    )
    user = quote(settings_dict.get("USER") or "")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password)}@" if password else f"{user}@"
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgresql://{auth}{host}{port}/{settings_dict['NAME']}"


def child_env() -> dict[str, str]:
    """The environment of a process the tests start (a worker, a writer, a reader): this
    one's, on the test database and the tests' Redis."""
    return dict(
        os.environ,
        DATABASE_URL=database_url_of(connection.settings_dict),
        DJANGO_SETTINGS_MODULE="memoryapp.settings_test",
        SECRET_KEY=settings.SECRET_KEY,
        REDIS_URL=settings.CELERY_BROKER_URL,
    )


class WorkerProcess:
    """A real `celery worker` subprocess on the test database and the tests' own queue."""

    # The workers started and not stopped yet: a test's teardown waits for them to finish
    # what it left them before the database is emptied (``quiet_before_flush``).
    running: ClassVar[set[WorkerProcess]] = set()

    def __init__(self, log_path: Path, concurrency: int = 1):
        self.name = f"test-{uuid.uuid4().hex[:8]}@%h"
        self.log_path = log_path
        self.concurrency = concurrency
        self.process: subprocess.Popen | None = None

    @property
    def hostname(self) -> str:
        return self.name.replace("%h", os.uname().nodename)

    def start(self, timeout: float = 60) -> None:
        env = child_env()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryapp",
                "worker",
                "--queues",
                settings.CELERY_TASK_DEFAULT_QUEUE,
                "--hostname",
                self.name,
                "--concurrency",
                str(self.concurrency),
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        WorkerProcess.running.add(self)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited early; see {self.log_path}")
            # A fresh connection each time: pooled ones die with a Redis restart.
            with celery_app.connection_for_write() as conn:
                if celery_app.control.ping(
                    destination=[self.hostname], timeout=0.5, connection=conn
                ):
                    return
        raise RuntimeError(f"worker did not answer a ping in {timeout} s; see {self.log_path}")

    def wait_idle(self, timeout: float = 120) -> bool:
        """Wait until the worker runs no task, holds none and none waits in the queue (False
        if that is still not so after ``timeout``, or the worker does not answer). A task
        enqueues the next one before it ends (embedding, then enrichment, then extraction),
        so an empty queue and an idle worker seen together mean the chain has ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return True
            with celery_app.connection_for_write() as conn:
                queued = queue_length(conn)
                inspect = celery_app.control.inspect(
                    destination=[self.hostname], timeout=1, connection=conn
                )
                active, reserved = inspect.active(), inspect.reserved()
                queued += queue_length(conn)
            answered = active is not None and reserved is not None
            if (
                answered
                and not queued
                and not active.get(self.hostname)
                and not reserved.get(self.hostname)
            ):
                return True
            time.sleep(0.5)
        return False

    def stop(self, timeout: float = 30) -> None:
        WorkerProcess.running.discard(self)
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def purge_test_queue() -> None:
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(settings.CELERY_TASK_DEFAULT_QUEUE)


def queue_length(conn) -> int:
    """Task messages waiting in the tests' queue (not yet taken by a worker)."""
    # The queue is a Redis list (the tests send no priorities, which would add others).
    return conn.default_channel.client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)


@contextmanager
def eager_worker(log_name: str, concurrency: int = 2):
    """A real worker with two processes, as `make run` has (embedding and session enrichment
    run at the same time), enriching sessions the moment they are captured."""
    saved = os.environ.get("SESSION_ENRICH_DELAY_SECONDS")
    os.environ["SESSION_ENRICH_DELAY_SECONDS"] = "0"
    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / log_name, concurrency=concurrency)
    try:
        worker.start()
    finally:
        if saved is None:
            os.environ.pop("SESSION_ENRICH_DELAY_SECONDS")
        else:
            os.environ["SESSION_ENRICH_DELAY_SECONDS"] = saved
    try:
        yield worker
    finally:
        worker.stop()


def busy_connections() -> list[tuple]:
    """The test database's other connections that are inside a transaction or running a
    statement: a live-server request, a worker's task, a writer process. Idle ones hold no
    lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, now() - xact_start, left(query, 300) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend' AND state <> 'idle'"
        )
        return cursor.fetchall()


def wait_until_quiet(timeout: float = 120) -> None:
    """Wait until nothing but the test itself works on the test database: every running
    worker idle with an empty queue, then no other connection in a transaction. Fails the
    test, naming what is still at work, if that takes longer than ``timeout``."""
    deadline = time.monotonic() + timeout
    for worker in list(WorkerProcess.running):
        if not worker.wait_idle(max(deadline - time.monotonic(), 1)):
            pytest.fail(f"worker {worker.hostname} still busy after {timeout} s")
    busy = busy_connections()
    while busy and time.monotonic() < deadline:
        time.sleep(0.2)
        busy = busy_connections()
    if busy:
        pytest.fail(f"connections still at work on the test database after {timeout} s: {busy}")


@pytest.fixture(scope="module")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real worker for the tests of one module (stopped after it, so that tests that start
    and kill workers of their own have the queue to themselves). Tests using it need
    committed data: mark them ``@pytest.mark.django_db(transaction=True)``."""
    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / "celery-worker.log")
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture(autouse=True)
def quiet_before_flush(request):
    """After a test with committed data, wait until nothing else works on the test database
    before the flush empties it. A test that waits for its messages to be embedded ends
    while the worker goes on with the next task of the chain (the session's enrichment, then
    memory extraction): the flush's TRUNCATE then waits for that task's locks while the task
    waits for a table the TRUNCATE already holds, and PostgreSQL breaks the deadlock by
    failing one of them, the flush as often as not. The same holds for a live-server request
    still running after its client gave up."""
    yield
    marker = request.node.get_closest_marker("django_db")
    if {"transactional_db", "live_server"} & set(request.fixturenames) or (
        marker and marker.kwargs.get("transaction")
    ):
        wait_until_quiet()


@pytest.fixture
def live_http(live_server):
    """``live_http(token)``: an HTTP session to the live server with that token, closed after
    the test. A session left open keeps its keep-alive connections, and the server a thread
    and a database connection for each, after the test."""
    opened: list[requests.Session] = []

    def open_session(token: str, pool: int = 10) -> requests.Session:
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {token}"
        http.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=pool))
        opened.append(http)
        return http

    yield open_session
    for http in opened:
        http.close()


@pytest.fixture(scope="session", autouse=True)
def close_search_connections(django_db_setup):
    """Searches outside a transaction (live-server and transactional tests) leave the
    search pool's threads connected to the test database; close them before it is dropped."""
    yield
    from search.speed import parallel

    parallel.shutdown()


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.fail(f"{SHARED_DIR} is missing: the tests read samples and data from ../shared")
    return SHARED_DIR


@pytest.fixture
def team(db):
    return TeamFactory()


@pytest.fixture
def project(team):
    return ProjectFactory(team=team)


@pytest.fixture
def owner(team):
    return MembershipFactory(team=team, role=Role.OWNER).user


@pytest.fixture
def teammate(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user


@pytest.fixture
def outsider(db):
    """A user of another team, who must never see anything of ``team``."""
    other = TeamFactory()
    ProjectFactory(team=other)
    return MembershipFactory(team=other, role=Role.OWNER).user


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def clean_vector_index(db):
    """Rebuild the chunks' HNSW index (empty: the test has no rows yet). Earlier tests'
    rolled-back chunks stay in it as dead entries, and a graph reached through them can
    answer an index scan with nothing; a test about the index itself starts clean."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX chunk_embedding_hnsw")


@pytest.fixture
def unresponsive_broker(monkeypatch):
    """Point the Celery app at a TCP port that takes no connection: its backlog is full, so a
    connect hangs (as with a broker host that went away) until the client's own timeout."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    waiting = []
    for _ in range(4):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        waiting.append(sock)
    monkeypatch.setattr(celery_app.conf, "broker_url", f"redis://127.0.0.1:{port}/0")
    yield
    for sock in waiting:
        sock.close()
    server.close()
