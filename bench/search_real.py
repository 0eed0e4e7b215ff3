"""Search speed on real transcripts (issue 18): the latency of ``GET /api/v1/search`` over
the real coding-agent and chat transcripts in ``../shared/samples/`` and over bigger projects
of long messages built from them, with where the time goes.

**Data**, one team and project per set:

- ``real``: every transcript of ``../shared/samples/`` imported through
  ``POST /api/v1/import`` (multipart ``file``), as a user would, then embedded by the
  pipeline in this process (``bench/locomo.py``'s ``run_pipeline``: the real model).
- ``long-4k`` and ``long-40k`` (~4,000 and ~40,000 messages): copies of the real sessions,
  loaded with ``COPY`` (``bench/search_speed.py``'s loader, keyword context computed as
  capture computes it). A copy session repeats a random real session message by message;
  in each copied message a share ``PERTURB_SHARE`` of the words is replaced by other words of
  the samples of the same length (so the copies are not word-for-word duplicates and the
  chunks' character spans stay those of the original), and ``LONG_SHARE`` of the non-user
  messages become a pasted log or a long tool output: the message followed by other long
  sample messages (tool outputs, file dumps, big replies), up to ``LONG_MAX_CHARS``. Each copy
  chunk keeps its original's span and takes its original's real vector plus Gaussian noise
  of norm ``search_speed.NOISE``, renormalised (perturbed real vectors, never random ones).
  The 40k team is big enough for its own indexes, which are built and warmed as the hourly
  task and a starting worker would (``search_speed.team_indexes``).

**Queries**: ``QUESTIONS`` below, questions people would ask about such transcripts, written
for this bench (never ``bench/coding_questions.yaml``, the quality set). Each set is asked
every question once untimed (warm server), then ``--rounds`` timed rounds, each query
embedded anew (the query-vector cache is cleared), through ``rest_framework.test.APIClient``
with the project's token, ``limit=10``, hybrid.

Reported per set: p50/p95/max of the request, and where the time goes, median and p95 per
part: the query embedding, each kind of SQL statement (``search_speed.Instruments``: the
keyword side, the other side's scores, the candidates' kinds and the snippets run beside, on
pool threads' own connections, so their statements and the request's wait for them are
shown apart), Python inside ``search()`` (fusion, snippets'
parsing), and the rest of the request outside ``search()`` (authentication, parameters,
serialisation, JSON); the size of the JSON answer. Then EXPLAIN ANALYZE of the slowest
statements of the slowest queries.

    .venv/bin/python bench/search_real.py [--sets real,long-4k,long-40k] [--rounds 2]
        [--explain 2] [--keep DIR]  # DIR keeps the loaded data: a second run reuses it
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import search_speed
from bench.harness import SHARED, django_on_embedded_servers, percentile

SEED = 18
SETS = {"real": 0, "long-4k": 4_000, "long-40k": 40_000}
PERTURB_SHARE = 0.2
LONG_SHARE = 0.15
LONG_MIN_CHARS = 2_000  # a sample message this long can be pasted into another
LONG_MAX_CHARS = 40_000
MARKER = "search_real.json"
TARGET_P95 = 50.0

QUESTIONS = [
    "how did we set up the dataset loading and the train/test split?",
    "what model did we use to predict the target from the sensor values?",
    "why were the chart labels not showing?",
    "how did we remove Chart.js from the frontend?",
    "what does the README say about the project?",
    "where are the training results written?",
    "how was the synthetic IoT data generated?",
    "which columns does the synthetic dataset have?",
    "what learning rate and number of epochs did training use?",
    "how is the MSE chart drawn in the UI?",
    "what files are in the project structure?",
    "which commit added the frontend?",
    "how did we apply for the agentic engineering grant?",
    "what does the apply-grant skill do?",
    "where is the session transcript exported to?",
    "is telemetry configured?",
    "what is the project about according to plan.txt?",
    "how did we find the codex session logs?",
    "why could we not use git history as proof of work?",
    "what was written in the grant application?",
    "who is the applicant and what is their background?",
    "what is the budget or funding amount asked for?",
    "what are the milestones of the project?",
    "which tech stack does the wallet use?",
    "how are the AI session logs attached?",
    "what did the export-session script print?",
    "which files did the agent read before writing?",
    "what is the superteam grant link?",
    "book a one-way flight from New York to Seattle",
    "how was the flight paid with certificates and a card?",
    "why was the total price different from what was quoted?",
    "can a basic economy ticket be changed?",
    "cancel a reservation because of travel insurance and sickness",
    "what happens when the reservation id is unknown?",
    "which flights leave after 11 AM?",
    "how many bags are allowed for a gold member?",
    "change the return flight to a later one the same day",
    "what was the compensation offered for the delayed flight?",
    "upgrade the cabin class of a reservation",
    "what is the user id of the passenger?",
    "which payment methods does the user have?",
    "transfer to a human agent",
    "add travel insurance to the booking",
    "what are the flight numbers of the booked itinerary?",
    "error when running the script",
    "traceback in train.py",
    "npm install failed",
    "permission denied",
    "what command starts the frontend server?",
    "tsc compile errors in ui.ts",
    "how do I run the tests?",
    "which python packages are required?",
    "SEARCH/REPLACE block applied to model.py",
    "tokens and cost of the aider session",
    "what did the assistant conclude at the end?",
    "summary of the changes made today",
    "what did we decide about external libraries?",
    "did the training loss go down?",
    "how to export a session to a file",
    "rg --files README.md",
]


# ---------------------------------------------------------------------------------------
# The data
# ---------------------------------------------------------------------------------------


def sample_files() -> list[Path]:
    """The transcript files of ../shared/samples (not their README, licences or aider's
    input history, which the chat history's importer reads beside it when present)."""
    return [
        p
        for p in sorted((SHARED / "samples").rglob("*"))
        if p.is_file()
        and p.name != "README.md"
        and "LICENSE" not in p.name
        and not p.name.endswith(".input.history")
    ]


def project_client(name: str):
    from rest_framework.test import APIClient

    from teams.models import ApiToken
    from teams.services import ensure_team_and_project

    _, project, _ = ensure_team_and_project(f"real-{name}", "main")
    _, raw = ApiToken.issue(project, name="search-real bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return project, client


def import_samples(client) -> None:
    """Every sample transcript through the import API."""
    for path in sample_files():
        with path.open("rb") as handle:
            response = client.post("/api/v1/import", {"file": handle}, format="multipart")
        if response.status_code not in (200, 201):
            raise SystemExit(f"import of {path.name} failed: {response.status_code} "
                             f"{response.content[:300]}")  # fmt: skip


@dataclass
class Source:
    """A real message and its chunks, to be copied."""

    role: str
    author: str
    content: str
    chunks: list[tuple[int, int, np.ndarray]]  # (char_start, char_end, vector)


def real_sessions(project) -> list[list[Source]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.session_id, m.role, m.author, m.content, c.char_start, c.char_end,"
            " c.embedding::real[] FROM agent_sessions_message m"
            " JOIN agent_sessions_session s ON s.id = m.session_id"
            " LEFT JOIN agent_sessions_messagechunk c ON c.message_id = m.id"
            " WHERE s.project_id = %s ORDER BY m.session_id, m.seq, c.index",
            [project.pk],
        )
        rows = cursor.fetchall()
    sessions: dict[int, list[Source]] = {}
    last_id = None
    for message_id, session_id, role, author, content, start, end, vector in rows:
        messages = sessions.setdefault(session_id, [])
        if message_id != last_id:
            messages.append(Source(role, author, content, []))
            last_id = message_id
        if vector is not None:
            messages[-1].chunks.append((start, end, np.asarray(vector, dtype=np.float32)))
    return [m for m in sessions.values() if m]


def words_by_length(sources: list[Source]) -> dict[int, list[str]]:
    found: dict[int, set[str]] = {}
    for s in sources:
        for word in re.findall(r"[A-Za-z]{3,}", s.content):
            found.setdefault(len(word), set()).add(word)
    return {n: sorted(words) for n, words in found.items()}


def perturb(text: str, vocabulary: dict[int, list[str]], rng: np.random.Generator) -> str:
    """``text`` with ``PERTURB_SHARE`` of its words replaced by sample words of the same
    length (character offsets unchanged)."""

    def swap(match: re.Match) -> str:
        word = match.group(0)
        choices = vocabulary.get(len(word))
        if not choices or rng.random() >= PERTURB_SHARE:
            return word
        return choices[int(rng.integers(len(choices)))]

    return re.sub(r"[A-Za-z]{3,}", swap, text)


def noisy(vector: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(vector.shape).astype(np.float32)
    out = vector + noise * (search_speed.NOISE / np.linalg.norm(noise))
    return out / np.linalg.norm(out)


def copied_message(
    source: Source,
    pastes: list[Source],
    vocabulary: dict[int, list[str]],
    rng: np.random.Generator,
) -> tuple[str, list[tuple[int, int, np.ndarray]]]:
    """A copy of ``source`` (perturbed), followed by ``pastes`` (a pasted log): its content
    and chunks (spans shifted to where each part lands, perturbed real vectors)."""
    parts, chunks, offset = [], [], 0
    for part in [source, *pastes]:
        if parts:
            parts.append("\n\n")
            offset += 2
        parts.append(perturb(part.content, vocabulary, rng))
        chunks += [(offset + s, offset + e, noisy(v, rng)) for s, e, v in part.chunks]
        offset += len(part.content)
    return "".join(parts), chunks


def load_copies(project, sessions: list[list[Source]], messages: int, folder: Path) -> dict:
    """COPY about ``messages`` copied messages into ``project``; returns counts."""
    conn = search_speed.raw_connection()
    try:
        context, next_id = search_speed.prepare_bulk_load(
            conn, folder, ("session", "message", "messagechunk")
        )
        rng = np.random.default_rng([SEED, messages])
        flat = [m for s in sessions for m in s]
        vocabulary = words_by_length(flat)
        long_ones = [m for m in flat if len(m.content) >= LONG_MIN_CHARS and m.chunks]
        now = datetime.now(UTC)
        session_rows, message_rows, chunk_rows = [], [], []
        lengths: list[int] = []
        while len(message_rows) < messages:
            source = sessions[int(rng.integers(len(sessions)))]
            session_id = next_id["session"]
            next_id["session"] += 1
            started_at = now - timedelta(days=float(rng.uniform(1, 365)))
            for seq, m in enumerate(source):
                pastes = []
                if m.role != "user" and rng.random() < LONG_SHARE and long_ones:
                    size = len(m.content)
                    while size < LONG_MAX_CHARS and rng.random() < 0.7:
                        paste = long_ones[int(rng.integers(len(long_ones)))]
                        if size + len(paste.content) > LONG_MAX_CHARS:
                            break
                        pastes.append(paste)
                        size += len(paste.content) + 2
                content, chunks = copied_message(m, pastes, vocabulary, rng)
                message_id = next_id["message"]
                next_id["message"] += 1
                lengths.append(len(content))
                message_rows.append(
                    (message_id, project.team_id, session_id, seq, m.role, m.author, content,
                     started_at + timedelta(seconds=30 * seq), len(content) // 4)
                )  # fmt: skip
                for index, (start, end, vector) in enumerate(chunks):
                    chunk_rows.append(
                        (next_id["messagechunk"], project.team_id, session_id, message_id, index,
                         start, end, f"{m.author or m.role}: {content[start:end]}", vector,
                         search_speed.MODEL, now)
                    )  # fmt: skip
                    next_id["messagechunk"] += 1
            n = len(source)
            first = message_rows[-n][6]
            session_rows.append(
                (session_id, project.team_id, project.pk, f"copy-{session_id:06x}", "",
                 "claude-code", "", "none", search_speed._cut(first, 80), "", "api",
                 "completed", "active", started_at, started_at + timedelta(seconds=30 * n), n,
                 sum(r[8] * 4 for r in message_rows[-n:]), [], [], "{}",
                 search_speed._cut(first, 300), "", now, now, 0, "", "done", "", 0, now, n - 1)
            )  # fmt: skip
        with conn.transaction():
            search_speed.copy_sessions(conn, session_rows)
            search_speed.copy_messages_and_chunks(conn, message_rows, chunk_rows, context)
        for table in ("session", "message", "messagechunk"):
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('agent_sessions_{table}', 'id'),"
                f" (SELECT max(id) FROM agent_sessions_{table}))"
            )
        conn.execute("SET session_replication_role = origin")
        search_speed.build_indexes(conn, folder)
        for table in ("session", "message", "messagechunk"):
            conn.execute(f"VACUUM (ANALYZE) agent_sessions_{table}")
    finally:
        conn.close()
    return {"messages": len(message_rows), "chunks": len(chunk_rows), **shape(lengths)}


def shape(lengths: list[int]) -> dict:
    ordered = sorted(lengths)
    return {
        "chars_p50": percentile(ordered, 0.5),
        "chars_p90": percentile(ordered, 0.9),
        "chars_p99": percentile(ordered, 0.99),
        "chars_max": ordered[-1] if ordered else 0,
        "over_10k": sum(n > 10_000 for n in ordered),
    }


def prepare(folder: Path, names: list[str]) -> tuple[dict, dict]:
    """Projects and clients of the sets, and the data unless ``folder`` holds it."""
    from bench.retrieval_api import run_pipeline
    from sessions.models import Message, MessageChunk, Session

    marker = folder / MARKER
    info = json.loads(marker.read_text()) if marker.exists() else {}
    clients = {}
    real, client = project_client("real")
    clients["real"] = (real, client)
    if "real" not in info:
        print("importing the samples through POST /api/v1/import …", flush=True)
        import_samples(client)
        seconds = run_pipeline()
        contents = Message.objects.filter(session__project=real).values_list("content", flat=True)
        info["real"] = {
            "sessions": Session.objects.filter(project=real).count(),
            "messages": len(contents),
            "chunks": MessageChunk.objects.filter(session__project=real).count(),
            "pipeline_s": seconds,
            **shape([len(c) for c in contents]),
        }
    sessions = None
    for name in names:
        if name == "real":
            continue
        project, client = project_client(name)
        clients[name] = (project, client)
        if name in info:
            continue
        sessions = sessions or real_sessions(real)
        print(f"loading {name} …", flush=True)
        info[name] = load_copies(project, sessions, SETS[name], folder)
        marker.write_text(json.dumps(info, indent=1))
    marker.write_text(json.dumps(info, indent=1))
    return clients, info


# ---------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------


@dataclass
class Timed:
    query: str
    ms: float = 0.0
    took_ms: float = 0.0  # inside search()
    embed_ms: float = 0.0
    wait_ms: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)
    beside_ms: float = 0.0  # statements beside, on pool threads' own connections
    critical_sql_ms: float = 0.0
    path: str = ""
    answer_bytes: int = 0
    statements: list = field(default_factory=list)


# Statements bench/search_speed.py's step_of leaves as "other", named by what they read.
LABELS = {
    "s.lifecycle, s.decay_priority": "kinds",
    "FROM pg_stats": "word stats",
    "FROM pg_index": "team indexes",
    "sum(message_count) FROM agent_sessions_session WHERE team_id = ANY": "team indexes",
    '"teams_apitoken"': "auth",
    "RESET ": "txn",
}


def label_of(sql: str) -> str:
    known = [label for pattern, label in LABELS.items() if pattern in sql]
    return known[0] if known else search_speed.step_of(sql)


def ask(instruments, client, query: str) -> Timed:
    row = Timed(query)
    probe = instruments.fresh()
    started = time.perf_counter()
    response = client.get("/api/v1/search", {"q": query, "limit": 10})
    row.ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
    body = response.json()
    row.took_ms, row.path = body.get("took_ms", 0.0), body.get("vector_path", "?")
    row.answer_bytes = len(response.content)
    row.embed_ms, row.wait_ms, row.statements = probe.embed_ms, probe.wait_ms, probe.statements
    for s in probe.statements:
        s.label = label_of(s.sql)
        label = f"{s.label} (beside)" if s.beside else s.label
        row.steps[label] = row.steps.get(label, 0.0) + s.ms
        if s.beside:
            row.beside_ms += s.ms
        else:
            row.critical_sql_ms += s.ms
    return row


def parts_of(row: Timed) -> dict[str, float]:
    """Where one request's time went (ms); the parts add up to the request."""
    inside_sql = sum(
        s.ms for s in row.statements if not s.beside and s.label not in ("auth", "touch")
    )
    outside_sql = row.critical_sql_ms - inside_sql
    return {
        "embed": row.embed_ms,
        **{k: v for k, v in row.steps.items() if "beside" not in k},
        "wait beside": row.wait_ms,
        "python in search()": row.took_ms - row.embed_ms - inside_sql - row.wait_ms,
        "outside search() (auth, params, serialise, JSON)": row.ms - row.took_ms - outside_sql,
    }


def _median_p95(values: list[float]) -> str:
    return f"{percentile(values, 0.5):>6.1f} / {percentile(values, 0.95):>6.1f}"


def report(name: str, rows: list[Timed], info: dict, explains: list[str]) -> dict:
    ms = [r.ms for r in rows]
    data = info.get(name, {})
    print(
        f"\n== {name}: {data.get('messages')} messages, {data.get('chunks')} chunks; message"
        f" length p50 {data.get('chars_p50')} p90 {data.get('chars_p90')} p99"
        f" {data.get('chars_p99')} max {data.get('chars_max')} chars, {data.get('over_10k')}"
        f" over 10k; vector path {sorted({r.path for r in rows})}"
    )
    print(
        f"search p50 {percentile(ms, 0.5):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms, max "
        f"{max(ms):.1f} ms over {len(rows)} requests; answer p50 "
        f"{percentile([r.answer_bytes for r in rows], 0.5) / 1024:.1f} KB"
    )
    parts = [parts_of(r) for r in rows]
    labels = list(dict.fromkeys(k for p in parts for k in p))
    print("where the request's time goes (ms, median / p95):")
    for label in labels:
        values = [p.get(label, 0.0) for p in parts]
        if max(values) >= 0.05:
            print(
                f"  {label:<52} {percentile(values, 0.5):>6.1f} / {percentile(values, 0.95):>6.1f}"
            )
    beside = sorted(dict.fromkeys(k for r in rows for k in r.steps if "beside" in k))
    print("beside, on pool threads' own connections (keyword side, scores, kinds, snippets):")
    for label in beside:
        values = [r.steps.get(label, 0.0) for r in rows]
        print(f"  {label:<52} {_median_p95(values)}")
    for text in explains:
        print(text)
    return {"p50": percentile(ms, 0.5), "p95": percentile(ms, 0.95)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--explain", type=int, default=2)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    names = [n for n in args.sets.split(",") if n]
    if unknown := set(names) - set(SETS):
        raise SystemExit(f"unknown sets {sorted(unknown)}; known: {', '.join(SETS)}")
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)
    with django_on_embedded_servers(args.keep) as folder:
        clients, info = prepare(folder, names)
        print(search_speed.team_indexes("build", warm=True), flush=True)
        summary = {}
        load_before = os.getloadavg()[0]
        with search_speed.Instruments() as instruments:
            for name in names:
                _, client = clients[name]
                for query in QUESTIONS:  # warm: caches, buffers, the model
                    ask(instruments, client, query)
                rows = [ask(instruments, client, q) for _ in range(args.rounds) for q in QUESTIONS]
                explains = []
                for r in sorted(rows, key=lambda r: -r.ms)[: args.explain]:
                    target = max(r.statements, key=lambda s: s.ms)
                    # The SET LOCALs before it on its own connection (the keyword side's
                    # are on another).
                    same = [s for s in r.statements if s.beside == target.beside]
                    explains.append(
                        f"-- {name}: {r.ms:.1f} ms, slowest statement '{target.label}' "
                        f"{target.ms:.1f} ms; q={r.query!r}\n"
                        f"{search_speed.explain(same, target)}"
                    )
                summary[name] = report(name, rows, info, explains)
        print(
            f"\nmachine: {os.cpu_count()} cores, load average {load_before:.1f} before and "
            f"{os.getloadavg()[0]:.1f} after the timed requests; {datetime.now(UTC):%Y-%m-%d}"
        )
        print("\n== Target: p95 <= 50 ms")
        for name, figures in summary.items():
            met = "met" if figures["p95"] <= TARGET_P95 else "MISSED"
            print(f"{name:<10} p50 {figures['p50']:6.1f}  p95 {figures['p95']:6.1f}  {met}")
        keep = f" --keep {args.keep}" if args.keep else ""
        print(
            f"\nreproduce: .venv/bin/python bench/search_real.py --sets {args.sets} "
            f"--rounds {args.rounds}{keep}"
        )
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
