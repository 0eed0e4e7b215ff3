"""The structure of docker-compose.yaml and the Dockerfile: the services, images, commands,
health checks, volumes and environment the team deployment depends on. No Docker engine runs
on these machines; tests/deployment runs the same commands and environment for real."""

import os
import re
import secrets
import subprocess
import sys
import tomllib

import pytest
import yaml

from tests.conftest import REPO_ROOT

APP_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((REPO_ROOT / "docker-compose.yaml").read_text())


def command_text(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else command


def test_services_and_images(compose):
    services = compose["services"]
    assert set(services) == {"db", "redis", *APP_SERVICES}
    assert services["db"]["image"].startswith("pgvector/pgvector:pg")
    assert int(services["db"]["image"].rsplit("pg", 1)[1]) >= 16
    assert services["redis"]["image"].startswith("redis:")
    images = {services[name]["image"] for name in APP_SERVICES}
    assert images == {"memoryapp:latest"}, "web, worker and beat run one image"
    assert all(services[name]["build"] == "." for name in APP_SERVICES)


def test_commands(compose):
    services = compose["services"]
    web = command_text(services["web"])
    assert "docker/web.sh" in web
    script = (REPO_ROOT / "docker" / "web.sh").read_text()
    assert "manage.py migrate --noinput" in script
    assert re.search(r"exec gunicorn memoryapp\.wsgi", script)
    assert re.search(r"celery -A memoryapp worker\b", command_text(services["worker"]))
    assert re.search(r"celery -A memoryapp beat\b", command_text(services["beat"]))
    assert "--appendonly yes" in command_text(services["redis"])


def test_health_checks_and_start_order(compose):
    services = compose["services"]
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    for name in APP_SERVICES:
        depends = services[name]["depends_on"]
        assert depends == {
            "db": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }


def test_named_volumes_hold_the_data(compose):
    assert set(compose["volumes"]) == {"pgdata", "redisdata"}
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["db"]["volumes"]
    assert "redisdata:/data" in compose["services"]["redis"]["volumes"]


def test_secrets_come_from_the_environment(compose):
    env = compose["services"]["web"]["environment"]
    for name in APP_SERVICES:
        assert compose["services"][name]["environment"] == env
    assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")
    assert "${POSTGRES_PASSWORD:?" in env["DATABASE_URL"]
    assert compose["services"]["db"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?"
    )
    assert env["DEBUG"] == "0"
    # The URLs name the compose services.
    assert re.match(r"postgres://memoryapp:.*@db:5432/memoryapp$", env["DATABASE_URL"])
    assert env["REDIS_URL"] == "redis://redis:6379/0"


def test_every_variable_the_compose_file_sets_is_read_by_the_app(compose):
    env = compose["services"]["web"]["environment"]
    source = "\n".join(
        path.read_text()
        for folder in ("memoryapp", "teams", "sessions", "search")
        for path in (REPO_ROOT / folder).rglob("*.py")
    )
    unread = [name for name in env if f'"{name}"' not in source]
    assert unread == []


def test_the_app_settings_load_with_the_compose_environment(compose):
    env = compose_environment(compose, SECRET_KEY="x", POSTGRES_PASSWORD="x")
    code = (
        "from django.conf import settings as s; d = s.DATABASES['default'];"
        "print(d['HOST'], d['NAME'], s.CELERY_BROKER_URL, s.DEBUG)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["db", "memoryapp", "redis://redis:6379/0", "False"]


def test_dockerfile_installs_cpu_torch_first_and_copies_every_package():
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("# ") and "FROM python:3.11" in dockerfile
    torch_at = dockerfile.index("torch==2.13.0")
    assert torch_at < dockerfile.index("pip install --no-cache-dir .")
    packages = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
    for pattern in packages:
        folder = pattern.rstrip("*")
        assert f"COPY {folder} ./{folder}" in dockerfile, f"{folder} is not copied into the image"
    assert 'CMD ["sh", "docker/web.sh"]' in dockerfile
    assert "USER memoryapp" in dockerfile


def compose_environment(compose, **required) -> dict[str, str]:
    """The app services' environment as compose would pass it: ``${VAR:-default}`` gives
    its default, ``${VAR:?message}`` the value in ``required`` (as the operator's .env)."""

    def substitute(match):
        name, kind, rest = match.groups()
        return rest if kind == "-" else required[name]

    env = {
        key: re.sub(r"\$\{(\w+):([?-])([^}]*)\}", substitute, str(value))
        for key, value in compose["services"]["web"]["environment"].items()
    }
    return {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "memoryapp.settings"}


@pytest.fixture
def production_env(compose, tmp_path):
    env = compose_environment(
        compose, SECRET_KEY=secrets.token_urlsafe(50), POSTGRES_PASSWORD="a-password"
    )
    env["MEMORYAPP_VAR_DIR"] = str(tmp_path)
    return env


def test_check_deploy_is_clean_with_the_compose_environment(production_env):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=production_env,
        capture_output=True,
        text=True,
    )
    issues = set(re.findall(r"\(([\w.]+\.[EWI]\d+)\)", result.stdout + result.stderr))
    assert not issues, result.stdout + result.stderr
    assert result.returncode == 0, result.stderr


def test_the_compose_deployment_is_https_only(production_env):
    code = (
        "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, "
        "s.SECURE_PROXY_SSL_HEADER)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=production_env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(maxsplit=4) == [
        "True",
        "True",
        "True",
        "31536000",
        "('HTTP_X_FORWARDED_PROTO', 'https')",
    ]
