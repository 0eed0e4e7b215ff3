"""MCP tool call latency (search, context) against the REST calls they stand for, same run.

Starts its own stack in a temporary data folder (embedded PostgreSQL and Redis, gunicorn,
one Celery worker), captures LoCoMo conversations through the API and waits until they are
embedded. Then each question is asked four ways, one after the other, so all four share
the machine's noise:

  rest        POST /api/v1/search (or /context) with the token, as `memoryapp` does;
  mcp-http    the search_sessions (or get_context) tool on the server's /mcp, through the
              MCP SDK's client over Streamable HTTP (one client session for the whole run);
  mcp-stdio   the same tool through `memoryapp mcp` launched as a subprocess by the SDK's
              client (the agent's side: stdio, then HTTP to the REST API).

Each call is timed from the client's request to its answer.

    .venv/bin/python bench/mcp_latency.py [--questions 100] [--sessions 40]

Prints p50 and p95 per way and tool, and each MCP way's p50 ratio to REST's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.append_latency import pending
from bench.capture import locomo_texts, make_messages
from bench.harness import REPO_ROOT, percentile, web_stack
from memoryapp_client.mcp_stdio import launch_parameters

MESSAGES_PER_SESSION = 50
# tool → (REST path, its body, the MCP tool, its arguments), each made from one question
WAYS = ("rest", "mcp-http", "mcp-stdio")
TOOLS = {
    "search": (
        "/api/v1/search",
        lambda q: {"q": q, "limit": 10},
        "search_sessions",
        lambda q: {"query": q, "limit": 10},
    ),
    "context": (
        "/api/v1/context",
        lambda q: {"query": q, "max_tokens": 2000},
        "get_context",
        lambda q: {"task": q, "max_tokens": 2000},
    ),
}


def rest_call(base: str, token: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"rest {path}: HTTP {exc.code}: {exc.read()[:2000]!r}") from None


def questions(texts: list[str], count: int) -> list[str]:
    """Short questions from the conversations' own turns (their first words)."""
    step = max(1, len(texts) // count)
    picked = [" ".join(t.split(": ", 1)[-1].split()[:8]) for t in texts[::step]]
    return [q for q in picked if len(q) > 10][:count]


async def measure(base: str, token: str, asked: list[str], env: dict) -> dict:
    timings: dict[tuple[str, str], list[float]] = {
        (tool, way): [] for tool in TOOLS for way in WAYS
    }
    pythonpath = env.get("PYTHONPATH", str(REPO_ROOT))
    stdio = launch_parameters(base, token, cwd=REPO_ROOT, PYTHONPATH=pythonpath)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as over_http,
        Client(stdio) as over_stdio,
    ):
        clients = {"mcp-http": over_http, "mcp-stdio": over_stdio}
        for number, question in enumerate(asked):
            for tool, (path, rest_body, name, arguments) in TOOLS.items():
                started = time.perf_counter()
                rest_call(base, token, path, rest_body(question))
                rest_ms = (time.perf_counter() - started) * 1000
                measured = {"rest": rest_ms}
                for way, client in clients.items():
                    started = time.perf_counter()
                    result = await client.call_tool(name, arguments(question))
                    measured[way] = (time.perf_counter() - started) * 1000
                    if result.is_error:
                        raise SystemExit(f"{way} {name}: {result.content[0].text}")
                if number >= 5:  # the first calls warm every process up
                    for way, ms in measured.items():
                        timings[(tool, way)].append(ms)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=100, help="timed questions per way")
    parser.add_argument(
        "--sessions", type=int, default=40, help=f"sessions of {MESSAGES_PER_SESSION} messages"
    )
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn workers")
    args = parser.parse_args()
    texts = locomo_texts()
    asked = questions(texts, args.questions + 5)
    with (
        tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp,
        # A web worker's first search loads the query encoder: longer than gunicorn's 30 s
        # default on a busy machine. The first questions, untimed, warm every worker up.
        web_stack(
            Path(tmp) / "var",
            web_workers=args.web_workers,
            worker=True,
            web_args=("--timeout", "300"),
        ) as stack,
    ):
        env, base, token = stack.env, stack.base, stack.token
        for number in range(args.sessions):
            messages = make_messages(texts, number * MESSAGES_PER_SESSION, MESSAGES_PER_SESSION)
            rest_call(
                base, token, "/api/v1/sessions", {"agent_name": "bench", "messages": messages}
            )
        deadline = time.monotonic() + 900
        while pending(env) and time.monotonic() < deadline:
            time.sleep(2)
        print(
            f"{args.sessions} sessions of {MESSAGES_PER_SESSION} messages embedded; "
            f"{len(asked) - 5} questions, each asked every way",
            flush=True,
        )
        timings = anyio.run(measure, base, token, asked, {**os.environ, **env})
    print()
    print(f"{'tool':<8} {'way':<10} {'p50 ms':>8} {'p95 ms':>8} {'p50 / rest':>11}")
    for tool in TOOLS:
        rest_p50 = percentile(timings[(tool, "rest")], 0.5)
        for way in WAYS:
            values = timings[(tool, way)]
            p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
            print(f"{tool:<8} {way:<10} {p50:>8.1f} {p95:>8.1f} {p50 / rest_p50:>10.2f}x")


if __name__ == "__main__":
    main()
