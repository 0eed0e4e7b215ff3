"""Settings come from the environment and fail at start, naming the variable, when wrong."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_int, env_list, env_str
from tests.conftest import REPO_ROOT


def load_settings(**env) -> subprocess.CompletedProcess:
    """Import the real settings module in a fresh interpreter with ``env`` on top."""
    full_env = {k: v for k, v in os.environ.items() if k not in env or env[k] is not None}
    full_env.update({k: v for k, v in env.items() if v is not None})
    full_env["DJANGO_SETTINGS_MODULE"] = "memoryapp.settings"
    return subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.DEBUG)"],
        cwd=REPO_ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_debug_off_without_a_secret_key_refuses_to_start(tmp_path):
    result = load_settings(
        DEBUG="0",
        SECRET_KEY="",
        DATABASE_URL="postgres://u@localhost/db",
        REDIS_URL="redis://localhost:6379/0",
        MEMORYAPP_VAR_DIR=str(tmp_path),
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr


def test_a_malformed_boolean_names_the_variable():
    result = load_settings(DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_a_non_postgres_database_url_is_refused():
    result = load_settings(DATABASE_URL="sqlite:///db.sqlite3", SECRET_KEY="x")
    assert result.returncode != 0
    assert "DATABASE_URL must point at PostgreSQL" in result.stderr


def test_external_urls_are_used_as_given():
    code = (
        "from django.conf import settings; d = settings.DATABASES['default'];"
        "print(d['HOST'], d['PORT'], d['NAME'], settings.CELERY_BROKER_URL)"
    )
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="memoryapp.settings",
        SECRET_KEY="k",
        DATABASE_URL="postgres://app:pw@db.internal:5433/memory",
        REDIS_URL="redis://cache.internal:6379/2",
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "db.internal",
        "5433",
        "memory",
        "redis://cache.internal:6379/2",
    ]


def test_env_helpers(monkeypatch, tmp_path):
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG") is True
    monkeypatch.setenv("FLAG", "off")
    assert env_bool("FLAG", True) is False
    monkeypatch.delenv("FLAG")
    assert env_bool("FLAG", True) is True

    monkeypatch.setenv("COUNT", "12")
    assert env_int("COUNT", 1) == 12
    monkeypatch.setenv("COUNT", "twelve")
    with pytest.raises(ImproperlyConfigured, match="COUNT='twelve' is not an integer"):
        env_int("COUNT", 1)
    monkeypatch.setenv("COUNT", "0")
    with pytest.raises(ImproperlyConfigured, match="COUNT=0 must be at least 1"):
        env_int("COUNT", 1, minimum=1)

    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]

    secret = tmp_path / "secret"
    secret.write_text("s3cr3t\n")
    monkeypatch.setenv("TOKEN_FILE", str(secret))
    assert env_str("TOKEN") == "s3cr3t"
    monkeypatch.setenv("TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="TOKEN_FILE="):
        env_str("TOKEN")


def settings_value(expression: str, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env, "DJANGO_SETTINGS_MODULE": "memoryapp.settings"}
    code = f"from django.conf import settings as s; print({expression})"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=full_env, capture_output=True, text=True
    )


def test_sign_in_throttling_is_configured_from_the_environment():
    result = settings_value(
        "s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME.total_seconds()",
        LOGIN_FAILURE_LIMIT="3",
        LOGIN_COOLOFF_MINUTES="2",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3 120.0"
    bad = settings_value("s.AXES_COOLOFF_TIME", LOGIN_COOLOFF_MINUTES="soon")
    assert bad.returncode != 0
    assert "LOGIN_COOLOFF_MINUTES='soon' is not an integer" in bad.stderr
