"""Fixtures for the client against a live server: an agent's token and environment, and a
small team memory captured through the API and embedded by the real pipeline."""

from __future__ import annotations

import socket

import pytest

from memoryapp_client import MemoryClient
from sessions.enrich import pipeline
from sessions.models import Session
from teams.models import ApiToken
from tests.search.corpus import AUTH, COOKING, DEPLOY


def embed_all() -> None:
    while pipeline.embed_pending_messages():
        pass


def day_of(session_id: str) -> str:
    """The session's start date as the API and the Markdown show it (UTC)."""
    return f"{Session.objects.get(public_id=session_id).started_at:%Y-%m-%d}"


def as_messages(pairs) -> list[dict]:
    return [{"role": role, "content": text} for role, text in pairs]


@pytest.fixture
def agent_token(project) -> str:
    return ApiToken.issue(project, name="agent")[1]


@pytest.fixture
def agent_env(monkeypatch, live_server, agent_token):
    """MEMORYAPP_URL/MEMORYAPP_TOKEN pointing at the live server, as an agent sets them."""
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", agent_token)
    monkeypatch.delenv("MEMORYAPP_CONTEXT_ON_START", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def memory(agent_env) -> dict[str, str]:
    """Three sessions captured over HTTP and embedded: name → session id."""
    client = MemoryClient()
    sessions = {
        "auth": client.capture(
            agent_name="architect",
            agent_persona="Winston",
            workflow="security",
            title="Auth fix",
            messages=as_messages(AUTH),
        ),
        "deploy": client.capture(
            agent_name="dev",
            agent_persona="Amelia",
            workflow="release",
            user_name="sam",
            messages=as_messages(DEPLOY),
        ),
        "cooking": client.capture(agent_name="chef", messages=as_messages(COOKING)),
    }
    embed_all()
    return {name: session["id"] for name, session in sessions.items()}


@pytest.fixture
def closed_port_url() -> str:
    """A URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def no_backoff(monkeypatch):
    """The client's retries without their sleeps."""
    monkeypatch.setattr("memoryapp_client.api.time.sleep", lambda seconds: None)
