"""Latency of the session list (`memoryapp sessions list`, GET /api/v1/sessions) at 1,000
and at 100,000 sessions per project, the target being < 100 ms at 1,000+.

Starts its own embedded PostgreSQL in a temporary folder, makes one team with two projects
(``here``, found by its working directory, and ``other``), and fills both with the same
number of sessions by one INSERT … SELECT generate_series per size (so the team holds twice
that). Each case is a real API request through Django's test client, as a team-level token
sends it (no HTTP server: what is timed is the view, its queries and the JSON):

  directory   the project of the X-Memoryapp-Directory header, newest first (the default)
  all         every project of the team (--all-projects)
  agent       this project, one agent's sessions (--agent architect)
  since       this project, completed sessions of the last 30 days (--status, --since)
  by size     this project, largest first (--sort message_count)

    .venv/bin/python bench/sessions_list.py [--sizes 1000 100000] [--requests 200] [--rounds 3]

Per case and size: the median over rounds of each round's p50 and p95 (ms), the number of
SQL queries per request, and the ratio of the p95 at the largest size to the smallest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

DIRECTORY = "/home/user/repos/myapp"
AGENTS = ["architect", "dev", "pm", "qa", "analyst", "sm", "ux", "devops"]
CASES = {
    "directory": ({}, True),
    "all": ({}, False),
    "agent": ({"agent": "architect"}, True),
    "since": ({"status": "completed", "started_after": "-30d"}, True),
    "by size": ({"ordering": "-message_count"}, True),
}

# One statement per size: rows spread over a year, eight agents, four statuses.
FILL = """
INSERT INTO agent_sessions_session (
    team_id, project_id, public_id, external_id, agent_name, agent_persona, workflow, title,
    user_name, source_format, status, lifecycle, started_at, ended_at, message_count,
    size_bytes, topics, artifacts, metadata, summary, embedding_model, enriched_through_seq,
    enrichment_status, enrichment_error, enrichment_attempts, created_at, updated_at,
    access_count, decay_priority, delete_reason)
SELECT %(team)s, %(project)s, 'b-' || %(project)s || '-' || g, '', agents[1 + g %% 8], '',
    'none', 'Session ' || g || ' about the release', 'alice', 'api',
    (ARRAY['completed', 'completed', 'interrupted', 'error'])[1 + g %% 4], 'active',
    now() - (g * interval '1 minute') * (525600.0 / %(count)s),
    now() - (g * interval '1 minute') * (525600.0 / %(count)s) + interval '20 minutes',
    1 + (g::bigint * 7919) %% 400, 1000 + (g::bigint * 104729) %% 900000,
    ARRAY['release'], '{}', '{}',
    'A summary of session ' || g, '', -1, 'done', '', 0, now(), now(), 0, 1.0, ''
FROM generate_series(%(start)s, %(stop)s) AS g,
     (SELECT %(agents)s::text[] AS agents) AS a
"""


def fill(team, projects, count: int) -> float:
    """Bring each project to ``count`` sessions; the seconds it took."""
    from django.db import connection

    from sessions.models import Session

    began = time.perf_counter()
    with connection.cursor() as cursor:
        for project in projects:
            have = Session.objects.filter(project=project).count()
            if have < count:
                cursor.execute(
                    FILL,
                    {
                        "team": team.pk,
                        "project": project.pk,
                        "start": have,
                        "stop": count - 1,
                        "count": count,
                        "agents": AGENTS,
                    },
                )
        cursor.execute("ANALYZE agent_sessions_session")
    return time.perf_counter() - began


def request_params(params: dict) -> dict:
    from django.utils import timezone

    out = dict(params)
    if out.get("started_after") == "-30d":
        out["started_after"] = (timezone.now() - timezone.timedelta(days=30)).isoformat()
    return out


def time_case(client, params: dict, directory: bool, requests: int) -> list[float]:
    headers = {"HTTP_X_MEMORYAPP_DIRECTORY": DIRECTORY} if directory else {}
    timings = []
    for _ in range(requests):
        began = time.perf_counter()
        response = client.get("/api/v1/sessions", params, **headers)
        timings.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, response.content[:300]
    return timings


def queries_of(client, params: dict, directory: bool) -> tuple[int, int]:
    """(SQL queries, sessions answered) of one request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = {"HTTP_X_MEMORYAPP_DIRECTORY": DIRECTORY} if directory else {}
    with CaptureQueriesContext(connection) as captured:
        body = client.get("/api/v1/sessions", params, **headers).json()
    return len(captured), len(body["results"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--requests", type=int, default=200, help="per case, size and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    with django_on_embedded_servers():
        from django.test import Client

        from protocol.directories import project_slug
        from teams.models import ApiToken, Project, Team

        team = Team.objects.create(name="bench", slug="bench")
        here = Project.objects.create(
            team=team, name="myapp", slug="myapp", directory=project_slug(DIRECTORY)
        )
        other = Project.objects.create(team=team, name="other", slug="other")
        _, raw = ApiToken.issue(None, team=team, permissions=["read"])
        client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

        results: dict[tuple[str, int], tuple[float, float, int, int]] = {}
        for size in sorted(args.sizes):
            took = fill(team, [here, other], size)
            print(f"{size:,} sessions per project ({2 * size:,} in the team): {took:.1f} s to load")
            for name, (params, directory) in CASES.items():
                params = request_params(params)
                time_case(client, params, directory, 20)  # warm the caches and the plan
                p50s, p95s = [], []
                for _ in range(args.rounds):
                    timings = time_case(client, params, directory, args.requests)
                    p50s.append(percentile(timings, 0.5))
                    p95s.append(percentile(timings, 0.95))
                queries, rows = queries_of(client, params, directory)
                results[(name, size)] = (
                    statistics.median(p50s),
                    statistics.median(p95s),
                    queries,
                    rows,
                )

        sizes = sorted(args.sizes)
        print()
        head = ("case", "sessions", "p50 ms", "p95 ms", "queries", "rows")
        print(f"{head[0]:<10} {head[1]:>9} {head[2]:>7} {head[3]:>7} {head[4]:>7} {head[5]:>5}")
        for name in CASES:
            for size in sizes:
                p50, p95, queries, rows = results[(name, size)]
                print(f"{name:<10} {size:>9,} {p50:>7.1f} {p95:>7.1f} {queries:>7} {rows:>5}")
            if len(sizes) > 1:
                ratio = results[(name, sizes[-1])][1] / results[(name, sizes[0])][1]
                print(f"{'':<10} p95 at {sizes[-1]:,} / at {sizes[0]:,}: {ratio:.2f}")


if __name__ == "__main__":
    main()
