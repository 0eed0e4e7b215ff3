"""A deployment started with a wrong setting: every process (web, worker, beat, started with
docker-compose.yaml's commands) exits at once with one line that names the variable and the
problem, status 2, no traceback, and leaves nothing running behind it."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.deployment.conftest import new_deployment
from tests.deployment.harness import free_port, substitute

pytestmark = pytest.mark.deployment

EXIT_TIMEOUT = 120.0

PROBLEMS = {
    # name: (the .env / environment that is wrong, words the one line must hold)
    "wrong DATABASE_URL password": (
        {"dotenv": {"POSTGRES_PASSWORD": "not-the-password"}},
        ["DATABASE_URL", "refused the password of user 'memoryapp'"],
    ),
    "unreachable Redis": (
        {"redis_port": True},
        ["REDIS_URL", "cannot reach Redis at 127.0.0.1:", "refused"],
    ),
    "missing SECRET_KEY": (
        {"env": {"SECRET_KEY": None}},
        ["SECRET_KEY is not set"],
    ),
}


@pytest.mark.parametrize("service", ["web", "worker", "beat"])
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_a_process_started_with_a_bad_setting_says_so_in_one_line_and_exits(
    problem, service, deploy_root, image, postgres, redis_server
):
    wrong, words = PROBLEMS[problem]
    root = deploy_root / "bad" / f"{service}-{problem.replace(' ', '-')}"
    deployment = new_deployment(root, image, postgres, redis_server)
    deployment.operator_env.update(wrong.get("dotenv", {}))
    overrides = dict(wrong.get("env", {}))
    if wrong.get("redis_port"):
        overrides["REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens
    process = deployment.start(service, **overrides)
    try:
        try:
            status = process.proc.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{service} still runs with a {problem}:\n{process.log.read_text()}")
        output = process.log.read_text()
        lines = [line for line in output.splitlines() if line.strip()]
        assert status == 2, output
        assert len(lines) == 1, output
        assert "Traceback" not in output
        assert lines[0].startswith(f"memoryapp {service}: ")
        for word in words:
            assert word in lines[0], lines[0]
        # Nothing of it is left: no process in its group, nobody on the web port.
        with pytest.raises(ProcessLookupError):
            os.killpg(process.proc.pid, 0)
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", deployment.web_port)) != 0
    finally:
        deployment.close()


def test_compose_itself_refuses_to_start_without_the_secrets(compose):
    """With compose, a missing SECRET_KEY or POSTGRES_PASSWORD stops `docker compose up`
    before any container starts (``${VAR:?message}``)."""
    env = compose["services"]["web"]["environment"]
    with pytest.raises(KeyError, match="SECRET_KEY: set SECRET_KEY"):
        substitute(env["SECRET_KEY"], {})
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD: set POSTGRES_PASSWORD"):
        substitute(env["DATABASE_URL"], {"SECRET_KEY": "x"})
