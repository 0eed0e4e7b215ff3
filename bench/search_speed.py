"""Search speed at scale (issue 5): hybrid search and the context endpoint over 1,000,000
messages in 100 teams, through the real API, with the vector side's recall against an exact scan.

**Data** (loaded with PostgreSQL ``COPY``, not the ORM nor the capture API):

- A *pool* of real texts is embedded once with the real model
  (``sessions.embedding.torch_runtime.embed``,
  on the chunk text the pipeline would embed, ``"<author>: <content>"``): every LoCoMo turn
  (``../shared/data/locomo/locomo10.json``; the speaker as author, an image's caption
  appended as ``bench/locomo.py`` does) and the natural-language strings and lines of the
  real transcripts in ``../shared/samples`` (role ``assistant``), each cut to 500 characters.
- Team sizes follow a Zipf-like law, ``size_i ∝ 1/(i + 2)`` for i = 1..teams (at 1M and 100
  teams: ~90k messages in the largest, ~2.6k in the smallest, the median ~5k), or with
  ``--sizes equal`` are all the same (10k at 1M and 100 teams). One project per team.
- Sessions have 10-100 messages (log-uniform). A session walks the pool from a random
  starting point, so consecutive messages are consecutive turns of a real conversation.
  Each message's text is its pool text; half the messages have a second, random pool text
  appended (``"A\\n\\nB"``). Its vector is ``normalise(v_A + w·v_B + noise)`` with
  ``w ~ U(0.4, 0.9)`` for the two-text messages (0 otherwise) and Gaussian noise of norm
  ``NOISE`` (0.2): mixtures and perturbations of real vectors, never uniform random ones
  (see BENCHMARKS.md, pitfalls). Each message has one chunk (``index 0``, ``char_start 0``,
  ``char_end len(content)``, text ``"<author>: <content>"``, model ``all-MiniLM-L6-v2``)
  and ``enrichment_status = 'done'``; the keyword ``context_vector`` is computed in SQL, when
  the column exists, with the expression of ``sessions.capture.keyword_context.CONTEXT_SQL`` itself,
  and the stored ranking document (``ranking_vector``) from it, as capture writes them.
  Sessions get a title and a summary (their first messages) but no session vector.
- The GIN and HNSW indexes of messages and chunks are dropped before the COPY and built
  after it (``maintenance_work_mem`` 4GB, one parallel maintenance worker), FK triggers are
  off during the load (``session_replication_role = replica``: the synthetic rows are
  consistent by construction), then ``VACUUM ANALYZE``. Load and build times are reported.

**Queries**: LoCoMo questions (held out: the pool holds turns, never questions), shuffled;
the first ``--warmup`` rounds (one question per team each, default 5) warm the server up
untimed, each round's latency reported (round 1 is the cold server: these VMs reclaim the
page cache within seconds, so only shared_buffers holds data), the next ``--queries`` are
timed. Query i goes to the i-th team in size order (round robin), so every part of the size
distribution gets the same number of queries. Each query is asked with that team's project
token through ``rest_framework.test.APIClient``:

- ``GET /api/v1/search?q=…&limit=10`` (hybrid), with ``search.semantic.query_vector``'s
  cache cleared first so that every timed query embeds its text; the embedding and each SQL
  statement (``connection.execute_wrapper``) are timed inside the request to split the time;
- ``POST /api/v1/context {query, max_tokens: 4000}``, cache cleared likewise;
- vector recall@10: ``search.semantic.candidates`` for the team's scope, with the production
  path choice (``semantic.vector_path``: exact, quantized or HNSW by scope size), with
  ``limit=10`` and with the search's own pool (``MIN_POOL``, top 10 of it), against an
  exact scan (``ORDER BY (embedding <=> q) + 0`` within the team); and whether the plan
  of that vector statement really uses ``chunk_embedding_hnsw`` (the path's name does not
  say so: the planner decides).

Reported: p50/p95 overall, for the smallest and the largest quartile of teams, the five
largest teams and per vector path; the time split; recall@10 per group; the machine's load
average (the 2 cores are shared: compare runs made together); EXPLAIN ANALYZE of the slowest
statements of the slowest queries. Also each warm-up round's latency, the blocks read from
disk during the timed searches (``pg_stat_io``), and the timed searches asked a second time,
when the pages they read are cached: the gap between the two is what reading from disk costs.

    .venv/bin/python bench/search_speed.py [--messages 1000000] [--teams 100] [--queries 200]
        [--sizes zipf|equal] [--warmup 5] [--no-warm]  # --no-warm: no search/speed/warm.py first
        [--keep DIR]  # DIR keeps the loaded data: a second run reuses it

Check at small scale first (``--messages 50000``). At 1M the load takes ~3 min and the HNSW
build ~5 min here, and the database folder ~6 GB. Settings such as ``EMBEDDING_THREADS=1``
apply as for the app (environment variables).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import SHARED, django_on_embedded_servers, percentile

SEED = 5
NOISE = 0.2
SECOND_TEXT_SHARE = 0.5
POOL_TEXT_CHARS = 500
SESSION_MESSAGES = (10, 100)
ZIPF_OFFSET = 2
MODEL = "all-MiniLM-L6-v2"
CONTEXT_TOKENS = 4000
MARKER = "search_speed.json"
DROPPED = "search_speed_dropped_indexes.json"
AGENTS = ["claude-code", "codex", "aider", "architect", "developer", "reviewer"]
WORKFLOWS = ["none", "create-architecture", "implement-story", "code-review", "debug"]
TARGET_SEARCH_P95, TARGET_CONTEXT_P95, TARGET_RECALL = 50.0, 150.0, 0.95


# ---------------------------------------------------------------------------------------
# The pool of real texts and the synthetic data made from it
# ---------------------------------------------------------------------------------------


@dataclass
class Pool:
    texts: list[str]
    authors: list[str]
    roles: list[str]
    vectors: np.ndarray  # normalised, float32, one row per text


def _cut(text: str, limit: int = POOL_TEXT_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0]


def locomo_turns() -> list[tuple[str, str]]:
    from bench.locomo import load_locomo, sessions_of, turn_text

    return [
        (t["speaker"], _cut(turn_text(t)))
        for conversation in load_locomo()
        for _, _, turns in sessions_of(conversation)
        for t in turns
    ]


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def sample_texts() -> list[str]:
    """Prose from the real transcripts: JSON string values and Markdown lines that have a
    few words (ids, hashes and base64 have no spaces and are left out)."""
    found: list[str] = []
    for path in sorted((SHARED / "samples").rglob("*")):
        if not path.is_file() or "LICENSE" in path.name or path.name == "README.md":
            continue
        raw = path.read_text(errors="replace")
        if path.suffix == ".json":
            strings = list(_strings(json.loads(raw)))
        elif path.suffix == ".jsonl":
            strings = [
                s for line in raw.splitlines() if line.strip() for s in _strings(json.loads(line))
            ]
        else:
            strings = [re.sub(r"^(####|>)\s*", "", line) for line in raw.splitlines()]
        for s in strings:
            s = _cut(s)
            if len(s) >= 30 and s.count(" ") >= 4:
                found.append(s)
    return list(dict.fromkeys(found))


def build_pool(folder: Path) -> tuple[Pool, float]:
    """Embed the pool (cached in ``folder``); returns it and the embedding seconds."""
    from sessions.embedding.torch_runtime import embed

    turns = locomo_turns()
    samples = sample_texts()
    texts = [t for _, t in turns] + samples
    authors = [a for a, _ in turns] + [""] * len(samples)
    roles = ["user"] * len(turns) + ["assistant"] * len(samples)
    cache = folder / "search_speed_pool.npy"
    started = time.perf_counter()
    if cache.exists() and np.load(cache, mmap_mode="r").shape[0] == len(texts):
        vectors = np.load(cache)
    else:
        vectors = embed([f"{a or r}: {t}" for t, a, r in zip(texts, authors, roles, strict=True)])
        np.save(cache, vectors)
    return Pool(texts, authors, roles, vectors), time.perf_counter() - started


def team_sizes(messages: int, teams: int, law: str = "zipf") -> list[int]:
    """Zipf-like (or equal) sizes, largest first, summing to ``messages``."""
    if law == "equal":
        sizes = [messages // teams] * teams
        sizes[0] += messages - sum(sizes)
        return sizes
    weights = 1.0 / (np.arange(1, teams + 1) + ZIPF_OFFSET)
    sizes = np.floor(weights / weights.sum() * messages).astype(int)
    sizes[0] += messages - sizes.sum()
    return [int(s) for s in sizes]


def session_lengths(rng: np.random.Generator, total: int) -> list[int]:
    """Log-uniform lengths in ``SESSION_MESSAGES`` summing to ``total`` (a remainder too
    short for a session of its own goes to the last one)."""
    low, high = SESSION_MESSAGES
    lengths: list[int] = []
    left = total
    while left > 0:
        n = min(left, round(math.exp(rng.uniform(math.log(low), math.log(high)))))
        if left - n < low:
            n = left
        lengths.append(n)
        left -= n
    return lengths


# ---------------------------------------------------------------------------------------
# Loading with COPY
# ---------------------------------------------------------------------------------------


def raw_connection():
    import psycopg
    from django.db import connection
    from pgvector.psycopg import register_vector

    s = connection.settings_dict
    conn = psycopg.connect(
        host=s["HOST"], port=s["PORT"] or None, dbname=s["NAME"], user=s["USER"], autocommit=True
    )
    register_vector(conn)
    return conn


def columns_of(conn, table: str) -> set[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s", [table]
    ).fetchall()
    return {r[0] for r in rows}


MESSAGES = "agent_sessions_message"


def context_expression() -> str:
    """The SQL expression of a message's keyword context as a window ``w`` over the session's
    messages ``m`` and its session ``s`` (``sessions.capture.keyword_context.WINDOW_CONTEXT``),
    so that the loaded rows get what captured ones would."""
    from sessions.capture.keyword_context import WINDOW_CONTEXT

    return WINDOW_CONTEXT


def drop_search_indexes(conn, folder: Path) -> list[tuple[str, str]]:
    """Drop the GIN and HNSW indexes of messages and chunks; their definitions are kept in
    ``folder`` so that an interrupted load can still rebuild them."""
    path = folder / DROPPED
    saved = json.loads(path.read_text()) if path.exists() else []
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN "
        "('agent_sessions_message', 'agent_sessions_messagechunk') "
        "AND (indexdef ILIKE '%% USING gin %%' OR indexdef ILIKE '%% USING hnsw %%')"
    ).fetchall()
    known = {name for name, _ in saved}
    saved += [[name, definition] for name, definition in rows if name not in known]
    path.write_text(json.dumps(saved, indent=1))
    for name, _ in rows:
        conn.execute(f'DROP INDEX "{name}"')
    return [tuple(x) for x in saved]


def build_indexes(conn, folder: Path) -> dict[str, float]:
    path = folder / DROPPED
    if not path.exists():
        return {}
    conn.execute("SET maintenance_work_mem = '4GB'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    times = {}
    for name, definition in json.loads(path.read_text()):
        exists = conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name]).fetchone()
        if exists:
            continue
        print(f"  building {name} …", flush=True)
        started = time.perf_counter()
        conn.execute(definition)
        times[name] = time.perf_counter() - started
        print(f"  built {name} in {times[name]:.0f} s", flush=True)
    path.unlink()
    return times


SESSION_COLUMNS = (
    "id, team_id, project_id, public_id, external_id, agent_name, agent_persona, workflow,"
    " title, user_name, source_format, status, lifecycle, started_at, ended_at,"
    " message_count, size_bytes, topics, artifacts, metadata, summary, embedding_model,"
    " created_at, updated_at, access_count, delete_reason, enrichment_status,"
    " enrichment_error, enrichment_attempts, enriched_at, enriched_through_seq"
)


def copy_sessions(conn, rows, extra_columns: str = "") -> None:
    """COPY session rows (values in ``SESSION_COLUMNS`` order, then ``extra_columns``)."""
    columns = SESSION_COLUMNS + (f", {extra_columns}" if extra_columns else "")
    with conn.cursor().copy(f"COPY agent_sessions_session ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def copy_messages_and_chunks(conn, messages, chunks, context: str) -> None:
    """COPY messages (through ``staging_message``, computing their keyword context with the
    ``context`` SQL expression when given, and then their ranking document) and their chunks,
    inside the caller's transaction."""
    from sessions.models import SEARCH_CONFIG

    with conn.cursor().copy("COPY staging_message FROM STDIN") as copy:
        for row in messages:
            copy.write_row(row)
    context_column, context_value, window = "", "", ""
    if context:
        context_column = ", context_vector"
        context_value = f", to_tsvector('{SEARCH_CONFIG}', {context})"
        window = " WINDOW w AS (PARTITION BY m.session_id ORDER BY m.seq)"
    conn.execute(
        "INSERT INTO agent_sessions_message (id, team_id, session_id, seq, role, author,"
        " content, timestamp, token_count, client_id, tool_name, tool_call_id, metadata,"
        " created_at, enrichment_status, enrichment_error, enrichment_attempts,"
        f" enriched_at{context_column})"
        " SELECT m.id, m.team_id, m.session_id, m.seq, m.role, m.author, m.content,"
        " m.timestamp, m.token_count, '', '', '', '{}', now(), 'done', '', 0, now()"
        f"{context_value} FROM staging_message m"
        f" JOIN agent_sessions_session s ON s.id = m.session_id{window} ORDER BY m.id"
    )
    if context and "ranking_vector" in columns_of(conn, MESSAGES):
        # The stored ranking document, as capture writes it (it reads the generated
        # search_vector, so it comes after the rows).
        from sessions.capture.keyword_context import RANKING_DOCUMENT

        conn.execute(
            f"UPDATE agent_sessions_message m SET ranking_vector = {RANKING_DOCUMENT.format(m='m')}"
            " WHERE m.id BETWEEN (SELECT min(id) FROM staging_message)"
            " AND (SELECT max(id) FROM staging_message)"
        )
    conn.execute("TRUNCATE staging_message")
    with conn.cursor().copy(
        "COPY agent_sessions_messagechunk (id, team_id, session_id, message_id, index,"
        " char_start, char_end, text, embedding, model, created_at)"
        " FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(
            ["int8", "int8", "int8", "int8", "int2", "int4", "int4", "text", "vector",
             "text", "timestamptz"]
        )  # fmt: skip
        for row in chunks:
            copy.write_row(row)


def prepare_bulk_load(conn, folder: Path, tables: tuple[str, ...]) -> tuple[str | None, dict]:
    """Make ``conn`` ready for COPY: search indexes dropped (rebuilt after), no FK triggers
    (the rows are consistent by construction), a staging table for messages. Returns the
    keyword-context SQL (None on a schema without it) and the next free id of each table."""
    context = context_expression() if "context_vector" in columns_of(conn, MESSAGES) else None
    drop_search_indexes(conn, folder)
    conn.execute("SET session_replication_role = replica")
    conn.execute("SET synchronous_commit = off")
    conn.execute("SET work_mem = '256MB'")
    conn.execute(
        "CREATE TEMP TABLE staging_message (id bigint, team_id bigint, session_id bigint,"
        " seq int, role text, author text, content text, timestamp timestamptz,"
        " token_count int)"
    )
    next_id = {}
    for table in tables:
        row = conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM agent_sessions_{table}")
        next_id[table] = row.fetchone()[0]
    return context, next_id


def fresh_tables_and_pool(conn, folder: Path) -> tuple[Pool, float]:
    """Empty the session tables a previous, unfinished load left, then embed the pool
    (returned with the seconds that took)."""
    from sessions.models import Session

    if Session.objects.exists():
        print("a previous load did not finish: emptying the session tables")
        conn.execute(
            "TRUNCATE agent_sessions_entity, agent_sessions_messagechunk,"
            " agent_sessions_message, agent_sessions_session"
        )
    print("embedding the pool of real texts …", flush=True)
    pool, pool_seconds = build_pool(folder)
    print(f"pool: {len(pool.texts)} texts embedded in {pool_seconds:.0f} s", flush=True)
    return pool, pool_seconds


def load(conn, folder: Path, pool: Pool, sizes: list[int], projects: list) -> dict:
    """COPY sessions, messages and chunks for every team; returns timings."""

    context, next_id = prepare_bulk_load(conn, folder, ("session", "message", "messagechunk"))
    now = datetime.now(UTC)
    base = now - timedelta(days=365)
    generate_seconds = copy_seconds = 0.0
    pool_size = len(pool.texts)
    dims = pool.vectors.shape[1]
    total = sum(sizes)
    done = 0
    started_all = time.perf_counter()
    for team_index, (size, project) in enumerate(zip(sizes, projects, strict=True)):
        started = time.perf_counter()
        rng = np.random.default_rng([SEED, team_index])
        lengths = session_lengths(rng, size)
        sessions, messages, chunks = [], [], []
        primary = np.concatenate(
            [(rng.integers(pool_size) + np.arange(n)) % pool_size for n in lengths]
        )
        second = rng.integers(pool_size, size=size)
        has_second = rng.random(size) < SECOND_TEXT_SHARE
        weights = np.where(has_second, rng.uniform(0.4, 0.9, size), 0.0).astype(np.float32)
        noise = rng.standard_normal((size, dims)).astype(np.float32)
        noise *= NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
        vectors = pool.vectors[primary] + weights[:, None] * pool.vectors[second] + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        position = 0
        for n in lengths:
            session_id = next_id["session"]
            next_id["session"] += 1
            started_at = base + timedelta(seconds=float(rng.uniform(0, 365 * 86400)))
            contents = []
            for seq in range(n):
                i = position + seq
                a = int(primary[i])
                content = pool.texts[a]
                if has_second[i]:
                    content += "\n\n" + pool.texts[int(second[i])]
                contents.append(content)
                message_id = next_id["message"]
                next_id["message"] += 1
                author, role = pool.authors[a], pool.roles[a]
                ts = started_at + timedelta(seconds=45 * seq)
                messages.append(
                    (
                        message_id,
                        project.team_id,
                        session_id,
                        seq,
                        role,
                        author,
                        content,
                        ts,
                        len(content) // 4,
                    )
                )
                chunks.append(
                    (
                        next_id["messagechunk"],
                        project.team_id,
                        session_id,
                        message_id,
                        0,
                        0,
                        len(content),
                        f"{author or role}: {content}",
                        vectors[i],
                        MODEL,
                        now,
                    )
                )
                next_id["messagechunk"] += 1
            position += n
            agent = AGENTS[int(rng.integers(len(AGENTS)))]
            sessions.append(
                (session_id, project.team_id, project.pk,
                 f"{started_at:%Y-%m-%d}-{agent}-{session_id:06x}", "", agent, "",
                 WORKFLOWS[int(rng.integers(len(WORKFLOWS)))], _cut(contents[0], 80), "", "api",
                 "completed", "active", started_at, started_at + timedelta(seconds=45 * n), n,
                 sum(len(c) for c in contents), [], [], "{}",
                 _cut(" ".join(contents[:2]), 300), "", now, now, 0, "", "done", "", 0, now,
                 n - 1)
            )  # fmt: skip
        generate_seconds += time.perf_counter() - started
        started = time.perf_counter()
        with conn.transaction():
            copy_sessions(conn, sessions)
            copy_messages_and_chunks(conn, messages, chunks, context)
        copy_seconds += time.perf_counter() - started
        done += size
        print(
            f"  team {team_index + 1}/{len(sizes)}: {size} messages in {len(lengths)} sessions;"
            f" {done}/{total} loaded ({time.perf_counter() - started_all:.0f} s)",
            flush=True,
        )
    for table in ("session", "message", "messagechunk"):
        conn.execute(
            f"SELECT setval(pg_get_serial_sequence('agent_sessions_{table}', 'id'),"
            f" (SELECT max(id) FROM agent_sessions_{table}))"
        )
    conn.execute("SET session_replication_role = origin")
    return {"generate_s": generate_seconds, "copy_s": copy_seconds}


def relation_sizes(conn) -> dict[str, int]:
    rows = conn.execute(
        "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c"
        " WHERE c.relname IN ('agent_sessions_message', 'agent_sessions_messagechunk',"
        " 'chunk_embedding_hnsw', 'message_search_gin', 'message_context_gin')"
    ).fetchall()
    return dict(rows)


def prepare(folder: Path, args) -> tuple[list, dict]:
    """Teams and projects (always), and the data unless ``folder`` holds it already."""
    from teams.services import ensure_team_and_project

    sizes = team_sizes(args.messages, args.teams, args.sizes)
    projects = [ensure_team_and_project(f"bench-{i:03d}", "main")[1] for i in range(args.teams)]
    marker = folder / MARKER
    if marker.exists():
        info = json.loads(marker.read_text())
        loaded = (info["messages"], info["teams"], info.get("sizes", "zipf"))
        if loaded != (args.messages, args.teams, args.sizes):
            raise SystemExit(
                f"{folder} holds {loaded[0]} messages in {loaded[1]} teams of {loaded[2]} "
                "sizes; use another --keep folder for other sizes"
            )
        print(f"reusing the data loaded in {folder} ({info['messages']} messages)")
        return projects, info
    conn = raw_connection()
    try:
        pool, pool_seconds = fresh_tables_and_pool(conn, folder)
        print(f"loading {args.messages} messages in {args.teams} teams with COPY …", flush=True)
        started = time.perf_counter()
        timings = load(conn, folder, pool, sizes, projects)
        timings["load_s"] = time.perf_counter() - started
        print(f"loaded in {timings['load_s']:.0f} s; building indexes …", flush=True)
        timings["indexes_s"] = build_indexes(conn, folder)
        started = time.perf_counter()
        for table in ("session", "message", "messagechunk"):
            conn.execute(f"VACUUM (ANALYZE) agent_sessions_{table}")
        timings["vacuum_s"] = time.perf_counter() - started
        info = {
            "messages": args.messages,
            "teams": args.teams,
            "sizes": args.sizes,
            "pool_texts": len(pool.texts),
            "pool_embed_s": pool_seconds,
            **timings,
            "sizes_bytes": relation_sizes(conn),
            "loaded_at": datetime.now(UTC).isoformat(),
        }
    finally:
        conn.close()
    marker.write_text(json.dumps(info, indent=1))
    return projects, info


def team_indexes(action: str, warm: bool) -> str:
    """Build (what the hourly task would have done) or drop the big teams' own indexes, and
    warm them as a worker does when it starts."""
    from django.db import connection

    from search.speed import team_indexes

    if action == "drop":
        for name in team_indexes.existing():
            with connection.cursor() as cursor:
                cursor.execute(f'DROP INDEX "{name}"')
        team_indexes.forget()
        return "dropped"
    print("building the big teams' own indexes (search/speed/team_indexes.py) …", flush=True)
    changes = team_indexes.ensure(concurrently=False)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_sessions_messagechunk")  # the HNSW indexes' sizes
    team_indexes.forget()
    built = [c for c in changes if c.action == "built"]
    teams = len(team_indexes.indexed_teams())
    summary = (
        f"{teams} teams of >= {team_indexes.min_messages()} messages have their own indexes"
        f" ({len(built)} built now in {sum(c.seconds for c in built):.0f} s)"
    )
    if not warm:
        return summary + "; not warmed (--no-warm)"
    # What a worker does when it starts (search.tasks.warm_buffers).
    from search.speed import warm

    print("reading what searches read into shared_buffers (search/speed/warm.py) …", flush=True)
    warmed = warm.warm()
    return summary + (
        f"; then, as a starting worker does, {sum(w.megabytes for w in warmed) / 1024:.1f} GB"
        f" read into shared_buffers in {sum(w.seconds for w in warmed):.0f} s"
        f" ({sum(w.what == 'graph' for w in warmed)} graphs, the rows of"
        f" {sum(w.what == 'rows' for w in warmed)} teams)"
    )


# ---------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------


@dataclass
class Statement:
    label: str
    ms: float
    sql: str
    params: object
    beside: bool = False  # ran beside, on a pool thread's own connection (search/speed/parallel.py)


@dataclass
class Probe:
    """Per-request instrumentation: query embedding and SQL statements."""

    embed_ms: float = 0.0
    wait_ms: float = 0.0  # the request thread waiting for work beside (the keyword side, …)
    statements: list[Statement] = field(default_factory=list)


STEP_PATTERNS = [
    ("vector", "WITH nn AS"),  # the HNSW path
    ("vector", "WITH near AS"),  # the quantized path
    ("vector", "(c.embedding <=> %s::vector) + 0"),  # the exact path
    ("parse", "unnest(to_tsvector"),
    ("keyword", "ORDER BY score DESC"),  # with the counts, in scopes that count them
    ("idf", "count(*) FILTER"),
    ("snippets", "ts_headline"),
    ("scope", "sum(s.message_count)"),
    ("distances", "DISTINCT ON (c.message_id)"),
    ("scores", "ts_rank("),
    ("auth", "agent_sessions_apitoken"),
]


def step_of(sql: str) -> str:
    for label, pattern in STEP_PATTERNS:
        if pattern in sql:
            return label
    head = sql.lstrip()[:20].upper()
    if head.startswith(("SET LOCAL", "SAVEPOINT", "RELEASE", "ROLLBACK")):
        return "txn"
    if sql.startswith('UPDATE "agent_sessions_session"'):
        return "touch"
    if 'FROM "agent_sessions_message"' in sql:
        if '"teams_team"' in sql:
            return "load"
        if '"deleted_at" IS NULL' in sql:
            return "session_of"
        return "messages"
    return "other"


class Instruments:
    def __init__(self):
        from search import semantic
        from search.speed import parallel

        self.semantic, self.parallel = semantic, parallel
        self.original = semantic.query_vector
        self.original_beside = parallel.beside
        self.probe = Probe()

    def __enter__(self):
        from django.db import connection

        def timed_query_vector(text):
            started = time.perf_counter()
            try:
                return self.original(text)
            finally:
                self.probe.embed_ms += (time.perf_counter() - started) * 1000

        def wrapper(execute, sql, params, many, context, beside=False):
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                ms = (time.perf_counter() - started) * 1000
                self.probe.statements.append(Statement(step_of(sql), ms, sql, params, beside))

        def wrapper_beside(*args):
            return wrapper(*args, beside=True)

        probe_of = self

        class TimedFuture:
            def __init__(self, future):
                self.future = future

            def result(self):
                started = time.perf_counter()
                try:
                    return self.future.result()
                finally:
                    probe_of.probe.wait_ms += (time.perf_counter() - started) * 1000

        def beside(work, *args):
            def timed(*inner):
                # Runs in a pool thread: its connection is that thread's own.
                with connection.execute_wrapper(wrapper_beside):
                    return work(*inner)

            return TimedFuture(self.original_beside(timed, *args))

        self.semantic.query_vector = timed_query_vector
        self.parallel.beside = beside
        self._wrapper = connection.execute_wrapper(wrapper)
        self._wrapper.__enter__()
        return self

    def __exit__(self, *exc):
        self._wrapper.__exit__(*exc)
        self.semantic.query_vector = self.original
        self.parallel.beside = self.original_beside

    def fresh(self) -> Probe:
        """A new probe, with the query-vector cache cleared (so the query gets embedded)."""
        self.original.cache_clear()
        self.probe = Probe()
        return self.probe


@dataclass
class Team:
    index: int
    project: object
    size: int
    client: object
    quartile: int = 0


@dataclass
class Row:
    team: Team
    query: str
    ms: float = 0.0
    took_ms: float = 0.0
    embed_ms: float = 0.0
    wait_ms: float = 0.0
    critical_sql_ms: float = 0.0  # statements on the request's own connection
    steps: dict[str, float] = field(default_factory=dict)
    path: str = ""
    hits: int = 0
    statements: list[Statement] = field(default_factory=list)
    context_ms: float = 0.0
    context_embed_ms: float = 0.0
    context_sql_ms: float = 0.0
    context_tokens: int = 0
    context_blocks: int = 0
    context_statements: list[Statement] = field(default_factory=list)
    recall10: float = 0.0
    recall_pool: float = 0.0
    vector_ms: float = 0.0
    exact_ms: float = 0.0
    underfilled: bool = False
    hnsw_index: bool = False


def make_teams(projects, sizes) -> list[Team]:
    from rest_framework.test import APIClient

    from teams.models import ApiToken

    teams = []
    for index, (project, size) in enumerate(zip(projects, sizes, strict=True)):
        _, raw = ApiToken.issue(project, name="search-speed bench")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        teams.append(Team(index, project, size, client))
    by_size = sorted(teams, key=lambda t: t.size)
    for rank, team in enumerate(by_size):
        team.quartile = 1 + rank * 4 // len(by_size)
    return by_size


def questions() -> list[str]:
    """Every distinct LoCoMo question, shuffled."""
    from bench.locomo import load_locomo

    found = [qa["question"] for c in load_locomo() for qa in c["qa"] if qa.get("question")]
    found = list(dict.fromkeys(found))
    np.random.default_rng(SEED).shuffle(found)
    return found


def buffer_io() -> tuple[int, int, int]:
    """Blocks the server's client backends read from disk, found in shared_buffers, and
    evicted from it, so far (pg_stat_io, PostgreSQL 16+)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(reads), 0), coalesce(sum(hits), 0), coalesce(sum(evictions), 0)"
            " FROM pg_stat_io WHERE backend_type IN ('client backend', 'background worker')"
        )
        return tuple(int(v) for v in cursor.fetchone())


def timed_search(instruments: Instruments, row: Row) -> None:
    probe = instruments.fresh()
    started = time.perf_counter()
    response = row.team.client.get("/api/v1/search", {"q": row.query, "limit": 10})
    row.ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
    body = response.json()
    row.took_ms = body.get("took_ms", 0.0)
    row.path = body.get("vector_path", "?")
    row.hits = len(body["results"])
    row.embed_ms = probe.embed_ms
    row.wait_ms = probe.wait_ms
    row.statements = probe.statements
    for s in probe.statements:
        row.steps[s.label] = row.steps.get(s.label, 0.0) + s.ms
        if not s.beside:
            row.critical_sql_ms += s.ms


def timed_context(instruments: Instruments, row: Row) -> None:
    probe = instruments.fresh()
    started = time.perf_counter()
    response = row.team.client.post(
        "/api/v1/context", {"query": row.query, "max_tokens": CONTEXT_TOKENS}, format="json"
    )
    row.context_ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"context failed: {response.status_code} {response.content[:300]}")
    body = response.json()
    row.context_tokens, row.context_blocks = body["tokens"], len(body["sessions"])
    row.context_embed_ms = probe.embed_ms
    # What the request thread spent in SQL or waiting for the SQL beside (the keyword side …).
    row.context_sql_ms = sum(s.ms for s in probe.statements if not s.beside) + probe.wait_ms
    row.context_statements = probe.statements


EXACT_SQL = (
    "SELECT c.message_id, c.embedding <=> %s::vector AS d FROM agent_sessions_messagechunk c"
    " JOIN agent_sessions_session s ON s.id = c.session_id"
    " WHERE c.team_id = %s AND s.project_id = %s AND s.deleted_at IS NULL"
    " ORDER BY (c.embedding <=> %s::vector) + 0 LIMIT %s"
)


def vector_recall(row: Row) -> None:
    from django.db import connection

    from search import keyword, semantic, tuning
    from sessions.filters import Filters
    from teams.access import Access

    project = row.team.project
    scope = Access(team_ids=(project.team_id,), project_ids=(project.pk,))
    documents = keyword.scope_documents(scope, Filters())
    vector = semantic.query_vector(row.query)
    started = time.perf_counter()
    top10 = semantic.candidates(vector, scope, Filters(), 10, documents)
    row.vector_ms = (time.perf_counter() - started) * 1000
    captured: list[Statement] = []

    def capture(execute, sql, params, many, context):
        captured.append(Statement(step_of(sql), 0.0, sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        pool = semantic.candidates(vector, scope, Filters(), tuning.MIN_POOL, documents)
    # Which plan the production query gets: the path's name does not say the index is used.
    targets = [s for s in captured if s.label == "vector"]
    plans = [explain(captured, target, analyze=False) for target in targets]
    row.hnsw_index = any("chunk_embedding_hnsw" in p or "chunk_hnsw_team_" in p for p in plans)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(EXACT_SQL, [vector, project.team_id, project.pk, vector, 40])
        exact = list(dict.fromkeys(r[0] for r in cursor.fetchall()))[:10]
    row.exact_ms = (time.perf_counter() - started) * 1000
    wanted = set(exact)
    row.recall10 = len(wanted & set(top10)) / max(1, len(wanted))
    row.recall_pool = len(wanted & set(list(pool)[:10])) / max(1, len(wanted))
    row.underfilled = len(top10) < min(10, documents)


_VECTOR_LITERAL = re.compile(r"'\[[-+0-9.e,]{200,}\]'")


def explain(statements: list[Statement], target: Statement, *, analyze: bool = True) -> str:
    """EXPLAIN (ANALYZE) of ``target``, after the ``SET LOCAL``s its request ran before it."""
    from django.db import connection, transaction

    def leading_sets(sql: str) -> tuple[list[str], str]:
        # Settings sent with a statement (search/speed/one_trip.py) lead its text.
        heads = []
        while sql.lstrip().upper().startswith("SET LOCAL"):
            head, sql = sql.split(";", 1)
            heads.append(head)
        return heads, sql

    sets = []
    for s in statements:
        if s is target:
            break
        heads, rest = leading_sets(s.sql)
        if not rest.strip():  # a SET LOCAL of its own, in force for the rest of the transaction
            sets += heads
    heads, sql = leading_sets(target.sql)
    sets += heads
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in sets:
            cursor.execute(setting)
        options = "ANALYZE, BUFFERS" if analyze else "COSTS"
        cursor.execute(f"EXPLAIN ({options}) " + sql, target.params)
        plan = "\n".join(_VECTOR_LITERAL.sub("'[…]'", r[0]) for r in cursor.fetchall())
        transaction.set_rollback(True)  # EXPLAIN ANALYZE of an UPDATE would change rows
    return plan


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def p(values: list[float], share: float) -> str:
    return f"{percentile(values, share):.1f}" if values else "-"


def groups(rows: list[Row], teams: list[Team]) -> list[tuple[str, list[Row]]]:
    largest = {t.index for t in teams[-5:]}
    out = [
        ("all", rows),
        ("smallest quartile", [r for r in rows if r.team.quartile == 1]),
        ("2nd quartile", [r for r in rows if r.team.quartile == 2]),
        ("3rd quartile", [r for r in rows if r.team.quartile == 3]),
        ("largest quartile", [r for r in rows if r.team.quartile == 4]),
        ("5 largest teams", [r for r in rows if r.team.index in largest]),
        ("path exact", [r for r in rows if r.path == "exact"]),
        ("path quantized", [r for r in rows if r.path == "quantized"]),
        ("path hnsw", [r for r in rows if r.path == "hnsw"]),
        ("path team-hnsw", [r for r in rows if r.path == "team-hnsw"]),
    ]
    return [(name, g) for name, g in out if g]


def report(rows: list[Row], teams: list[Team], info: dict, args, explains: list[str]) -> None:
    print("\n== Data")
    sizes = sorted(t.size for t in teams)
    quartiles = defaultdict(list)
    for t in teams:
        quartiles[t.quartile].append(t.size)
    print(
        f"{sum(sizes)} messages, {len(teams)} teams; team sizes: smallest {sizes[0]}, median "
        f"{int(statistics.median(sizes))}, largest {sizes[-1]}; quartiles "
        + ", ".join(f"Q{q} {min(v)}-{max(v)}" for q, v in sorted(quartiles.items()))
    )
    from search import semantic, tuning
    from teams.access import Access

    paths = defaultdict(int)
    for t in teams:
        access = Access(team_ids=(t.project.team_id,), project_ids=(t.project.pk,))
        paths[semantic.vector_path(access, t.size)] += 1
    print(f"team indexes: {info.get('team_indexes', '?')}")
    print(
        f"vector paths by team: {dict(paths)} (EXACT_SCAN_MAX_CHUNKS "
        f"{tuning.EXACT_SCAN_MAX_CHUNKS}, QUANTIZED_MAX_CHUNKS {tuning.QUANTIZED_MAX_CHUNKS}, "
        f"QUANTIZED_RERANK {tuning.QUANTIZED_RERANK}); HNSW_EF_SEARCH {tuning.HNSW_EF_SEARCH}, "
        f"HNSW_MAX_SCAN_TUPLES {tuning.HNSW_MAX_SCAN_TUPLES}"
    )
    print(
        f"load: pool of {info.get('pool_texts')} real texts embedded in "
        f"{info.get('pool_embed_s', 0):.0f} s; generate {info.get('generate_s', 0):.0f} s + COPY "
        f"{info.get('copy_s', 0):.0f} s = {info.get('load_s', 0):.0f} s; VACUUM ANALYZE "
        f"{info.get('vacuum_s', 0):.0f} s"
    )
    for name, seconds in info.get("indexes_s", {}).items():
        print(f"index build: {name} {seconds:.0f} s")
    for name, size in sorted(info.get("sizes_bytes", {}).items()):
        print(f"size: {name} {size / 2**20:.0f} MB")

    before, after = info["loadavg"]
    print(
        f"machine: {os.cpu_count()} cores, load average {before:.1f} before and {after:.1f} "
        "after the timed requests"
    )
    rounds = info.get("warmup", {})
    if rounds:
        print("\n== Warm-up rounds (one search per team each; round 1 is the cold server, ms)")
        for number, g in sorted(rounds.items()):
            print(
                f"round {number + 1}: search p50 {p([r.ms for r in g], 0.5)} p95 "
                f"{p([r.ms for r in g], 0.95)}, largest quartile p95 "
                f"{p([r.ms for r in g if r.team.quartile == 4], 0.95)}"
            )
    if info.get("io"):
        reads, hits, evictions = info["io"]
        print(
            f"\nbuffers during the timed searches: {reads} blocks read from disk "
            f"({reads / max(1, len(rows)):.0f} per search), {hits} found in shared_buffers, "
            f"{evictions} evicted"
        )
    print(f"\n== Hybrid search, GET /api/v1/search limit=10, {len(rows)} queries (ms)")
    header = (
        f"{'group':<18} {'teams msgs':>12} {'n':>4} {'p50':>6} {'p95':>6} {'max':>6} "
        f"{'embed50':>7} {'exact/q/hnsw/team':>17} {'<10 hits':>8} | {'ctx p50':>7} {'ctx p95':>7} "
        f"| {'R@10':>5} {'R@10 pool':>9} {'vec p50':>7} {'vec p95':>7} {'HNSW idx':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, g in groups(rows, teams):
        msgs = sorted({r.team.size for r in g})
        print(
            f"{name:<18} {f'{msgs[0]}-{msgs[-1]}':>12} {len(g):>4} {p([r.ms for r in g], 0.5):>6} "
            f"{p([r.ms for r in g], 0.95):>6} {max(r.ms for r in g):>6.1f} "
            f"{p([r.embed_ms for r in g], 0.5):>7} "
            f"{sum(r.path == 'exact' for r in g):>4}/{sum(r.path == 'quantized' for r in g)}"
            f"/{sum(r.path == 'hnsw' for r in g)}/{sum(r.path == 'team-hnsw' for r in g):<4} "
            f"{sum(r.hits < 10 for r in g):>8} | {p([r.context_ms for r in g], 0.5):>7} "
            f"{p([r.context_ms for r in g], 0.95):>7} | "
            f"{statistics.fmean(r.recall10 for r in g):>5.3f} "
            f"{statistics.fmean(r.recall_pool for r in g):>9.3f} "
            f"{p([r.vector_ms for r in g], 0.5):>7} {p([r.vector_ms for r in g], 0.95):>7} "
            f"{sum(r.hnsw_index for r in g):>8}"
        )
    print(
        "R@10: semantic.candidates(limit=10) vs exact scan; R@10 pool: top 10 of the search's "
        f"own pool (limit {tuning.MIN_POOL}); vec: that limit=10 call alone; HNSW idx: "
        "queries whose vector statement's plan uses an HNSW index, shared or the team's (EXPLAIN)"
    )

    print("\n== Where the search time goes (median per query, ms; p95 in brackets)")
    labels = ["embed", *dict.fromkeys(label for label, _ in STEP_PATTERNS)]
    labels += ["txn", "session_of", "load", "messages", "touch", "other", "wait beside"]
    labels += ["python+http"]
    for name, g in groups(rows, teams):
        if name in ("2nd quartile", "3rd quartile"):
            continue
        parts = []
        for label in labels:
            if label == "embed":
                values = [r.embed_ms for r in g]
            elif label == "wait beside":
                values = [r.wait_ms for r in g]
            elif label == "python+http":
                values = [r.ms - r.embed_ms - r.critical_sql_ms - r.wait_ms for r in g]
            else:
                values = [r.steps.get(label, 0.0) for r in g]
            if max(values) >= 0.05:
                parts.append(f"{label} {p(values, 0.5)} ({p(values, 0.95)})")
        print(f"{name:<18} " + ", ".join(parts))
    print(
        f"context: embed {p([r.context_embed_ms for r in rows], 0.5)}, SQL "
        f"{p([r.context_sql_ms for r in rows], 0.5)}, rest "
        f"{p([r.context_ms - r.context_embed_ms - r.context_sql_ms for r in rows], 0.5)} "
        f"(median ms); tokens p50 {p([r.context_tokens for r in rows], 0.5)}, blocks p50 "
        f"{p([r.context_blocks for r in rows], 0.5)}"
    )

    again = info.get("again")
    if again:
        print("\n== The same searches asked again (their pages now cached; query embedded anew)")
        for name, g in groups(again, teams):
            if name in ("all", "largest quartile", "5 largest teams", "path team-hnsw"):
                print(
                    f"{name:<18} p50 {p([r.ms for r in g], 0.5):>6} p95 "
                    f"{p([r.ms for r in g], 0.95):>6}, vector step p50 "
                    f"{p([r.steps.get('vector', 0.0) for r in g], 0.5)} p95 "
                    f"{p([r.steps.get('vector', 0.0) for r in g], 0.95)}"
                )

    search_p95 = percentile([r.ms for r in rows], 0.95)
    context_p95 = percentile([r.context_ms for r in rows], 0.95)
    recall = statistics.fmean(r.recall10 for r in rows)
    print("\n== Targets")
    for what, value, target, ok in [
        ("search p95 (ms)", search_p95, f"<= {TARGET_SEARCH_P95:.0f}", search_p95 <= 50),
        ("context p95 (ms)", context_p95, f"<= {TARGET_CONTEXT_P95:.0f}", context_p95 <= 150),
        ("vector recall@10", recall, f">= {TARGET_RECALL}", recall >= TARGET_RECALL),
    ]:
        print(f"{what:<18} {value:>8.3f}  target {target:<7} {'met' if ok else 'MISSED'}")
    if explains:
        print("\n== EXPLAIN ANALYZE of the slowest statements")
        for text in explains:
            print(text)
    keep = f" --keep {args.keep}" if args.keep else " --keep DIR"
    print(
        "\nreproduce: .venv/bin/python bench/search_speed.py "
        f"--messages {args.messages} --teams {args.teams} --sizes {args.sizes} "
        f"--queries {args.queries} --warmup {args.warmup}"
        f"{' --no-warm' if args.no_warm else ''}{keep}"
    )


# ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--sizes",
        choices=["zipf", "equal"],
        default="zipf",
        help="team sizes: Zipf-like (default; ~90k messages in the largest of 100 teams) or "
        "all equal (10k each at 1M in 100 teams)",
    )
    parser.add_argument(
        "--keep", type=Path, help="database folder to reuse (loaded once, then reused)"
    )
    parser.add_argument(
        "--team-indexes",
        choices=["build", "drop"],
        default="build",
        help="build the big teams' own indexes first, as the hourly task does (default; "
        "search/speed/team_indexes.py), or drop them, to measure without",
    )
    parser.add_argument(
        "--no-warm",
        action="store_true",
        help="skip reading what searches read into shared_buffers (search/speed/warm.py), which a "
        "worker does when it starts: the server as it is before that has run",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=5,
        help="untimed rounds of one search per team before the timed ones (default 5); "
        "each round's latency is reported, the first being the cold server",
    )
    parser.add_argument(
        "--explain", type=int, default=2, help="slowest queries to EXPLAIN ANALYZE per kind"
    )
    args = parser.parse_args()
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)

    with django_on_embedded_servers(args.keep) as folder:
        projects, info = prepare(folder, args)
        info["team_indexes"] = team_indexes(args.team_indexes, not args.no_warm)
        info["warmup"] = {}
        teams = make_teams(projects, team_sizes(args.messages, args.teams, args.sizes))
        texts = questions()
        if len(texts) < args.queries + len(teams):
            raise SystemExit(f"only {len(texts)} distinct LoCoMo questions")
        # The timed questions are never asked in the warm-up. Warm-up round r asks team t the
        # question (r·teams + t) modulo the rest: a team meets a question again only after
        # len(rest) / gcd(len(rest), teams) rounds (893 with 100 teams).
        timed, rest = texts[: args.queries], texts[args.queries :]
        warm = [rest[i % len(rest)] for i in range(len(teams) * args.warmup)]
        rows = [Row(teams[i % len(teams)], q) for i, q in enumerate(timed)]
        load_before = os.getloadavg()[0]
        with Instruments() as instruments:
            # Warm-up rounds ask every team one question each, never a timed one. The first
            # round after the server starts is the cold figure (shared_buffers empty, and the
            # page cache of these VMs is reclaimed within seconds); later rounds show how fast
            # the server reaches its steady state.
            print(
                f"warming up ({args.warmup} rounds of {len(teams)} searches, a context "
                "for every 5th) …",
                flush=True,
            )
            for i, q in enumerate(warm):
                row = Row(teams[i % len(teams)], q)
                timed_search(instruments, row)
                if i % 5 == 0:
                    timed_context(instruments, row)
                info["warmup"].setdefault(i // len(teams), []).append(row)
            print(f"timing {len(rows)} searches …", flush=True)
            io_before = buffer_io()
            for row in rows:
                timed_search(instruments, row)
            io_after = buffer_io()
            info["io"] = [after - before for before, after in zip(io_before, io_after, strict=True)]
            print(f"timing {len(rows)} context requests …", flush=True)
            for row in rows:
                timed_context(instruments, row)
            # The same searches again: the pages they read are now in shared_buffers, so this
            # is the server whose working set is cached (the query is still embedded anew).
            print(f"asking the {len(rows)} timed searches again …", flush=True)
            info["again"] = [Row(r.team, r.query) for r in rows]
            for row in info["again"]:
                timed_search(instruments, row)
        info["loadavg"] = (load_before, os.getloadavg()[0])
        print("measuring vector recall …", flush=True)
        for row in rows:
            vector_recall(row)
        explains = []
        for path in ("exact", "quantized", "hnsw", "team-hnsw"):
            slow = sorted((r for r in rows if r.path == path), key=lambda r: -r.ms)
            for r in slow[: args.explain]:
                target = max(r.statements, key=lambda s: s.ms)
                explains.append(
                    f"-- search, team of {r.team.size} messages, path {path}, {r.ms:.1f} ms, "
                    f"slowest statement '{target.label}' {target.ms:.1f} ms; q={r.query!r}\n"
                    f"{explain(r.statements, target)}"
                )
        for r in sorted(rows, key=lambda r: -r.context_ms)[: args.explain]:
            target = max(r.context_statements, key=lambda s: s.ms)
            explains.append(
                f"-- context, team of {r.team.size} messages, {r.context_ms:.1f} ms, slowest "
                f"statement '{target.label}' {target.ms:.1f} ms; q={r.query!r}\n"
                f"{explain(r.context_statements, target)}"
            )
        report(rows, teams, info, args, explains)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
