"""Capture throughput through the real REST API (issue: capture never waits on embedding).

Starts its own stack in a temporary data folder (embedded PostgreSQL, gunicorn; no worker
is needed: capture only enqueues), then measures, with N concurrent client processes:

  (a) whole-session capture: POST /api/v1/sessions with 1,000-message sessions
  (b) appends: POST /api/v1/sessions/{id}/messages with 10 messages each (and with 1, with
      ``--append-sizes 10,1``), each client to its own session
  (c) import: POST /api/v1/import of the largest sample file in ../shared/samples

and, in the same run, a baseline: the same 1,000-message sessions written by the capture
service directly (no HTTP, no JSON), so the API's overhead shows as a ratio. Messages are
LoCoMo turns (real text), ~130 characters on average. For (a) and (b) it also says the CPU
time per request of the web processes, PostgreSQL and the clients, which bounds what the
cores can serve.

    .venv/bin/python bench/capture.py [--clients 8] [--rounds 3] [--sessions 4]
        [--web-workers 3] [--threads 1] [--append-sizes 10,1] [--phases whole,appends,...]
        [--worker]

Medians over rounds; these machines are shared and noisy, so read the ratios.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import (
    SHARED,
    cpu_seconds,
    create_token,
    post_json,
    postgres_cpu,
    run_python,
    web_stack,
    with_children,
)

PHASES = ("whole", "appends", "import", "direct")


def locomo_texts() -> list[str]:
    data = json.loads((SHARED / "data" / "locomo" / "locomo10.json").read_text())
    texts = []
    for conversation in data:
        conv = conversation["conversation"]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                texts += [f"{t['speaker']}: {t['text']}" for t in turns]
    return texts


def make_messages(texts: list[str], start: int, count: int) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": texts[(start + i) % len(texts)]}
        for i in range(count)
    ]


def post(url: str, token: str, body: bytes, content_type="application/json") -> dict:
    return post_json(url, token, body, content_type)


def _whole_session_client(args) -> int:
    base, token, texts, client_no, sessions, size = args
    stored = 0
    for s in range(sessions):
        payload = {
            "agent_name": "bench",
            "external_id": f"bench-{os.getpid()}-{client_no}-{s}-{time.time_ns()}",
            "messages": make_messages(texts, (client_no * sessions + s) * size, size),
        }
        result = post(f"{base}/api/v1/sessions", token, json.dumps(payload).encode())
        stored += result["messages_added"]
    return stored


def _append_client(args) -> tuple[int, int]:
    """Messages stored and requests made (the session's creation is not counted)."""
    base, token, texts, client_no, appends, size = args
    session = post(
        f"{base}/api/v1/sessions", token, json.dumps({"agent_name": "bench-append"}).encode()
    )
    stored = 0
    for a in range(appends):
        messages = make_messages(texts, (client_no * appends + a) * size, size)
        for i, message in enumerate(messages):
            message["client_id"] = f"{client_no}-{a}-{i}"
        result = post(
            f"{base}/api/v1/sessions/{session['id']}/messages",
            token,
            json.dumps({"messages": messages}).encode(),
        )
        stored += result["messages_added"]
    return stored, appends


def _whole_session_requests(args) -> tuple[int, int]:
    return _whole_session_client(args), args[4]


@dataclass
class Phase:
    """One phase's messages per second, and CPU milliseconds per request of each side."""

    rate: float
    web_ms: float
    postgres_ms: float
    clients_ms: float


def run_clients(worker, jobs, stack=None, var_dir=None) -> Phase:
    """Messages per second stored by ``len(jobs)`` client processes working at once (each
    ``worker`` returns its messages and requests), with the CPU time each request cost the
    web server, PostgreSQL and the clients."""

    def clients_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    web = with_children([stack.web]) if stack else []
    before = (cpu_seconds(web), postgres_cpu(var_dir) if var_dir else 0.0, clients_cpu())
    with multiprocessing.Pool(len(jobs)) as pool:
        started = time.perf_counter()
        done = pool.map(worker, jobs)
        elapsed = time.perf_counter() - started
    after = (cpu_seconds(web), postgres_cpu(var_dir) if var_dir else 0.0, clients_cpu())
    stored, requests = sum(d[0] for d in done), sum(d[1] for d in done)
    web_ms, pg_ms, clients_ms = (
        (a - b) * 1000 / requests for a, b in zip(after, before, strict=True)
    )
    return Phase(stored / elapsed, web_ms, pg_ms, clients_ms)


def baseline_direct(env, texts_file: Path, sessions, size) -> float:
    """The capture service called in-process: no HTTP, no JSON, one writer."""
    code = f"""
import django, json, time; django.setup()
from transcripts.base import ParsedMessage, ParsedSession
from sessions.capture.service import capture_session
from teams.models import Project
texts = json.load(open({str(texts_file)!r}))
project = Project.objects.get(team__slug="bench", slug="bench")
capture_session(project, ParsedSession(source_format="api", agent_name="warm",
    messages=[ParsedMessage(role="user", content="warm up")]))
started = time.perf_counter(); stored = 0
for s in range({sessions}):
    msgs = [ParsedMessage(role="user" if i % 2 == 0 else "assistant",
                          content=texts[(s * {size} + i) % len(texts)]) for i in range({size})]
    stored += len(capture_session(project, ParsedSession(source_format="api",
        agent_name="direct", messages=msgs)).added)
print(stored / (time.perf_counter() - started))
"""
    out = run_python(env, "-c", code)
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=4, help="1,000-message sessions per client")
    parser.add_argument("--appends", type=int, default=40, help="10-message appends per client")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=1, help="gunicorn threads per worker (gthread when >1)"
    )
    parser.add_argument(
        "--append-sizes", default="10", help="messages per append request, e.g. 10,1"
    )
    parser.add_argument("--phases", default=",".join(PHASES), help=",".join(PHASES))
    parser.add_argument(
        "--worker",
        action="store_true",
        help="run a Celery worker: it embeds what is captured while the clients write",
    )
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    sizes = [int(size) for size in args.append_sizes.split(",")]

    texts = locomo_texts()
    samples = sorted(
        (
            p
            for p in (SHARED / "samples").rglob("*")
            if p.is_file() and p.suffix in (".json", ".jsonl", ".md")
        ),
        key=lambda p: p.stat().st_size,
    )
    largest = samples[-1]
    web_args = ["--timeout", "300"]
    if args.threads > 1:
        web_args += ["--worker-class", "gthread", "--threads", str(args.threads)]
    with (
        tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp,
        web_stack(
            Path(tmp) / "var", web_workers=args.web_workers, web_args=web_args, worker=args.worker
        ) as stack,
    ):
        env, base, token, var_dir = stack.env, stack.base, stack.token, Path(tmp) / "var"
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        # Warm-up: every gunicorn worker loads the tokenizer on its first capture.
        run_clients(
            _whole_session_requests, [(base, token, texts, c, 1, 50) for c in range(args.clients)]
        )

        whole, appends, imports, direct = [], {size: [] for size in sizes}, [], []
        data = largest.read_bytes()
        for round_no in range(1, args.rounds + 1):
            said = []
            if "whole" in phases:
                jobs = [(base, token, texts, c, args.sessions, 1000) for c in range(args.clients)]
                whole.append(run_clients(_whole_session_requests, jobs, stack, var_dir))
                said.append(f"whole-session {whole[-1].rate:,.0f} msg/s")
            if "appends" in phases:
                for size in sizes:
                    jobs = [
                        (base, token, texts, c, args.appends, size) for c in range(args.clients)
                    ]
                    appends[size].append(run_clients(_append_client, jobs, stack, var_dir))
                    said.append(f"appends of {size} {appends[size][-1].rate:,.0f} msg/s")
            if "import" in phases:
                # A re-import adds nothing, so each round imports into a new project.
                import_token = create_token(env, f"import-{round_no}")
                started = time.perf_counter()
                result = post(
                    f"{base}/api/v1/import?filename={largest.name}",
                    import_token,
                    data,
                    "application/octet-stream",
                )
                elapsed = time.perf_counter() - started
                added = sum(s["messages_added"] for s in result["sessions"])
                imports.append((added / elapsed, len(data) / elapsed / 1e6, added))
                said.append(f"import {imports[-1][0]:,.0f} msg/s")
            if "direct" in phases:
                direct.append(baseline_direct(env, texts_file, args.sessions, 1000))
                said.append(f"direct (baseline) {direct[-1]:,.0f} msg/s")
            print(f"round {round_no}: " + ", ".join(said), flush=True)
    print()
    server = f"{args.web_workers} workers" + (
        f" x {args.threads} threads (gthread)" if args.threads > 1 else " (sync)"
    )
    print(f"clients: {args.clients} processes; gunicorn: {server}; {os.cpu_count()} cores")
    print("medians; CPU ms per request: web + PostgreSQL + clients")
    rows = [("(a) whole-session capture, 1,000-message sessions", whole)]
    rows += [(f"(b) appends of {size} message(s)", appends[size]) for size in sizes]
    for label, runs in rows:
        if runs:
            rate = statistics.median(r.rate for r in runs)
            cpu = [
                statistics.median(getattr(r, part) for r in runs)
                for part in ("web_ms", "postgres_ms", "clients_ms")
            ]
            print(
                f"{label:52} {rate:8,.0f} messages/s; CPU {sum(cpu):.1f} ms = "
                f"{cpu[0]:.1f} + {cpu[1]:.1f} + {cpu[2]:.1f}"
            )
    if imports:
        imp = statistics.median(i[0] for i in imports)
        mb = statistics.median(i[1] for i in imports)
        print(
            f"(c) import of {largest.name} ({len(data):,} bytes, {imports[0][2]} messages)  "
            f"median {imp:,.0f} messages/s ({mb:.2f} MB/s)"
        )
    if direct:
        d = statistics.median(direct)
        print(f"baseline: capture service in-process, one writer   median {d:,.0f} messages/s")
        if whole:
            w = statistics.median(r.rate for r in whole)
            print(f"ratio (a) / baseline                                {w / d:.2f}")


if __name__ == "__main__":
    main()
