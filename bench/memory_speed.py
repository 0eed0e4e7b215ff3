"""Memory listing and memory search speed with 100,000 memories in one team (issue 17,
"Speed"): the list query and ``search_memories`` (query embedding included), medians and
p95 over many queries.

**Data** (written with PostgreSQL ``COPY``, not the write path: ``record`` embeds each
memory and checks it against its neighbours, far too slow for 100k rows):

- the pool of real texts and their real vectors of ``bench/search_speed.py`` (every LoCoMo
  turn and the prose of the real transcripts in ``../shared/samples``, embedded once with
  the real model), each memory's content one pool text (cut to ``CONTENT_CHARS``), its
  vector that text's vector plus Gaussian noise of norm ``NOISE``, normalised: perturbed
  real vectors, never uniform random ones;
- one team, ``PROJECTS`` projects, ``SESSIONS`` sessions (9 in 10 memories come from one,
  as extracted memories do); types in the shares of ``TYPES``, findings 40 % open, a
  severity for each finding, tags from a small vocabulary, ``AGENTS`` agents, priorities
  uniform in 0.05..1 (so some are decayed), 2 % superseded, 1 % deleted, 2 % team-scoped;
  occurred_at uniform over the past year; per-project readable ids as ``record`` numbers them;
- the memory table's GIN and HNSW indexes dropped before the COPY and built after it,
  then ``VACUUM ANALYZE``.

**Measured**, after ``--warmup`` untimed rounds, over ``--queries`` queries each:

- listing: ``apply(visible(access), filters)`` with the model's order (newest first) or by
  priority, first page (``PAGE`` rows), as a project token sees it, over a rotation of
  filter sets (none, a type, open findings, a tag, an agent, min_priority, pinned, a time
  range, sorted by priority);
- the server's own time for each listing query (``EXPLAIN (ANALYZE, TIMING OFF)``'s
  execution time), which the machine's other load touches less than the round trip;
- search: ``search_memories(access, q, filters, limit=10)`` for LoCoMo questions, the
  query-vector cache cleared before each so every query embeds its text; unfiltered and with
  a type filter; also the embedding alone, to split the time.

    .venv/bin/python bench/memory_speed.py [--memories 100000] [--queries 300] [--warmup 30]
        [--keep DIR]

Check at small scale first (``--memories 5000``). Targets: listing p95 <= 20 ms, search p95
<= 50 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

SEED = 17
PROJECTS = 10
SESSIONS = 2_000
AGENTS = ("architect", "dev", "qa", "pm", "analyst", "ux")
TAGS = ("auth", "api", "database", "deploy", "security", "ui", "tests", "performance")
TYPES = {
    "fact": 0.35,
    "decision": 0.2,
    "finding": 0.15,
    "preference": 0.1,
    "learning": 0.15,
    "agent_state": 0.05,
}
PREFIX = {
    "decision": "DEC",
    "finding": "FIND",
    "preference": "PREF",
    "learning": "LEARN",
    "agent_state": "STATE",
    "fact": "FACT",
}
SEVERITIES = ("critical", "high", "medium", "low")
CONTENT_CHARS = 300
NOISE = 0.2
PAGE = 50
TARGET_LIST_P95, TARGET_SEARCH_P95 = 20.0, 50.0
MEMORY_COLUMNS = (
    "team_id, project_id, session_id, public_id, type, scope, content, details, topic, tags,"
    " confidence, severity, resolution, agent, origin, extractor, occurred_at, base_priority,"
    " priority, access_count, pinned, status, delete_reason, fingerprint, embedding,"
    " created_at, updated_at"
)
INDEXES = ("memory_search_gin", "memory_embedding_hnsw")


def make_team():
    from sessions.models import Session
    from teams.services import ensure_team_and_project

    team, first, _ = ensure_team_and_project("memory-speed", "project-0")
    projects = [first] + [
        ensure_team_and_project("memory-speed", f"project-{i}")[1] for i in range(1, PROJECTS)
    ]
    rng = np.random.default_rng(SEED)
    now = datetime.now(UTC)
    sessions = Session.objects.bulk_create(
        [
            Session(
                team=team,
                project=projects[i % PROJECTS],
                public_id=f"bench-{i}",
                agent_name=AGENTS[i % len(AGENTS)],
                started_at=now - timedelta(days=float(rng.uniform(0, 365))),
            )
            for i in range(SESSIONS)
        ],
        batch_size=1000,
    )
    return team, projects, sessions


def memory_rows(count: int, pool, team, projects, sessions):
    rng = np.random.default_rng(SEED)
    kinds = rng.choice(list(TYPES), size=count, p=list(TYPES.values()))
    texts = rng.integers(len(pool.texts), size=count)
    noise = rng.standard_normal((count, pool.vectors.shape[1])).astype(np.float32)
    noise *= NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
    now = datetime.now(UTC)
    numbers: dict[tuple[int, str], int] = {}
    by_id = {p.pk: p for p in projects}
    for i in range(count):
        kind = str(kinds[i])
        session = sessions[int(rng.integers(len(sessions)))] if rng.random() < 0.9 else None
        project = by_id[session.project_id] if session else projects[int(rng.integers(PROJECTS))]
        key = (project.pk, kind)
        numbers[key] = numbers.get(key, 0) + 1
        content = pool.texts[int(texts[i])][:CONTENT_CHARS]
        vector = pool.vectors[int(texts[i])] + noise[i]
        vector /= np.linalg.norm(vector)
        occurred = now - timedelta(days=float(rng.uniform(0, 365)))
        status = rng.choice(["active", "superseded", "deleted"], p=[0.97, 0.02, 0.01])
        finding = kind == "finding"
        yield (
            team.pk,
            project.pk,
            session.pk if session else None,
            f"{PREFIX[kind]}-{numbers[key]:03d}",
            kind,
            "team" if rng.random() < 0.02 else "project",
            content,
            json.dumps({}),
            "",
            list(rng.choice(TAGS, size=int(rng.integers(0, 3)), replace=False)),
            str(rng.choice(["high", "medium", "low"])),
            str(rng.choice(SEVERITIES)) if finding else "",
            ("open" if rng.random() < 0.4 else "resolved") if finding else "",
            AGENTS[int(rng.integers(len(AGENTS)))],
            "extractor",
            "offline",
            occurred,
            1.0,
            float(rng.uniform(0.05, 1.0)),
            int(rng.integers(0, 5)),
            bool(rng.random() < 0.01),
            str(status),
            "",
            hashlib.sha256(f"{i}:{content}".encode()).hexdigest(),
            vector,
            occurred,
            occurred,
        )


def load(count: int, pool, team, projects, sessions) -> dict[str, float]:
    from bench.search_speed import raw_connection

    conn = raw_connection()
    definitions = dict(
        conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(INDEXES)]
        ).fetchall()
    )
    for name in definitions:
        conn.execute(f"DROP INDEX {name}")
    started = time.perf_counter()
    with conn.cursor().copy(f"COPY memories_memory ({MEMORY_COLUMNS}) FROM STDIN") as copy:
        for row in memory_rows(count, pool, team, projects, sessions):
            copy.write_row(row)
    copied = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '1GB'")
    for definition in definitions.values():
        conn.execute(definition)
    built = time.perf_counter() - started
    conn.execute("VACUUM ANALYZE memories_memory")
    conn.close()
    return {"copy": copied, "indexes": built}


def server_ms(queryset) -> float:
    """The server's execution time of ``queryset``'s statement, in ms."""
    from django.db import connection

    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql, params)
        return float(cursor.fetchone()[0][0]["Execution Time"])


def timed(run, times: list[float]) -> None:
    started = time.perf_counter()
    run()
    times.append((time.perf_counter() - started) * 1000)


def summary(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms, "
        f"max {max(values):.1f} ms over {len(values)}"
    )


def list_cases():
    from memories.retrieve.query import MemoryFilters

    since = datetime.now(UTC) - timedelta(days=30)
    return [
        ("none", MemoryFilters(), None),
        ("type", MemoryFilters(types=("decision",)), None),
        ("open findings", MemoryFilters(types=("finding",), resolution="open"), None),
        ("tag", MemoryFilters(tag="security"), None),
        ("agent", MemoryFilters(agent="qa"), None),
        ("min_priority", MemoryFilters(min_priority=0.8), None),
        ("pinned", MemoryFilters(pinned=True), None),
        ("last 30 days", MemoryFilters(after=since), None),
        ("by priority", MemoryFilters(), ("-priority", "-id")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()

    with django_on_embedded_servers(args.keep) as folder:
        from bench.search_speed import build_pool, questions
        from memories.models import Memory
        from memories.retrieve.query import MemoryFilters, apply, visible
        from memories.retrieve.search import search_memories
        from search import semantic
        from sessions.embedding.query import embed_query
        from teams.access import Access

        if not Memory.objects.filter(team__slug="memory-speed").exists():
            pool, embed_seconds = build_pool(folder)
            print(f"pool: {len(pool.texts)} texts, embedded in {embed_seconds:.0f} s", flush=True)
            team, projects, sessions = make_team()
            took = load(args.memories, pool, team, projects, sessions)
            print(
                f"loaded {args.memories} memories: COPY {took['copy']:.0f} s, "
                f"indexes {took['indexes']:.0f} s",
                flush=True,
            )
        memories = Memory.objects.filter(team__slug="memory-speed")
        team_id = memories.values_list("team_id", flat=True).first()
        project_ids = sorted(set(memories.values_list("project_id", flat=True).distinct()))
        print(f"memories in the team: {memories.count()}", flush=True)

        cases = list_cases()
        listing: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for i in range(args.warmup + args.queries):
            name, filters, order = cases[i % len(cases)]
            access = Access(team_ids=(team_id,), project_ids=(project_ids[i % len(project_ids)],))

            def page(access=access, filters=filters, order=order):
                queryset = apply(visible(access), filters)
                if order:
                    queryset = queryset.order_by(*order)
                return list(queryset.defer("embedding", "search_vector")[:PAGE])

            if i < args.warmup:
                page()
            else:
                timed(page, listing[name])
        every = [t for values in listing.values() for t in values]
        print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"listing (first page of {PAGE}): {summary(every)}")
        for name, values in listing.items():
            print(f"  {name:<14} {summary(values)}")
        print("  server execution time per filter set (median of 5):")
        for name, filters, order in cases:
            access = Access(team_ids=(team_id,), project_ids=(project_ids[0],))
            queryset = apply(visible(access), filters)
            if order:
                queryset = queryset.order_by(*order)
            times = [
                server_ms(queryset.defer("embedding", "search_vector")[:PAGE]) for _ in range(5)
            ]
            print(f"    {name:<14} {statistics.median(times):.2f} ms")

        asked = questions()
        search_times: dict[str, list[float]] = {"all types": [], "decisions only": []}
        embed_times: list[float] = []
        for i in range(args.warmup + args.queries):
            query = asked[i % len(asked)]
            access = Access(team_ids=(team_id,), project_ids=(project_ids[i % len(project_ids)],))
            name = "decisions only" if i % 2 else "all types"
            filters = MemoryFilters(types=("decision",)) if i % 2 else MemoryFilters()
            semantic.query_vector.cache_clear()
            if i < args.warmup:
                search_memories(access, query, filters, 10)
                continue
            timed(lambda q=query: embed_query(q), embed_times)
            semantic.query_vector.cache_clear()
            timed(
                lambda a=access, q=query, f=filters: search_memories(a, q, f, 10),
                search_times[name],
            )
        every = [t for values in search_times.values() for t in values]
        print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"search, limit 10, query embedding included: {summary(every)}")
        for name, values in search_times.items():
            print(f"  {name:<14} {summary(values)}")
        print(f"  query embedding alone: {summary(embed_times)}")
        list_p95, search_p95 = (
            percentile([t for v in listing.values() for t in v], 0.95),
            percentile(every, 0.95),
        )
        print(
            f"\ntargets: listing p95 {list_p95:.1f} ms (<= {TARGET_LIST_P95:.0f}), "
            f"search p95 {search_p95:.1f} ms (<= {TARGET_SEARCH_P95:.0f})"
        )


if __name__ == "__main__":
    main()
