"""Enrichment throughput: raw model vs. the pipeline, freshness under load, worker memory.

In one run, on the same texts (LoCoMo turns, "<speaker>: <text>", ~130 characters):

1. raw model throughput in this process: torch fp32, ONNX fp32 and ONNX int8 at 1 and all
   threads, in turn (texts per second); the best is the baseline. The raw model embeds what
   the pipeline embeds for those messages: each one's chunk text, so with its header and,
   for a short one, the turn before it (``sessions/enrich/chunking.py``), not the bare turn;
2. pipeline throughput: N messages captured (already stored), then real Celery worker
   processes embed them through Redis; "stored → embedded" messages per second; the ratio
   to (1) is the pipeline's efficiency;
3. freshness: captures at a steady rate (default 50 messages/s) while the workers run;
   p50/p95 of the time from commit to "vector-searchable" (its chunk row committed);
4. peak RSS per worker process (from /proc, children included).

    .venv/bin/python bench/pipeline.py [--messages 20000] [--workers 2] [--rate 50]

Starts its own embedded PostgreSQL and Redis in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO_ROOT, SHARED, django_on_embedded_servers


def locomo_texts() -> list[str]:
    data = json.loads((SHARED / "data" / "locomo" / "locomo10.json").read_text())
    return [
        f"{t['speaker']}: {t['text']}"
        for conversation in data
        for key, turns in conversation["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for t in turns
    ]


def store_sessions(project, texts: list[str], messages: int, *, first: int = 0) -> None:
    """Sessions of 1,000 user messages cycling through ``texts``, captured through the
    capture service, up to ``messages`` messages (``first``: how many are stored already)."""
    from sessions.capture.service import capture_session
    from transcripts.base import ParsedMessage, ParsedSession

    per_session = 1000
    for s in range(first // per_session, messages // per_session):
        capture_session(
            project,
            ParsedSession(
                source_format="api",
                agent_name="bench",
                messages=[
                    ParsedMessage(role="user", content=texts[(s * per_session + i) % len(texts)])
                    for i in range(per_session)
                ],
            ),
        )


def embedded_texts(texts: list[str]) -> list[str]:
    """What the pipeline embeds for ``store_sessions``' messages made of ``texts``: each
    user message's chunk text, after the message before it when it is short."""
    from sessions.enrich.chunking import chunk_message, context_for, header_for

    header = header_for("user")
    out, context = [], ""
    for text in texts:
        out += [chunk.text for chunk in chunk_message(text, header=header, context=context)]
        context = context_for(text, header=header)
    return out


def raw_throughput(texts: list[str]) -> tuple[float, str, dict[str, float]]:
    """Texts/s of each backend (torch fp32, ONNX fp32, ONNX int8) at 1 and all threads, in
    turn on the same texts (``bench/embedding_backends.py``); the best, its name, and all.
    A text is one message's chunk as the pipeline embeds it (``embedded_texts``)."""
    from bench.embedding_backends import backends, interleaved_rates

    configs = backends(sorted({1, os.cpu_count() or 1}), batch=32, level="all")
    rates = interleaved_rates(configs, embedded_texts(texts[:600]), rounds=1)
    best = max(rates, key=rates.get)
    return rates[best], best, rates


def start_workers(count: int, env: dict, log_dir: Path) -> list[subprocess.Popen]:
    workers = []
    for i in range(count):
        log = (log_dir / f"worker-{i}.log").open("wb")
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "memoryapp",
                    "worker",
                    "--concurrency",
                    "1",
                    "--hostname",
                    f"bench{i}@%h",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                ],
                cwd=REPO_ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    return workers


def peak_rss_sampler(workers, stop: threading.Event, peaks: dict):
    while not stop.is_set():
        for w in workers:
            try:
                proc = psutil.Process(w.pid)
                for p in [proc, *proc.children(recursive=True)]:
                    peaks[p.pid] = max(peaks.get(p.pid, 0), p.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
        stop.wait(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rate", type=float, default=50.0, help="messages/s for freshness")
    parser.add_argument("--freshness-seconds", type=float, default=60.0)
    args = parser.parse_args()

    os.environ["EMBEDDING_THREADS"] = os.environ.get("EMBEDDING_THREADS", "1")
    # The graphs made once (by this process, before the workers start), as in production:
    # the workers' memory is then their steady state, not an export's.
    os.environ.setdefault("MODEL_CACHE_DIR", str(REPO_ROOT / "var" / "models"))
    with django_on_embedded_servers() as tmp:
        from django.db import connection

        from sessions.capture.service import capture_session
        from sessions.models import Message, MessageChunk
        from teams.services import ensure_team_and_project
        from transcripts.base import ParsedMessage, ParsedSession

        texts = locomo_texts()
        raw, raw_config, raw_rates = raw_throughput(texts)
        for name, rate in raw_rates.items():
            print(f"raw {name:<16} {rate:8.1f} texts/s", flush=True)
        from sessions.embedding.backend import resolved_backend

        used = resolved_backend()
        print(f"workers embed with: {used}", flush=True)
        label = {"torch": "torch fp32", "onnx": "onnx fp32", "onnx-int8": "onnx int8"}[used]
        own_raw = max(rate for name, rate in raw_rates.items() if name.startswith(label))

        _, project, _ = ensure_team_and_project("bench", "bench")
        store_sessions(project, texts, args.messages)
        connection.close()
        total = Message.objects.count()
        env = dict(os.environ)
        workers = start_workers(args.workers, env, tmp)
        stop, peaks = threading.Event(), {}
        sampler = threading.Thread(target=peak_rss_sampler, args=(workers, stop, peaks))
        sampler.start()
        try:
            from sessions.tasks import embed_pending

            # Let every worker load its model before the clock starts.
            time.sleep(1)
            first = None
            for _ in range(args.workers):
                embed_pending.delay()
            while Message.objects.filter(enrichment_status="pending").exists():
                if first is None and MessageChunk.objects.exists():
                    first = time.perf_counter()
                    first_count = Message.objects.filter(enrichment_status="done").count()
                time.sleep(0.5)
            elapsed = time.perf_counter() - first
            pipeline_rate = (total - first_count) / elapsed
            print(
                f"pipeline: {pipeline_rate:,.0f} messages/s over {total - first_count:,} "
                f"messages with {args.workers} worker(s)",
                flush=True,
            )

            # Freshness under steady capture.
            seq = 0
            interval = 10 / args.rate  # capture in groups of 10
            deadline = time.perf_counter() + args.freshness_seconds
            tracked = []
            while time.perf_counter() < deadline:
                tick = time.perf_counter()
                result = capture_session(
                    project,
                    ParsedSession(
                        source_format="api",
                        agent_name="fresh",
                        messages=[
                            ParsedMessage(role="user", content=texts[(seq + i) % len(texts)])
                            for i in range(10)
                        ],
                    ),
                )
                committed = time.perf_counter()
                tracked.append((committed, [m.id for m in result.added]))
                seq += 10
                time.sleep(max(0.0, interval - (time.perf_counter() - tick)))
            # Wait for the last vectors, then read the latencies from the rows' own times:
            # message committed (its created_at) → first chunk written (its created_at; the
            # worker commits right after). Polling after the capture loop would measure
            # "when we looked", not when the vector landed.
            tracked_ids = [mid for _, ids in tracked for mid in ids]
            deadline = time.perf_counter() + 300
            while time.perf_counter() < deadline:
                embedded_count = (
                    MessageChunk.objects.filter(message_id__in=tracked_ids)
                    .values("message_id")
                    .distinct()
                    .count()
                )
                if embedded_count == len(tracked_ids):
                    break
                time.sleep(0.5)
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT extract(epoch FROM min(c.created_at) - m.created_at)"
                    " FROM agent_sessions_message m"
                    " JOIN agent_sessions_messagechunk c ON c.message_id = m.id"
                    " WHERE m.id = ANY(%s) GROUP BY m.id",
                    [tracked_ids],
                )
                latencies = [float(row[0]) for row in cursor.fetchall()]
        finally:
            stop.set()
            sampler.join()
            for w in workers:
                w.send_signal(signal.SIGTERM)
            for w in workers:
                w.wait(60)
        latencies.sort()
        p50 = statistics.median(latencies)
        p95 = latencies[int(0.95 * (len(latencies) - 1))]
        peak = max(peaks.values()) / 1024**3
        print()
        print(f"raw model throughput (best) {raw:,.0f} texts/s ({raw_config})")
        print(
            f"pipeline stored→embedded    {pipeline_rate:,.0f} messages/s ({args.workers} workers)"
        )
        print(f"ratio pipeline / raw        {pipeline_rate / raw:.2f}")
        print(
            f"ratio pipeline / raw {label:<9} {pipeline_rate / own_raw:.2f} (the workers' backend,"
            f" best of its thread counts: {own_raw:,.0f} texts/s)"
        )
        print(
            f"freshness at {args.rate:.0f} msg/s       p50 {p50:.2f} s, p95 {p95:.2f} s "
            f"({len(latencies)} messages)"
        )
        print(f"peak RSS per worker process {peak:.2f} GiB")


if __name__ == "__main__":
    main()
