"""Where a one-message append's time goes, against the floors under it (issue 20, item 4:
a one-message append p50 ≤ 10 ms through the API).

Two parts, each on its own embedded servers in a temporary folder:

  http:       one sync gunicorn process, one client (urllib, as ``bench/append_latency.py``),
              in each round: a request Django answers 404 without a view (the HTTP, WSGI
              and middleware floor), an authenticated GET of a session that does not exist
              (the floor plus DRF, the token's lookup and one of a session: an API request
              that writes nothing), and a one-message append;
  in-process: one-message appends through Django's full stack (test client: middleware,
              DRF, token, capture service), with the time spent inside the database calls
              (``cursor.execute`` and ``commit``: the round trips, PostgreSQL's work and the
              commit's WAL flush) measured apart from the rest (Python: Django, DRF, psycopg's
              own work).

    .venv/bin/python bench/append_floor.py [--rounds 3] [--requests 200]

Medians over rounds of each round's p50; the machines are shared, so read the parts of one
run against each other.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile, post_json, web_stack


def timed(call, count: int) -> list[float]:
    timings = []
    for i in range(count):
        started = time.perf_counter()
        call(i)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def http_part(rounds: int, requests: int) -> dict[str, list[float]]:
    p50s: dict[str, list[float]] = {"404": [], "token + lookup": [], "append": []}
    with (
        tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp,
        web_stack(Path(tmp) / "var", web_workers=1) as stack,
    ):
        base, token = stack.base, stack.token
        body = {"agent_name": "floor", "messages": [{"role": "user", "content": "hello"}]}
        session = post_json(f"{base}/api/v1/sessions", token, json.dumps(body).encode())["id"]
        headers = {"Authorization": f"Bearer {token}"}

        def not_found(i):
            try:
                urllib.request.urlopen(f"{base}/no-such-page-{i}")
            except urllib.error.HTTPError as exc:
                assert exc.code == 404, exc.code

        def missing_session(i):
            url = f"{base}/api/v1/sessions/no-such-session-{i}"
            try:
                urllib.request.urlopen(urllib.request.Request(url, headers=headers))
            except urllib.error.HTTPError as exc:
                assert exc.code == 404, exc.code

        offset = [0]

        def append(i):
            message = {"role": "user", "content": f"message {offset[0] + i} about the deploy"}
            message["client_id"] = f"floor-{offset[0] + i}"
            url = f"{base}/api/v1/sessions/{session}/messages"
            post_json(url, token, json.dumps(message).encode())

        for call in (not_found, missing_session, append):
            timed(call, 20)  # warm up
        offset[0] = 1000
        for round_no in range(1, rounds + 1):
            for name, call in (
                ("404", not_found),
                ("token + lookup", missing_session),
                ("append", append),
            ):
                p50s[name].append(percentile(timed(call, requests), 0.5))
                if name == "append":
                    offset[0] += requests
            print(
                f"http round {round_no}: "
                + ", ".join(f"{name} p50 {values[-1]:.2f} ms" for name, values in p50s.items()),
                flush=True,
            )
    return p50s


def in_process_part(rounds: int, requests: int) -> dict[str, list[float]]:
    p50s: dict[str, list[float]] = {"append": [], "inside database calls": [], "the rest": []}
    with django_on_embedded_servers():
        logging.disable(logging.INFO)  # one log line per capture; not what is measured
        import psycopg
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client

        out = io.StringIO()
        call_command("create_api_token", "--team", "bench", "--project", "bench", stdout=out)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip().split()[-1]}")
        body = {"agent_name": "floor", "messages": [{"role": "user", "content": "hello"}]}
        answer = client.post("/api/v1/sessions", body, content_type="application/json")
        session = answer.json()["id"]
        url = f"/api/v1/sessions/{session}/messages"
        inside: list[float] = []

        def timing_execute(execute, sql, params, many, context):
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                inside.append((time.perf_counter() - started) * 1000)

        plain_commit = psycopg.Connection.commit

        def timing_commit(self):
            started = time.perf_counter()
            try:
                return plain_commit(self)
            finally:
                inside.append((time.perf_counter() - started) * 1000)

        psycopg.Connection.commit = timing_commit
        try:
            with connection.execute_wrapper(timing_execute):
                n = 0
                for round_no in range(rounds + 1):  # the first round warms up
                    walls, databases = [], []
                    for _ in range(requests):
                        inside.clear()
                        message = {"role": "user", "content": f"message {n} about the deploy"}
                        message["client_id"] = f"floor-{n}"
                        n += 1
                        started = time.perf_counter()
                        answer = client.post(url, message, content_type="application/json")
                        walls.append((time.perf_counter() - started) * 1000)
                        databases.append(sum(inside))
                        assert answer.status_code == 201, answer.content[:300]
                    if round_no == 0:
                        continue
                    p50s["append"].append(percentile(walls, 0.5))
                    p50s["inside database calls"].append(percentile(databases, 0.5))
                    p50s["the rest"].append(
                        percentile([w - d for w, d in zip(walls, databases, strict=True)], 0.5)
                    )
                    print(
                        f"in-process round {round_no}: "
                        + ", ".join(f"{k} p50 {v[-1]:.2f} ms" for k, v in p50s.items()),
                        flush=True,
                    )
        finally:
            psycopg.Connection.commit = plain_commit
    return p50s


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200, help="timed requests per part")
    args = parser.parse_args()
    http = http_part(args.rounds, args.requests)
    local = in_process_part(args.rounds, args.requests)
    print()
    for label, parts in (("through HTTP", http), ("in process", local)):
        for name, values in parts.items():
            print(f"{label:13} {name:22} median p50 {statistics.median(values):6.2f} ms")


if __name__ == "__main__":
    main()
