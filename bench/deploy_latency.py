"""The team deployment against the one-machine runtime, in the same run (issue 40):

1. **Empty to healthy**: the team deployment as tests/deployment/harness.py runs it (a
   separate PostgreSQL 18 + pgvector server made by ``initdb``, Debian's Redis, web, worker
   and beat with docker-compose.yaml's commands and environment) timed from empty data
   folders to a 200 from ``/healthz`` (the image build, done once, is timed apart); then
   ``make run``'s runtime (``memoryapp.local.serve``: embedded PostgreSQL and Redis on unix
   sockets) from an empty ``MEMORYAPP_VAR_DIR`` to the same.
2. **Request latency through gunicorn**, one client, one request at a time: ``POST
   /api/v1/sessions`` (a capture of 4 messages) and ``GET /api/v1/search`` (hybrid), p50
   and p95, on each runtime with the same gunicorn settings (2 processes x 4 threads, one
   worker process).

    .venv/bin/python bench/deploy_latency.py [--captures 100] [--searches 100]

The machines are shared and noisy: compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO_ROOT, free_port, percentile
from tests.deployment.harness import (
    Deployment,
    Image,
    PostgresServer,
    RedisServer,
    read_compose,
    wait_until,
)

WEB = {"WEB_CONCURRENCY": "2", "WEB_THREADS": "4"}
QUERIES = [
    "webhook retries",
    "how do we deploy the dashboard",
    "which database holds invoices",
    "pnpm workspaces",
    "who is on the support rota",
]


def capture_body(i: int) -> dict:
    topic = QUERIES[i % len(QUERIES)]
    return {
        "agent_name": "bench",
        "external_id": uuid.uuid4().hex,
        "title": f"bench {i}",
        "messages": [
            {"role": "user", "content": f"Question {i} about {topic}?"},
            {"role": "assistant", "content": f"Answer {i}: {topic} is handled by service {i}."},
            {"role": "user", "content": f"Thanks, and what about {topic} in staging ({i})?"},
            {"role": "assistant", "content": f"In staging {topic} runs nightly, batch {i}."},
        ],
    }


def measure(base: str, token: str, headers: dict, captures: int, searches: int) -> dict:
    client = requests.Session()
    client.headers.update({**headers, "Authorization": f"Bearer {token}"})
    capture_ms, search_ms = [], []
    for i in range(captures):
        started = time.perf_counter()
        response = client.post(f"{base}/api/v1/sessions", json=capture_body(i), timeout=60)
        capture_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 201, response.text
    for i in range(searches):
        started = time.perf_counter()
        response = client.get(
            f"{base}/api/v1/search", params={"q": QUERIES[i % len(QUERIES)]}, timeout=60
        )
        search_ms.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return {
        name: {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1)}
        for name, v in (("capture", capture_ms), ("search", search_ms))
    }


def team_deployment(root: Path, args) -> dict:
    started = time.monotonic()
    image = Image(root / "image").build()
    built = time.monotonic() - started
    compose = read_compose()
    started = time.monotonic()
    postgres = PostgresServer(root / "pg").init()
    redis_server = RedisServer(root / "redis", compose)
    deployment = Deployment(
        root / "app",
        image,
        postgres,
        redis_server,
        compose,
        operator_env={"CELERY_CONCURRENCY": "1"},
        override_env=dict(WEB),
    )
    try:
        redis_server.start()
        for service in ("web", "worker", "beat"):
            deployment.start(service)
        deployment.wait_healthy(600)
        healthy = time.monotonic() - started
        made = deployment.manage("create_api_token", "--team", "bench", "--project", "bench")
        token = made.stdout.strip().splitlines()[-1]
        headers = dict(deployment.http().headers)
        latency = measure(deployment.base_url, token, headers, args.captures, args.searches)
    finally:
        deployment.close()
        redis_server.stop()
        postgres.stop()
    return {"image_build_s": round(built, 1), "empty_to_healthy_s": round(healthy, 1), **latency}


def embedded_runtime(root: Path, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(MEMORYAPP_VAR_DIR=str(root / "var"), DJANGO_SETTINGS_MODULE="memoryapp.settings")
    # The same ONNX graphs as the image build made: neither side times an export.
    shutil.copytree(root.parent / "deploy" / "image" / "app" / "models", root / "var" / "models")
    port = free_port()
    started = time.monotonic()
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memoryapp.local.serve",
            *("--port", str(port), "--worker-concurrency", "1"),
            *("--web-workers", WEB["WEB_CONCURRENCY"], "--web-threads", WEB["WEB_THREADS"]),
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=(root / "serve.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: requests.get(f"{base}/healthz", timeout=15).status_code == 200,
            600,
            "make run's /healthz",
            interval=1.0,
            log=root / "serve.log",
        )
        healthy = time.monotonic() - started
        made = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "create_api_token",
                "--team",
                "bench",
                "--project",
                "bench",
            ],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        token = made.stdout.strip().splitlines()[-1]
        latency = measure(base, token, {}, args.captures, args.searches)
    finally:
        os.killpg(serve.pid, 15)
        serve.wait(120)
    return {"empty_to_healthy_s": round(healthy, 1), **latency}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=100)
    parser.add_argument("--searches", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memoryapp-bench-deploy-"))
    os.chmod(root, 0o755)
    try:
        results = {
            "team deployment": team_deployment(root / "deploy", args),
            "make run (embedded)": embedded_runtime(root / "embedded", args),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(results, indent=2))
    rows = ["capture p50", "capture p95", "search p50", "search p95"]
    print(f"\n{'':22}" + "".join(f"{name:>22}" for name in results))
    print(
        f"{'empty to healthy (s)':22}"
        + "".join(f"{r['empty_to_healthy_s']:>22}" for r in results.values())
    )
    for row in rows:
        kind, p = row.split()
        print(f"{row + ' (ms)':22}" + "".join(f"{r[kind][p]:>22}" for r in results.values()))


if __name__ == "__main__":
    main()
