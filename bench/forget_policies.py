"""Forgetting by policy at scale (issue 16): the daily lifecycle and retention run over
~100,000 sessions and 1,000,000 messages, search latency before and after archiving 80 % of
the sessions, and the disk archiving frees.

**Data**: ``bench/search_speed.py``'s load (real texts and mixtures of their real vectors,
written with ``COPY``), 100 teams of Zipf-like sizes, with sessions of 5-18 messages
(log-uniform, ~10 on average), so 1M messages make ~100k sessions. Sessions start uniformly
over the past year; each was created when it started, was last active and last written to
when it ended, and was never read.

**Policy** (set on every project before the run): idle after 24 hours, decaying after 7
days, archived after ``ARCHIVE_DAYS`` (73: ~80 % of the sessions are older); every other
project keeps sessions ``RETENTION_DAYS`` (300: ~18 % of its sessions are older), with a
trash period of 30 days.

**Steps**, in one run so that the figures compare on the same (shared, noisy) machine; each
figure is printed as soon as it is measured:

1. hybrid search through the API with each team's token (LoCoMo questions, round robin over
   the teams; warm-up rounds first, untimed): p50/p95 *before*;
2. the size of sessions, messages, chunks and the chunks' HNSW index
   (``pg_total_relation_size``);
3. the daily run — decay, lifecycle (archiving), retention, trash purge — in a child process,
   as the worker runs it: each step's wall time and the process's peak memory (RSS);
4. the same searches *after*, at once (what users meet the morning after; autovacuum has
   not run yet), then the daily run again (it must find nothing to do);
5. reclaiming the space: ``REINDEX INDEX CONCURRENTLY`` of the chunks' HNSW index, then
   ``VACUUM`` (a plain VACUUM first would repair the HNSW graph around every deleted vector,
   which after archiving most of them takes far longer than rebuilding it: it ran for over
   15 minutes here before it was cancelled), and the sizes after.

    .venv/bin/python bench/forget_policies.py [--messages 1000000] [--teams 100]
        [--queries 200] [--warmup 2] [--keep DIR] [--load-only]

``--keep DIR`` loads the data into DIR (ahead of time with ``--load-only``); a run uses it up
(archiving and retention change it), so the run after that loads it again. Check at small
scale first (``--messages 50000``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import search_speed
from bench.harness import REPO_ROOT, django_on_embedded_servers, percentile

SESSION_MESSAGES = (5, 18)
ARCHIVE_DAYS = 73
RETENTION_DAYS = 300
TABLES = ("agent_sessions_session", "agent_sessions_message", "agent_sessions_messagechunk")
RELATIONS = (*TABLES, "chunk_embedding_hnsw")

# The daily run, step by step, as the beat schedule runs it: (label, task).
DAILY_RUN = (
    ("decay", "sessions.tasks.update_decay"),
    ("lifecycle", "sessions.tasks.archive_check"),
    ("retention", "sessions.tasks.enforce_retention"),
    ("purge", "sessions.tasks.purge_trash"),
)

CHILD = """
import json, resource, sys, time, importlib
import django
django.setup()
steps = json.loads(sys.argv[1])
rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = {}
for label, dotted in steps:
    module, name = dotted.rsplit(".", 1)
    task = getattr(importlib.import_module(module), name)
    started = time.perf_counter()
    result = task()
    times[label] = {"seconds": time.perf_counter() - started, "result": result}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"steps": times, "rss_start_kb": rss_start, "rss_peak_kb": peak}, default=str))
"""


def daily_run() -> dict:
    """The daily run in a fresh process (its peak memory is its own)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(DAILY_RUN)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(f"the daily run failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - started
    return result


def set_policies(projects) -> dict:
    """Sessions' clocks as the docstring says, and the policies on every project."""
    from django.db import connection

    from teams.models import Project

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_sessions_session SET created_at = started_at,"
            " updated_at = coalesce(ended_at, started_at),"
            " last_active_at = coalesce(ended_at, started_at), lifecycle = 'active',"
            " decay_priority = 1.0, archived_at = NULL"
        )
    for index, project in enumerate(projects):
        Project.objects.filter(pk=project.pk).update(
            idle_after_hours=24,
            decaying_after_days=7,
            archive_after_days=ARCHIVE_DAYS,
            retention_days=RETENTION_DAYS if index % 2 else None,
            trash_days=30,
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE coalesce(ended_at, started_at)"
            f" < now() - interval '{ARCHIVE_DAYS} days') FROM agent_sessions_session"
        )
        sessions, archivable = cursor.fetchone()
    return {"sessions": sessions, "archivable": archivable}


def sizes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relname = ANY(%s)",
            [list(RELATIONS)],
        )
        return dict(cursor.fetchall())


def vacuum() -> float:
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    return time.perf_counter() - started


def timed_searches(teams, queries: list[str], warmup: int) -> list[float]:
    """Milliseconds of each timed search, after ``warmup`` untimed rounds over the teams."""
    with search_speed.Instruments() as instruments:
        for i in range(warmup * len(teams)):
            row = search_speed.Row(teams[i % len(teams)], queries[-1 - i % len(queries)])
            search_speed.timed_search(instruments, row)
        rows = [search_speed.Row(teams[i % len(teams)], q) for i, q in enumerate(queries)]
        for row in rows:
            search_speed.timed_search(instruments, row)
    return [row.ms for row in rows]


def summary(values: list[float]) -> str:
    return f"p50 {percentile(values, 0.5):.1f} ms, p95 {percentile(values, 0.95):.1f} ms"


def megabytes(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--teams", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds over the teams")
    parser.add_argument("--keep", type=Path, help="database folder to reuse")
    parser.add_argument(
        "--load-only", action="store_true", help="load the data into --keep, then stop"
    )
    args = parser.parse_args()
    args.sizes = "zipf"
    search_speed.SESSION_MESSAGES = SESSION_MESSAGES
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)

    with django_on_embedded_servers(args.keep) as folder:
        projects, info = search_speed.prepare(folder, args)
        print(f"loaded: {json.dumps(info, default=str)[:400]}", flush=True)
        if args.load_only:
            return
        # From here on the data is changed: the next run must load it again.
        (folder / search_speed.MARKER).unlink(missing_ok=True)
        clocks = set_policies(projects)
        vacuum()
        print(
            f"{clocks['sessions']:,} sessions, {clocks['archivable']:,} older than "
            f"{ARCHIVE_DAYS} days",
            flush=True,
        )
        teams = search_speed.make_teams(
            projects, search_speed.team_sizes(args.messages, args.teams, args.sizes)
        )
        queries = search_speed.questions()[: args.queries]
        print(f"load average {os.getloadavg()[0]:.1f}; searches before …", flush=True)
        before = timed_searches(teams, queries, args.warmup)
        report("search before", summary(before))
        size_before = sizes()
        report("sizes before", sizes_line(size_before))
        first = daily_run()
        report("daily run", daily_line(first))
        after = timed_searches(teams, queries, args.warmup)
        report("search after", summary(after))
        ratio = percentile(after, 0.95) / percentile(before, 0.95)
        report("p95 after / before", f"{ratio:.2f}")
        report("sizes after the run", sizes_line(sizes()))
        report("daily run again", daily_line(daily_run()))
        reindex_s = reindex()
        vacuum_s = vacuum()
        report("REINDEX CONCURRENTLY of the HNSW index", f"{reindex_s:.0f} s")
        report("VACUUM (ANALYZE) after it", f"{vacuum_s:.0f} s")
        size_after = sizes()
        report("sizes after reclaiming", sizes_line(size_after))
        saved = sum(size_before.values()) - sum(size_after.values())
        report("disk freed", f"{megabytes(saved)} ({saved / sum(size_before.values()):.0%})")
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def report(label: str, text: str) -> None:
    print(f"- {label}: {text}", flush=True)


def sizes_line(measured: dict[str, int]) -> str:
    return ", ".join(f"{name} {megabytes(measured[name])}" for name in RELATIONS)


def daily_line(run: dict) -> str:
    steps = ", ".join(
        f"{name} {step['seconds']:.1f} s ({brief(step['result'])})"
        for name, step in run["steps"].items()
    )
    return (
        f"{run['wall_s']:.1f} s in all (process start included); {steps}; peak RSS "
        f"{run['rss_peak_kb'] / 1024:.0f} MB ({run['rss_start_kb'] / 1024:.0f} MB after start-up)"
    )


def brief(result) -> str:
    """A task's summary without its per-project list."""
    if isinstance(result, dict):
        result = {k: v for k, v in result.items() if not isinstance(v, list)}
    return str(result)


def reindex() -> float:
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX CONCURRENTLY chunk_embedding_hnsw")
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
