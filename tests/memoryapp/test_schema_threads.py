"""The OpenAPI schema served by threads: web processes run several (gthread, WEB_THREADS),
and drf-spectacular's generator is not thread-safe (memoryapp/schema_view.py)."""

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT, child_env

# A fresh process (the generator's first run is where its lazy imports race), with threads
# asking for the schema at the same moment through the WSGI application gunicorn serves.
FIRST_REQUESTS_AT_ONCE = """
import json, threading
import django
django.setup()
from django.test import Client

statuses, start = [], threading.Barrier(8)

def ask():
    client = Client(raise_request_exception=False)
    start.wait()
    statuses.append(client.get("/api/schema/", HTTP_ACCEPT="application/json").status_code)

threads = [threading.Thread(target=ask) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps(statuses))
"""


def test_threads_asking_for_the_schema_at_once_all_get_it():
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUESTS_AT_ONCE],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [200] * 8, done.stderr[-3000:]
