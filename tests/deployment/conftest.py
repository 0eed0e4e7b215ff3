"""Fixtures of the deployment tests: separate PostgreSQL and Redis servers, the Dockerfile's
image as a folder, and web, worker and beat started as docker-compose.yaml starts them
(tests/deployment/harness.py). Each fixture stops what it started, whatever happened."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.deployment.harness import Deployment, Image, PostgresServer, RedisServer, read_compose

# One gunicorn process with two threads and one worker process: a loaded 2-core machine
# runs the suite, and every process loads the embedding model. Set as an operator's
# docker-compose.override.yaml (WEB_CONCURRENCY, WEB_THREADS) and .env (CELERY_CONCURRENCY)
# would; the sweeper runs every 5 s so that a test sees beat's work within seconds.
OVERRIDES = {"WEB_CONCURRENCY": "1", "WEB_THREADS": "2", "SWEEP_INTERVAL_SECONDS": "5"}
DOTENV = {"CELERY_CONCURRENCY": "1"}


@pytest.fixture(scope="session")
def deploy_root():
    # Not pytest's tmp_path: its folders are private to root, and PostgreSQL runs as another
    # user when the tests run as root.
    root = Path(tempfile.mkdtemp(prefix="memoryapp-deploy-"))
    os.chmod(root, 0o755)
    yield root
    if os.environ.get("KEEP_DEPLOY_TEST_FILES"):
        print(f"deployment test files kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def compose():
    return read_compose()


@pytest.fixture(scope="session")
def image(deploy_root):
    return Image(deploy_root / "image").build()


@pytest.fixture(scope="session")
def postgres(deploy_root):
    server = PostgresServer(deploy_root / "pg")
    try:
        yield server.init()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(deploy_root, compose):
    server = RedisServer(deploy_root / "redis", compose)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def new_deployment(root, image, postgres, redis_server) -> Deployment:
    return Deployment(
        root, image, postgres, redis_server, operator_env=dict(DOTENV), override_env=dict(OVERRIDES)
    )


@pytest.fixture(scope="module")
def deployment(deploy_root, image, postgres, redis_server):
    """web, worker and beat, up and healthy."""
    deploy = new_deployment(deploy_root / "app", image, postgres, redis_server)
    try:
        for service in ("web", "worker", "beat"):
            deploy.start(service)
        deploy.supervise()
        deploy.wait_healthy()
        yield deploy
    finally:
        deploy.close()
