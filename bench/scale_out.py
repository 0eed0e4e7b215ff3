"""Scale-out on one machine: N worker processes against one PostgreSQL, and where the
database becomes the limit (the figures behind ``docs/scaling.md``).

In one run, on the same stored messages (LoCoMo turns, "<speaker>: <text>"):

1. **free model**: 1, 2, 4 … worker processes whose model call costs nothing
   (``bench/free_embedding_worker.py``: real tasks, claims, chunking and row writes, vectors
   from a pool of real embeddings), embedding every message again each round. Messages/s,
   and the CPU seconds that PostgreSQL and the workers spent per 1,000 messages. That is
   the ceiling of the database and the pipeline's own code, without the model;
2. **real model**: one real worker process with one thread (``EMBEDDING_THREADS=1``) on a
   share of the same messages: messages/s per worker core.

From PostgreSQL's CPU per message and one worker core's rate it says how many embedding
cores one PostgreSQL core keeps fed. On this 2-core machine workers and PostgreSQL share
the cores, so the free-model rounds past 2 processes measure contention too: the CPU
seconds per message are the figures that carry to bigger machines.

    .venv/bin/python bench/scale_out.py [--messages 40000] [--workers 1,2,4] [--real 3000]

Starts its own embedded PostgreSQL and Redis in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import (
    REPO_ROOT,
    cpu_seconds,
    django_on_embedded_servers,
    postgres_cpu,
    with_children,
)
from bench.pipeline import locomo_texts, store_sessions


def start_workers(command: list[str], count: int, env: dict, log_dir: Path, name: str):
    return [
        subprocess.Popen(
            [*command, "--hostname", f"{name}{i}@%h"],
            cwd=REPO_ROOT,
            env=env,
            stdout=(log_dir / f"{name}{i}.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        for i in range(count)
    ]


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        worker.wait(120)


def reset(message_ids: list[int]) -> None:
    """These messages pending again, with no chunks; the rest done. Sessions stay done, so
    only embedding runs."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE agent_sessions_messagechunk")
        cursor.execute(
            "UPDATE agent_sessions_message SET enrichment_status ="
            " CASE WHEN id = ANY(%s) THEN 'pending' ELSE 'done' END, claimed_by = NULL",
            [message_ids],
        )
        cursor.execute("UPDATE agent_sessions_session SET enrichment_status = 'done'")
        cursor.execute("VACUUM ANALYZE agent_sessions_message")
        cursor.execute("VACUUM ANALYZE agent_sessions_messagechunk")
    connection.close()


def run_round(workers: list[subprocess.Popen], var_dir: Path) -> dict:
    """Poke the started workers and wait until every pending message is embedded. The clock
    starts at the first chunk written (each worker has connected and loaded its model by
    then, or is about to), and the rate counts the messages embedded after it."""
    from sessions.models import Message, MessageChunk
    from sessions.tasks import embed_pending

    for _ in workers:
        embed_pending.delay()
    while not MessageChunk.objects.exists():
        time.sleep(0.05)
    started = time.perf_counter()
    pg_before, workers_before = postgres_cpu(var_dir), cpu_seconds(with_children(workers))
    done_before = Message.objects.filter(enrichment_status="done").count()
    while Message.objects.filter(enrichment_status="pending").exists():
        time.sleep(0.2)
    elapsed = time.perf_counter() - started
    pg_cpu = postgres_cpu(var_dir) - pg_before
    worker_cpu = cpu_seconds(with_children(workers)) - workers_before
    embedded = Message.objects.filter(enrichment_status="done").count() - done_before
    if embedded == 0:
        raise SystemExit("too few messages to time: give each round several batches' worth")
    return {
        "rate": embedded / elapsed,
        "seconds": elapsed,
        "pg_cpu_per_1k": 1000 * pg_cpu / embedded,
        "worker_cpu_per_1k": 1000 * worker_cpu / embedded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=40000)
    parser.add_argument("--workers", default="1,2,4", help="free-model worker counts")
    parser.add_argument("--real", type=int, default=3000, help="messages for the real model")
    parser.add_argument("--keep", type=Path, help="keep the data here (a second run reuses it)")
    args = parser.parse_args()
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)
    counts = [int(n) for n in args.workers.split(",")]

    os.environ["EMBEDDING_THREADS"] = "1"
    with django_on_embedded_servers(args.keep) as tmp:
        import numpy as np
        from django.db import connection

        from sessions.embedding.torch_runtime import embed
        from sessions.models import Message
        from teams.services import ensure_team_and_project

        texts = locomo_texts()
        pool = tmp / "vectors.npy"
        np.save(pool, embed(texts[:: max(1, len(texts) // 512)][:512]))

        _, project, _ = ensure_team_and_project("bench", "bench")
        store_sessions(project, texts, args.messages, first=Message.objects.count())
        ids = list(Message.objects.order_by("id").values_list("id", flat=True))[: args.messages]
        connection.close()
        var_dir = tmp / "var"
        env = dict(os.environ, FREE_EMBEDDING_POOL=str(pool))
        print(f"{len(ids):,} messages stored; load average {os.getloadavg()[0]:.1f}", flush=True)

        results = {}
        free = [sys.executable, str(REPO_ROOT / "bench" / "free_embedding_worker.py")]
        for count in counts:
            reset(ids)
            workers = start_workers(free, count, env, tmp, "free")
            try:
                results[count] = run_round(workers, var_dir)
            finally:
                stop_workers(workers)
            r = results[count]
            print(
                f"free model, {count} worker(s): {r['rate']:,.0f} msg/s; CPU per 1,000 "
                f"messages: PostgreSQL {r['pg_cpu_per_1k']:.2f} s, workers "
                f"{r['worker_cpu_per_1k']:.2f} s (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )

        reset(ids[: args.real])
        real_command = [
            sys.executable,
            *("-m", "celery", "-A", "memoryapp", "worker", "--concurrency", "1"),
            *("--loglevel", "WARNING", "--without-gossip", "--without-mingle"),
        ]
        workers = start_workers(real_command, 1, env, tmp, "real")
        try:
            real = run_round(workers, var_dir)
        finally:
            stop_workers(workers)

    print()
    print(
        "| worker processes (free model) | messages/s | PostgreSQL CPU s / 1k msg"
        " | worker CPU s / 1k msg |"
    )
    print("|---|---|---|---|")
    for count, r in results.items():
        print(
            f"| {count} | {r['rate']:,.0f} | {r['pg_cpu_per_1k']:.2f} | "
            f"{r['worker_cpu_per_1k']:.2f} |"
        )
    print(
        f"| 1, real model, 1 thread | {real['rate']:,.0f} | {real['pg_cpu_per_1k']:.2f} | "
        f"{real['worker_cpu_per_1k']:.2f} |"
    )
    pg_per_core = 1000 / max(min(r["pg_cpu_per_1k"] for r in results.values()), 1e-6)
    worker_per_core = 1000 / real["worker_cpu_per_1k"]
    print(
        f"\nPostgreSQL: ~{pg_per_core:,.0f} embedded messages/s per core it spends; one CPU "
        f"worker core (real model): ~{worker_per_core:,.0f} messages/s; so one PostgreSQL "
        f"core keeps ~{pg_per_core / worker_per_core:,.0f} CPU embedding cores fed"
    )


if __name__ == "__main__":
    main()
