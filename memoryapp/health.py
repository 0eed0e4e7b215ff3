"""GET /healthz: the state of the database (with pgvector), the broker and the workers.

200 only when all three are up, 503 otherwise; the JSON body says which part failed and why,
so a load balancer, `make run` and a person reading it all get what they need.
"""

from __future__ import annotations

import time

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from memoryapp.celery import app as celery_app

# How long to wait for a worker's pong: the answer when none is up comes after this.
WORKER_PING_TIMEOUT = 1.0
# A broker that stopped answering (host gone, backlog full) is reported in seconds, instead
# of /healthz hanging on the kernel's connect timeout (minutes) or a read that never ends.
BROKER_TIMEOUTS = {"socket_connect_timeout": 1.0, "socket_timeout": 2.0}


def check_database() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            server_version = cursor.fetchone()[0]
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; say which
        return {"ok": False, "error": f"{exc.__class__.__name__}: {exc}".strip()}
    if row is None:
        return {
            "ok": False,
            "postgres": server_version,
            "error": "the pgvector extension is not installed (run `manage.py migrate`)",
        }
    return {"ok": True, "postgres": server_version, "pgvector": row[0]}


def check_broker() -> dict:
    try:
        with celery_app.connection_for_write(transport_options=BROKER_TIMEOUTS) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
            conn.default_channel.client.ping()
    except Exception as exc:
        return {"ok": False, "error": f"{exc.__class__.__name__}: {exc}".strip()}
    return {"ok": True}


def check_workers() -> dict:
    """Is a worker consuming from the broker now? A broadcast ping, done at the first pong
    (``limit=1``): milliseconds when a worker is up, WORKER_PING_TIMEOUT when none is (without
    a limit, the ping waits out its whole timeout for more replies). Chosen over a heartbeat
    key that workers refresh in Redis: the pong comes from the worker's main process through
    the broker, which is what the check is about, needs nothing more in the worker, and a
    killed worker is reported at once rather than when its key expires. So ``names`` lists
    the worker that answered first, not all of them."""
    try:
        # A fresh connection: a pooled one may be dead since a Redis restart.
        with celery_app.connection_for_write(transport_options=BROKER_TIMEOUTS) as conn:
            replies = celery_app.control.ping(timeout=WORKER_PING_TIMEOUT, limit=1, connection=conn)
    except Exception as exc:
        return {"ok": False, "count": 0, "error": f"{exc.__class__.__name__}: {exc}".strip()}
    names = sorted(name for reply in replies or [] for name in reply)
    if not names:
        return {"ok": False, "count": 0, "error": "no Celery worker answered a ping"}
    return {"ok": True, "count": len(names), "names": names}


@never_cache
@require_GET
def healthz(request):
    started = time.monotonic()
    checks = {"database": check_database(), "broker": check_broker()}
    if checks["broker"]["ok"]:
        checks["workers"] = check_workers()
    else:
        checks["workers"] = {"ok": False, "count": 0, "error": "broker is down"}
    healthy = all(check["ok"] for check in checks.values())
    body = {
        "status": "ok" if healthy else "unavailable",
        "checks": checks,
        "took_ms": round((time.monotonic() - started) * 1000, 1),
    }
    return JsonResponse(body, status=200 if healthy else 503)
