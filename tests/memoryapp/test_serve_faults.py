"""`make run` survives its children (issue 14, #4): a SIGKILLed Celery worker or beat main
process is restarted by itself while the web keeps answering, and what was captured
meanwhile ends embedded."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psutil
import pytest

from memoryapp.local import serve
from tests.conftest import REPO_ROOT
from tests.memoryapp.test_serve import Run, free_port, processes_using
from tests.waiting import wait_for


def request(url, method="GET", token=None, payload=None):
    """(status, JSON body, seconds taken); an HTTP error status is an answer too."""
    data = json.dumps(payload).encode() if payload is not None else None
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    return status, json.loads(body), time.monotonic() - started


def create_token(var_dir) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(MEMORYAPP_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="memoryapp.settings")
    result = subprocess.run(
        [sys.executable, "manage.py", "create_api_token", "--team", "demo", "--project", "demo"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def child_of(run: Run, name: str) -> psutil.Process | None:
    """The main process of `make run`'s child whose command line has `name` ("worker",
    "beat", or "memoryapp.wsgi" for the web), if running."""
    for proc in psutil.Process(run.process.pid).children():
        try:
            cmdline = proc.cmdline()
        except psutil.Error:  # gone, or dead and not yet reaped
            continue
        if name in cmdline:
            return proc
    return None


def restarted(run: Run, name: str, old: psutil.Process) -> bool:
    new = child_of(run, name)
    return new is not None and new.pid != old.pid


def web_answers_healthy(base) -> bool:
    try:
        return request(f"{base}/healthz")[0] == 200
    except (urllib.error.URLError, ConnectionError):
        return False


def all_embedded(base, token, session_id) -> bool:
    status, body, _ = request(f"{base}/api/v1/sessions/{session_id}/messages", token=token)
    assert status == 200, body
    return all(m["enrichment_status"] == "done" for m in body["results"])


@pytest.mark.slow
def test_killed_worker_and_beat_come_back_while_the_web_keeps_serving(tmp_path):
    var_dir = tmp_path / "var"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    run = Run(var_dir, port)
    try:
        assert run.up.wait(180), run.output
        token = create_token(var_dir)
        status, session, _ = request(
            f"{base}/api/v1/sessions",
            "POST",
            token,
            {
                "agent_name": "architect",
                "messages": [
                    {"role": "user", "content": "Where do the deploy keys live?"},
                    {"role": "assistant", "content": "In the vault, under ops/deploy."},
                ],
            },
        )
        assert status == 201, session
        assert wait_for(lambda: all_embedded(base, token, session["id"]), 120), run.output

        # The worker's main process dies without warning; its pool process is left behind.
        worker = child_of(run, "worker")
        pool = worker.children()
        assert pool, "the worker should have a pool process"
        worker.send_signal(signal.SIGKILL)
        status, added, _ = request(
            f"{base}/api/v1/sessions/{session['id']}/messages",
            "POST",
            token,
            {"role": "user", "content": "Captured while the worker was dead: rotate the keys."},
        )
        assert status == 201, added

        # The web keeps answering: 503 (JSON, within about the ping timeout) while no
        # worker is there, then 200 again once the supervisor has restarted it.
        answers = []

        def health_is(expected):
            answers.append(request(f"{base}/healthz"))
            return answers[-1][0] == expected

        assert wait_for(lambda: health_is(503), 30), answers
        status, body, took = answers[-1]
        assert body["status"] == "unavailable"
        assert body["checks"]["workers"]["ok"] is False
        assert took < 2.5
        assert wait_for(lambda: health_is(200), 90), run.output
        assert {status for status, _, _ in answers} <= {200, 503}
        assert "worker exited with -9 (SIGKILL); restarting in 1 s (restart 1)" in run.output
        assert restarted(run, "worker", worker)
        _, still_running = psutil.wait_procs(pool, timeout=10)
        assert not still_running, "the dead worker's pool processes should be gone"

        # What was captured while the worker was dead ends embedded.
        assert wait_for(lambda: all_embedded(base, token, session["id"]), 120), run.output

        beat = child_of(run, "beat")
        beat.send_signal(signal.SIGKILL)
        assert wait_for(lambda: restarted(run, "beat", beat), 30), run.output
        assert "beat exited with -9 (SIGKILL); restarting in 1 s (restart 1)" in run.output
        status, body, _ = request(f"{base}/healthz")
        assert status == 200, body

        # And the web server itself.
        web = child_of(run, "memoryapp.wsgi")
        web.send_signal(signal.SIGKILL)
        assert wait_for(lambda: restarted(run, "memoryapp.wsgi", web), 30), run.output
        assert "web exited with -9 (SIGKILL); restarting in 1 s (restart 1)" in run.output
        assert wait_for(lambda: web_answers_healthy(base), 60), run.output
    finally:
        code = run.stop()
    assert code == 0, run.output
    assert "stopping everything" not in run.output
    time.sleep(1)
    assert processes_using(var_dir) == [], "Ctrl-C must stop postgres, redis and the children"


def test_a_child_that_keeps_dying_is_restarted_later_and_later():
    child = serve.Child("worker", [sys.executable, "-c", "raise SystemExit(3)"], dict(os.environ))
    child.start(use_color=False)
    child.process.wait()
    now = time.monotonic()
    messages = []
    for _ in range(8):
        child.started_at = now - 5  # died 5 s after each start
        messages.append(child.schedule_restart(now))
    assert messages[0] == "worker exited with 3; restarting in 1 s (restart 1)"
    assert messages[1] == "worker exited with 3; restarting in 2 s (restart 2)"
    assert messages[-1] == "worker exited with 3; restarting in 60 s (restart 8)"
    # After staying up a while, the next death restarts quickly again.
    child.started_at = now - serve.STABLE_AFTER
    assert child.schedule_restart(now).endswith("restarting in 1 s (restart 9)")


def test_exit_codes_are_named():
    assert serve.describe_exit(-9) == "-9 (SIGKILL)"
    assert serve.describe_exit(-15) == "-15 (SIGTERM)"
    assert serve.describe_exit(1) == "1"
