"""The retrieval benchmarks' side of the product: capture and import through the API, the
enrichment pipeline run in this process (the functions the Celery tasks run), and questions
asked through ``GET /api/v1/search`` and ``POST /api/v1/context``. Needs Django set up
(``bench.harness.django_on_embedded_servers``)."""

from __future__ import annotations

import time
from pathlib import Path

DEPTH = 20  # messages asked of search per question
CONTEXT_SESSIONS = 10  # sessions asked of the context endpoint, at most


def project_client(team: str, project: str):
    """The project (created if missing) and an API client holding a new token of it."""
    from rest_framework.test import APIClient

    from teams.models import ApiToken
    from teams.services import ensure_team_and_project

    _, project_obj, _ = ensure_team_and_project(team, project)
    _, raw = ApiToken.issue(project_obj)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return project_obj, client


def capture(client, sessions: list[dict]) -> None:
    """Each session through ``POST /api/v1/sessions`` (a session already there gets only
    its new messages)."""
    for body in sessions:
        response = client.post("/api/v1/sessions", body, format="json")
        if response.status_code not in (200, 201):
            raise SystemExit(f"capture failed: {response.status_code} {response.content[:300]}")


def import_file(client, path: Path) -> list[str]:
    """``path`` through ``POST /api/v1/import`` as the CLI uploads it (the file alone, its
    name to help detection); the public ids of the sessions it created or extended."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = client.post("/api/v1/import", {"file": upload}, format="multipart")
    if response.status_code not in (200, 201):
        raise SystemExit(
            f"import of {path} failed: {response.status_code} {response.content[:300]}"
        )
    return [s["id"] for s in response.json()["sessions"]]


def run_pipeline() -> float:
    """Embed and summarise everything pending; the seconds it took."""
    from django.conf import settings

    from sessions.enrich import pipeline

    settings.SESSION_ENRICH_DELAY_SECONDS = 0
    started = time.perf_counter()
    while pipeline.embed_pending_messages():
        pass
    while pipeline.enrich_pending_sessions(limit=100):
        pass
    return time.perf_counter() - started


def run_extraction() -> tuple[float, int]:
    """Memories from every enriched session, as the worker extracts them; (seconds, count)."""
    from memories.enrich.run import extract_pending_sessions
    from memories.models import Memory

    started = time.perf_counter()
    while extract_pending_sessions(limit=100):
        pass
    return time.perf_counter() - started, Memory.objects.count()


def analyze() -> None:
    """Fresh planner and word statistics (the pooled keyword ranking estimates from them)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def client_ids_by_position(project) -> dict[tuple[str, int], str]:
    """(session public id, seq) -> the message's client id, for captured sets."""
    from sessions.models import Message

    rows = Message.objects.filter(session__project=project).values_list(
        "session__public_id", "seq", "client_id"
    )
    return {(sid, seq): client_id for sid, seq, client_id in rows}


def stored_messages(project) -> dict[str, str]:
    """``"<session public id>:<seq>"`` -> content of every stored message of ``project``."""
    from sessions.models import Message

    rows = Message.objects.filter(session__project=project).values_list(
        "session__public_id", "seq", "content"
    )
    return {f"{sid}:{seq}": content for sid, seq, content in rows}


def search_rankings(
    client, questions: list[str], key_of=None, *, mode="hybrid", memory_keys=False
) -> tuple[list[list[str]], list[float]]:
    """Each question through ``GET /api/v1/search``: its ranked message keys (``key_of``
    maps (session public id, seq); by default ``"<session id>:<seq>"``) and the latency in ms
    of every request."""
    rankings, latencies = [], []
    for question in questions:
        params = {"q": question, "limit": DEPTH, "mode": mode}
        if memory_keys:
            params["memory_keys"] = "true"
        started = time.perf_counter()
        response = client.get("/api/v1/search", params)
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
        positions = [(h["session"]["id"], h["message"]["seq"]) for h in response.json()["results"]]
        rankings.append([key_of[p] if key_of else f"{p[0]}:{p[1]}" for p in positions])
    return rankings, latencies


def context_recall(
    client, questions, texts: dict[str, str], budget: int, sessions: int = CONTEXT_SESSIONS
):
    """Per question: the share of its gold messages whose text is in the context Markdown at
    ``budget`` tokens (from at most ``sessions`` sessions), and the tokens the context used."""
    recalls, tokens = [], []
    for question in questions:
        response = client.post(
            "/api/v1/context",
            {
                "query": question.text,
                "max_tokens": budget,
                "max_sessions": sessions,
                "min_relevance": 0,
            },
            format="json",
        )
        body = response.json()
        found = sum(texts[g].strip() in body["markdown"] for g in question.gold)
        recalls.append(found / len(question.gold))
        tokens.append(body["tokens"])
    return recalls, tokens
