"""Latency of a single-message append through the real REST API, with the embedding worker
idle and with it busy on the same sessions (issue 14: appends never wait on the worker).

Starts its own stack in a temporary data folder (embedded PostgreSQL and Redis, gunicorn,
one Celery worker), then, round after round:

  idle: the worker is paused (SIGSTOP), one client appends one message at a time;
  busy: the worker runs through a backlog of 2,000 messages (LoCoMo turns) in the same
        sessions the client appends to, so its claims and writes meet the appends.

Each append is timed from request to response, by one client (the agent's own loop).

    .venv/bin/python bench/append_latency.py [--rounds 3] [--appends 200] [--threads 1]

Medians over rounds of each round's p50 and p95; the machines are shared and noisy, so read
the busy/idle ratio, which both sides of the same run share.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.capture import locomo_texts, make_messages
from bench.harness import manage, percentile, post_json, web_stack

BACKLOG = 2000


def call(url: str, token: str, body: dict) -> dict:
    return post_json(url, token, json.dumps(body).encode())


def pending(env) -> int:
    out = manage(
        env,
        "shell",
        "-c",
        "from sessions.models import Message; "
        "print(Message.objects.exclude(enrichment_status='done').count())",
    )
    return int(out.strip().splitlines()[-1])


def timed_appends(base, token, session_id, texts, count, offset) -> list[float]:
    timings = []
    for i in range(count):
        message = make_messages(texts, offset + i, 1)[0]
        message["client_id"] = f"lat-{offset + i}"
        started = time.perf_counter()
        call(f"{base}/api/v1/sessions/{session_id}/messages", token, message)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--appends", type=int, default=200, help="timed appends per phase")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument(
        "--threads", type=int, default=1, help="gunicorn threads per worker (gthread when >1)"
    )
    args = parser.parse_args()
    texts = locomo_texts()
    results: dict[str, list[tuple[float, float]]] = {"idle": [], "busy": []}
    web_args = (
        ["--worker-class", "gthread", "--threads", str(args.threads)] if args.threads > 1 else []
    )
    with (
        tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp,
        web_stack(
            Path(tmp) / "var", web_workers=args.web_workers, worker=True, web_args=web_args
        ) as stack,
    ):
        env, base, token, worker = stack.env, stack.base, stack.token, stack.worker
        session = call(f"{base}/api/v1/sessions", token, {"agent_name": "latency"})["id"]
        timed_appends(base, token, session, texts, 20, 0)  # warm up every web worker
        offset = 20
        for round_no in range(1, args.rounds + 1):
            # Idle: the worker is paused; nothing but the appends touches the database.
            os.killpg(worker.pid, signal.SIGSTOP)
            idle = timed_appends(base, token, session, texts, args.appends, offset)
            offset += args.appends
            # Busy: a backlog in the same session, the worker running through it.
            for start in range(0, BACKLOG, 500):
                call(
                    f"{base}/api/v1/sessions/{session}/messages",
                    token,
                    {"messages": make_messages(texts, 100_000 + start, 500)},
                )
            os.killpg(worker.pid, signal.SIGCONT)
            busy = timed_appends(base, token, session, texts, args.appends, offset)
            offset += args.appends
            left = pending(env)
            for phase, timings in (("idle", idle), ("busy", busy)):
                results[phase].append((percentile(timings, 0.5), percentile(timings, 0.95)))
            print(
                f"round {round_no}: idle p50 {results['idle'][-1][0]:.1f} ms "
                f"p95 {results['idle'][-1][1]:.1f} ms; busy p50 {results['busy'][-1][0]:.1f}"
                f" ms p95 {results['busy'][-1][1]:.1f} ms ({left:,} still pending after)",
                flush=True,
            )
            deadline = time.monotonic() + 600
            while pending(env) and time.monotonic() < deadline:
                time.sleep(2)
    print()
    for phase in ("idle", "busy"):
        p50 = statistics.median(r[0] for r in results[phase])
        p95 = statistics.median(r[1] for r in results[phase])
        print(f"{phase}: single-message append  median p50 {p50:.1f} ms  p95 {p95:.1f} ms")
    ratio = statistics.median(r[0] for r in results["busy"]) / statistics.median(
        r[0] for r in results["idle"]
    )
    print(f"busy / idle p50 ratio {ratio:.2f}  ({args.appends} appends per phase, one client)")


if __name__ == "__main__":
    main()
