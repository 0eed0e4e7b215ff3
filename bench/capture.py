"""Capture throughput through the real REST API (issue: capture never waits on embedding).

Starts its own stack in a temporary data folder (embedded PostgreSQL, gunicorn; no worker
is needed: capture only enqueues), then measures, with N concurrent client processes:

  (a) whole-session capture: POST /api/v1/sessions with 1,000-message sessions
  (b) appends: POST /api/v1/sessions/{id}/messages with 10 messages each
  (c) import: POST /api/v1/import of the largest sample file in ../shared/samples

and, in the same run, a baseline: the same 1,000-message sessions written by the capture
service directly (no HTTP, no JSON), so the API's overhead shows as a ratio. Messages are
LoCoMo turns (real text), ~130 characters on average.

    .venv/bin/python bench/capture.py [--clients 8] [--rounds 3] [--sessions 4]

Medians over rounds; these machines are shared and noisy, so read the ratios.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import SHARED, create_token, run_python, web_stack


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
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


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


def _append_client(args) -> int:
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
    return stored


def run_clients(worker, jobs) -> float:
    """Messages per second stored by ``len(jobs)`` client processes working at once."""
    with multiprocessing.Pool(len(jobs)) as pool:
        started = time.perf_counter()
        stored = sum(pool.map(worker, jobs))
        elapsed = time.perf_counter() - started
    return stored / elapsed


def baseline_direct(env, texts_file: Path, sessions, size) -> float:
    """The capture service called in-process: no HTTP, no JSON, one writer."""
    code = f"""
import django, json, time; django.setup()
from sessions.capture.importers.base import ParsedMessage, ParsedSession
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
    args = parser.parse_args()

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
    with (
        tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp,
        web_stack(
            Path(tmp) / "var", web_workers=args.web_workers, web_args=("--timeout", "300")
        ) as stack,
    ):
        env, base, token = stack.env, stack.base, stack.token
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        # Warm-up: every gunicorn worker loads the tokenizer on its first capture.
        run_clients(
            _whole_session_client, [(base, token, texts, c, 1, 50) for c in range(args.clients)]
        )

        whole, appends, imports, direct = [], [], [], []
        data = largest.read_bytes()
        for round_no in range(1, args.rounds + 1):
            # A re-import adds nothing, so each round imports into a new project.
            import_token = create_token(env, f"import-{round_no}")
            whole.append(
                run_clients(
                    _whole_session_client,
                    [(base, token, texts, c, args.sessions, 1000) for c in range(args.clients)],
                )
            )
            appends.append(
                run_clients(
                    _append_client,
                    [(base, token, texts, c, args.appends, 10) for c in range(args.clients)],
                )
            )
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
            direct.append(baseline_direct(env, texts_file, args.sessions, 1000))
            print(
                f"round {round_no}: whole-session {whole[-1]:,.0f} msg/s, "
                f"appends {appends[-1]:,.0f} msg/s, import {imports[-1][0]:,.0f} msg/s, "
                f"direct (baseline) {direct[-1]:,.0f} msg/s",
                flush=True,
            )
    w, a, d = statistics.median(whole), statistics.median(appends), statistics.median(direct)
    imp = statistics.median(i[0] for i in imports)
    mb = statistics.median(i[1] for i in imports)
    print()
    print(f"clients: {args.clients} processes; gunicorn: {args.web_workers} workers; 2 cores")
    print(f"(a) whole-session capture, 1,000-message sessions  median {w:,.0f} messages/s")
    print(f"(b) appends of 10 messages                         median {a:,.0f} messages/s")
    print(
        f"(c) import of {largest.name} ({len(data):,} bytes, {imports[0][2]} messages)  "
        f"median {imp:,.0f} messages/s ({mb:.2f} MB/s)"
    )
    print(f"baseline: capture service in-process, one writer   median {d:,.0f} messages/s")
    print(f"ratio (a) / baseline                                {w / d:.2f}")


if __name__ == "__main__":
    main()
