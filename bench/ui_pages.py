"""Browser UI speed at scale (issue 6): the dashboard, the sessions list, a session page and a
search answer, with 100,000 sessions and 1,000,000 messages in ONE team (the worst case for
a team-scoped page), through Django's test ``Client`` signed in as an admin of that team.

**Data** (PostgreSQL ``COPY``; the pool of real texts and its vectors, the index drop/build
and the keyword-context expression come from ``bench/search_speed.py``):

- ``--sessions`` sessions of ``bench-ui/main`` started over the last 365 days, with
  ``--messages`` messages in all: 1 + a multinomial share with log-normal weights, so most
  sessions have a few to 30 messages and some have hundreds. A session walks the pool from a
  random point (consecutive real turns); user and assistant alternate. 30% have no title
  (the list then shows their first request, a subquery per row). 1% are in the trash.
- Each message has one chunk whose vector is its pool text's plus Gaussian noise (norm 0.2),
  ``enrichment_status = 'done'`` and its keyword context (``sessions/capture/keyword_context.py``).
- 0-6 entities per session (files, functions, commands, errors, packages) from a vocabulary
  of 3,000, with Zipf-like popularity, so the dashboard's "top entities" has work to do.
- GIN and HNSW indexes are dropped before the load and built after it, then VACUUM ANALYZE.

**Measured**, each after 3 warm-up requests, ``--requests`` times (200 answers checked):
``/`` (dashboard), ``/dashboard/enrichment`` (its lazily loaded enrichment card), ``/sessions``
(first page; a page 20 cursors deep; filtered by agent; by topic), ``/sessions/<id>`` (a
different random session each time) and ``/search?q=`` (a different LoCoMo question each
time, so the query is embedded on every request). p50/p95/max in ms and the SQL statement
count of one request; the target is p50 < 300 ms for the list, a session page and a search.

    .venv/bin/python bench/ui_pages.py [--sessions 100000] [--messages 1000000]
        [--requests 40] [--keep DIR]   # DIR keeps the loaded database for the next run
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

SEED = 6
NOISE = 0.2
MODEL = "all-MiniLM-L6-v2"
MARKER = "ui_pages.json"
TARGET_P50_MS = 300.0
BATCH_SESSIONS = 5000
TOPICS = [
    "auth", "deploy", "database", "frontend", "testing", "performance", "security", "billing",
    "search", "ci", "docs", "refactor", "api", "logging", "cache", "migrations",
]  # fmt: skip
ENTITY_KINDS = [
    ("FILE", "src/{}/module_{}.py"),
    ("FUNCTION", "handle_{}_{}"),
    ("COMMAND", "make {}-{}"),
    ("ERROR", "{}Error{}"),
    ("PACKAGE", "pkg-{}-{}"),
]
ENTITY_VOCABULARY = 3000


def entity_vocabulary() -> list[tuple[str, str]]:
    words = ["auth", "user", "order", "cart", "search", "report", "mail", "token", "cache", "job"]
    vocab = []
    for i in range(ENTITY_VOCABULARY):
        kind, pattern = ENTITY_KINDS[i % len(ENTITY_KINDS)]
        vocab.append((kind, pattern.format(words[i % len(words)], i)))
    return vocab


def load(conn, folder: Path, pool, project, args) -> dict:
    """COPY sessions, messages, chunks and entities in batches; returns timings."""
    from bench import search_speed as ss

    context, next_id = ss.prepare_bulk_load(
        conn, folder, ("session", "message", "messagechunk", "entity")
    )
    rng = np.random.default_rng(SEED)
    weights = rng.lognormal(0.0, 1.0, args.sessions)
    lengths = 1 + rng.multinomial(args.messages - args.sessions, weights / weights.sum())
    now = datetime.now(UTC)
    vocab = entity_vocabulary()
    popularity = 1.0 / (np.arange(len(vocab)) + 5)
    popularity /= popularity.sum()
    pool_size = len(pool.texts)
    generate_s = copy_s = 0.0
    started_all = time.perf_counter()
    for start in range(0, args.sessions, BATCH_SESSIONS):
        started = time.perf_counter()
        sessions, messages, chunks, entities = [], [], [], []
        for n in lengths[start : start + BATCH_SESSIONS]:
            n = int(n)
            session_id = next_id["session"]
            next_id["session"] += 1
            started_at = now - timedelta(seconds=float(rng.uniform(0, 365 * 86400)))
            first = int(rng.integers(pool_size))
            picks = [(first + k) % pool_size for k in range(n)]
            noise = rng.standard_normal((n, pool.vectors.shape[1])).astype(np.float32)
            noise *= NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
            vectors = pool.vectors[picks] + noise
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            size = 0
            for seq, a in enumerate(picks):
                content = pool.texts[a]
                size += len(content)
                role = "user" if seq % 2 == 0 else "assistant"
                author = pool.authors[a]
                message_id = next_id["message"]
                next_id["message"] += 1
                messages.append(
                    (message_id, project.team_id, session_id, seq, role, author, content,
                     started_at + timedelta(seconds=40 * seq), len(content) // 4)
                )  # fmt: skip
                chunks.append(
                    (next_id["messagechunk"], project.team_id, session_id, message_id, 0, 0,
                     len(content), f"{author or role}: {content}", vectors[seq], MODEL, now)
                )  # fmt: skip
                next_id["messagechunk"] += 1
            agent = ss.AGENTS[int(rng.integers(len(ss.AGENTS)))]
            topics = sorted({TOPICS[int(i)] for i in rng.integers(len(TOPICS), size=3)})[
                : int(rng.integers(0, 4))
            ]
            title = ss._cut(pool.texts[first], 80) if rng.random() > 0.3 else ""
            deleted = (
                now - timedelta(days=float(rng.uniform(0, 20))) if rng.random() < 0.01 else None
            )
            sessions.append(
                (session_id, project.team_id, project.pk,
                 f"{started_at:%Y-%m-%d}-{agent}-{session_id:06x}", "", agent, "",
                 ss.WORKFLOWS[int(rng.integers(len(ss.WORKFLOWS)))], title, "", "api",
                 "completed", "active", started_at, started_at + timedelta(seconds=40 * n), n,
                 size, topics, [], "{}", ss._cut(pool.texts[first], 300), "", now, now, 0, "",
                 "done", "", 0, now, n - 1, deleted)
            )  # fmt: skip
            for v in sorted(
                set(rng.choice(len(vocab), size=int(rng.integers(0, 7)), p=popularity))
            ):
                kind, value = vocab[int(v)]
                entities.append(
                    (next_id["entity"], project.team_id, session_id, kind, value, value.lower(),
                     "", int(rng.integers(1, 5)), now)
                )  # fmt: skip
                next_id["entity"] += 1
        generate_s += time.perf_counter() - started
        started = time.perf_counter()
        with conn.transaction():
            ss.copy_sessions(conn, sessions, extra_columns="deleted_at")
            ss.copy_messages_and_chunks(conn, messages, chunks, context)
            with conn.cursor().copy(
                "COPY agent_sessions_entity (id, team_id, session_id, type, value, normalized,"
                " context, count, created_at) FROM STDIN"
            ) as copy:
                for row in entities:
                    copy.write_row(row)
        copy_s += time.perf_counter() - started
        done = min(start + BATCH_SESSIONS, args.sessions)
        print(
            f"  {done}/{args.sessions} sessions loaded ({time.perf_counter() - started_all:.0f} s)",
            flush=True,
        )
    for table in ("session", "message", "messagechunk", "entity"):
        conn.execute(
            f"SELECT setval(pg_get_serial_sequence('agent_sessions_{table}', 'id'),"
            f" (SELECT max(id) FROM agent_sessions_{table}))"
        )
    conn.execute("SET session_replication_role = origin")
    return {"generate_s": generate_s, "copy_s": copy_s}


def prepare(folder: Path, args):
    """The team, its project and admin (always), and the data unless ``folder`` holds it."""
    from django.contrib.auth import get_user_model

    from bench import search_speed as ss
    from teams.models import Membership, Role
    from teams.services import ensure_team_and_project

    team, project, _ = ensure_team_and_project("bench-ui", "main")
    user, _ = get_user_model().objects.get_or_create(username="bench-ui-admin")
    Membership.objects.get_or_create(team=team, user=user, defaults={"role": Role.ADMIN})
    marker = folder / MARKER
    if marker.exists():
        info = json.loads(marker.read_text())
        if (info["sessions"], info["messages"]) != (args.sessions, args.messages):
            raise SystemExit(
                f"{folder} holds {info['sessions']} sessions / {info['messages']} messages; "
                "use another --keep folder for other sizes"
            )
        print(f"reusing the data loaded in {folder}")
        return user, info
    conn = ss.raw_connection()
    try:
        pool, _ = ss.fresh_tables_and_pool(conn, folder)
        print(f"loading {args.sessions} sessions, {args.messages} messages …", flush=True)
        started = time.perf_counter()
        timings = load(conn, folder, pool, project, args)
        timings["load_s"] = time.perf_counter() - started
        print(f"loaded in {timings['load_s']:.0f} s; building indexes …", flush=True)
        timings["indexes_s"] = ss.build_indexes(conn, folder)
        started = time.perf_counter()
        for table in ("session", "message", "messagechunk", "entity"):
            conn.execute(f"VACUUM (ANALYZE) agent_sessions_{table}")
        timings["vacuum_s"] = time.perf_counter() - started
    finally:
        conn.close()
    info = {"sessions": args.sessions, "messages": args.messages, **timings}
    marker.write_text(json.dumps(info, indent=1))
    return user, info


def measure(user, args) -> list[dict]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from bench.search_speed import questions
    from sessions.models import Session

    client = Client()
    client.force_login(user)
    rng = np.random.default_rng(SEED + 1)
    alive = Session.objects.alive().filter(team__slug="bench-ui")
    count = alive.count()
    offsets = rng.integers(count, size=args.requests + 3)
    ids = [alive.order_by("id").values_list("public_id", flat=True)[int(o)] for o in offsets]
    asked = iter(questions(args.requests + 3))

    deep = "/sessions"
    for _ in range(20):  # as deep as 20 pages, or the last page of a small data set
        page = client.get(deep).content.decode()
        found = re.search(r'href="\?[^"]*cursor=([\w-]+)[^"]*" rel="next"', page)
        if found is None:
            break
        deep = f"/sessions?cursor={found.group(1)}"
    pages = [
        ("dashboard /", lambda i: "/"),
        ("dashboard enrichment card", lambda i: "/dashboard/enrichment"),
        ("sessions list, first page", lambda i: "/sessions"),
        ("sessions list, 20 pages deep", lambda i: deep),
        ("sessions list, agent filter", lambda i: "/sessions?agent=codex"),
        ("sessions list, topic filter", lambda i: "/sessions?topic=billing"),
        ("session page (random)", lambda i: f"/sessions/{ids[i]}"),
        ("search (new question each)", lambda i: f"/search?q={next(asked)}"),
    ]
    rows = []
    for label, url_of in pages:
        times = []
        statements = 0
        for i in range(args.requests + 3):
            url = url_of(i)
            started = time.perf_counter()
            if i == 3:
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(url)
                statements = len(queries)
            else:
                response = client.get(url)
            elapsed = (time.perf_counter() - started) * 1000
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")
            if i >= 3:
                times.append(elapsed)
        rows.append(
            {
                "page": label,
                "p50": statistics.median(times),
                "p95": percentile(times, 0.95),
                "max": max(times),
                "sql": statements,
            }
        )
        print(f"  {label}: p50 {rows[-1]['p50']:.0f} ms", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--keep", type=Path, help="data folder to keep and reuse")
    args = parser.parse_args()
    if args.messages < args.sessions:
        raise SystemExit("--messages must be at least --sessions")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with django_on_embedded_servers(args.keep) as folder:
        user, info = prepare(folder, args)
        print(f"measuring {args.requests} requests per page …", flush=True)
        rows = measure(user, args)
    print()
    print(
        f"UI pages, {info['sessions']:,} sessions / {info['messages']:,} messages in one team, "
        f"{args.requests} requests each (Django test Client, signed in)"
    )
    if "load_s" in info:
        indexes = sum(info["indexes_s"].values()) if info.get("indexes_s") else 0
        print(f"load {info['load_s']:.0f} s, index builds {indexes:.0f} s")
    print(f"{'page':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'SQL':>5}")
    for row in rows:
        print(
            f"{row['page']:34} {row['p50']:8.0f} {row['p95']:8.0f} {row['max']:8.0f} "
            f"{row['sql']:5d}"
        )
    judged = [r for r in rows if r["page"].startswith(("sessions list", "session page", "search"))]
    slow = [r["page"] for r in judged if r["p50"] >= TARGET_P50_MS]
    print(
        f"target p50 < {TARGET_P50_MS:.0f} ms for the list, a session page and a search: "
        + ("met" if not slow else f"MISSED by {', '.join(slow)}")
    )


if __name__ == "__main__":
    main()
