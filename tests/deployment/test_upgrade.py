"""An upgrade as docs/operations.md says to do it: the previous release runs (its own
Dockerfile and docker-compose.yaml, from `git archive` of its commit) and is used; then web,
worker and beat are stopped, and this checkout's are started on the same database and Redis:
the web start migrates forward on live data, and nothing captured before is lost."""

from __future__ import annotations

import os
import subprocess
import tarfile
import uuid

import pytest

from tests.deployment.conftest import DOTENV, OVERRIDES
from tests.deployment.harness import (
    REPO_ROOT,
    Deployment,
    Image,
    PostgresServer,
    read_compose,
    wait_until,
)
from tests.deployment.test_deployment import (
    EMBED_TIMEOUT,
    capture,
    embedded_and_found,
    messages_of,
    site,
)

pytestmark = pytest.mark.deployment

# The release upgraded from: the last commit before core/ (its image builds; migration
# agent_sessions.0023 came after it). Move it forward at each release.
PREVIOUS_RELEASE = os.environ.get("MEMORYAPP_PREVIOUS_RELEASE", "98e78df")


@pytest.fixture(scope="module")
def previous_source(deploy_root):
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{PREVIOUS_RELEASE}^{{commit}}"], cwd=REPO_ROOT, check=False
    )
    if known.returncode:
        pytest.skip(f"commit {PREVIOUS_RELEASE} is not in this clone (a shallow clone?)")
    folder = deploy_root / "previous-source"
    folder.mkdir()
    archive = deploy_root / "previous.tar"
    subprocess.run(
        ["git", "archive", "--format=tar", f"--output={archive}", PREVIOUS_RELEASE],
        cwd=REPO_ROOT,
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder


def deployment_of(root, image, postgres, redis_server, source) -> Deployment:
    return Deployment(
        root,
        image,
        postgres,
        redis_server,
        read_compose(source),
        operator_env=dict(DOTENV),
        override_env=dict(OVERRIDES),
    )


def test_the_new_release_migrates_the_previous_ones_database_and_loses_nothing(
    deploy_root, image, redis_server, previous_source
):
    root = deploy_root / "upgrade"
    postgres = PostgresServer(root / "pg").init()
    old = deployment_of(
        root / "old",
        Image(root / "old-image", source=previous_source).build(),
        postgres,
        redis_server,
        previous_source,
    )
    new = deployment_of(root / "new", image, postgres, redis_server, REPO_ROOT)
    new.web_port = old.web_port  # the proxy forwards to the same port
    try:
        for service in ("web", "worker", "beat"):
            old.start(service)
        old.wait_healthy()
        made = old.manage("create_api_token", "--team", "demo", "--project", "demo")
        assert made.returncode == 0, made.stderr
        agent = site(old)
        agent.headers["Authorization"] = f"Bearer {made.stdout.strip().splitlines()[-1]}"
        before = {}
        for text in (
            "The release train leaves every second Thursday at noon",
            "Feature flags live in LaunchDarkly and are cleaned up monthly",
        ):
            response = capture(old, agent, text, f"upgrade-{uuid.uuid4().hex[:8]}")
            assert response.status_code == 201, response.text
            before[str(response.json()["id"])] = text
        for session_id, text in before.items():
            wait_until(
                lambda s=session_id, t=text: embedded_and_found(old, agent, s, t),
                EMBED_TIMEOUT,
                "the previous release's embedding",
                interval=2.0,
            )

        # The upgrade: stop the old web, worker and beat, start the new ones.
        for service in ("web", "beat", "worker"):
            old.stop(service)
        for service in ("web", "worker", "beat"):
            new.start(service)
        new.wait_healthy()
        web_log = new.processes["web"].log.read_text()
        assert "Applying agent_sessions.0023" in web_log, web_log[-2000:]
        plan = new.manage("migrate", "--plan")
        assert "No planned migration operations." in plan.stdout, plan.stdout + plan.stderr

        # The same token, the same sessions, found by meaning with the old vectors.
        for session_id, text in before.items():
            assert messages_of(new, agent, session_id) == [text, f"Noted: {text}"]
            assert embedded_and_found(new, agent, session_id, text)
        response = capture(new, agent, "After the upgrade, deploys need two approvals")
        assert response.status_code == 201, response.text
        session_id = str(response.json()["id"])
        wait_until(
            lambda: embedded_and_found(new, agent, session_id, "how many approvals for a deploy"),
            EMBED_TIMEOUT,
            "the new release's embedding",
            interval=2.0,
        )
    finally:
        old.close()
        new.close()
        postgres.stop()
