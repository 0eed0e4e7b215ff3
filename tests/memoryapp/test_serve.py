"""`make run` end to end: a fresh data folder comes up healthy, Ctrl-C stops everything
cleanly, and a second run finds the data of the first."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import psutil
import pytest

from tests.conftest import REPO_ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Run:
    def __init__(self, var_dir, port):
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update(
            MEMORYAPP_VAR_DIR=str(var_dir),
            DJANGO_SETTINGS_MODULE="memoryapp.settings",
            WEB_CONCURRENCY="1",
            CELERY_CONCURRENCY="1",
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memoryapp.local.serve", "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.up = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)
            if "memoryapp is up at" in line:
                self.up.set()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=90)


def processes_using(var_dir) -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(var_dir) in cmdline:
            found.append(cmdline)
    return found


@pytest.mark.slow
def test_run_comes_up_healthy_stops_cleanly_and_finds_its_data_again(tmp_path):
    var_dir = tmp_path / "var"
    port = free_port()

    first = Run(var_dir, port)
    try:
        assert first.up.wait(180), first.output
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
            health = json.load(response)
        assert health["status"] == "ok"
        assert health["checks"]["workers"]["count"] >= 1
        assert processes_using(var_dir), "the embedded servers should be running"
    finally:
        code = first.stop()
    assert code == 0, first.output
    generated = re.search(r"generated password: (\S+)", first.output)
    assert generated, first.output
    assert (var_dir / "initial-admin-password").read_text().strip() == generated.group(1)
    assert "bye" in first.output
    time.sleep(1)
    assert processes_using(var_dir) == [], "Ctrl-C must stop postgres, redis and the children"
    assert (var_dir / "pg" / "PG_VERSION").exists()

    second = Run(var_dir, port)
    try:
        assert second.up.wait(180), second.output
    finally:
        assert second.stop() == 0, second.output
    assert "Sign in as 'admin'" in second.output
    # Same admin, no new password: the data was found again.
    assert "with the generated password:" not in second.output
    assert "Created the demo team" not in second.output


def test_run_refuses_a_port_in_use(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "memoryapp.local.serve", "--port", str(port)],
            cwd=REPO_ROOT,
            env=dict(os.environ, MEMORYAPP_VAR_DIR=str(tmp_path / "var")),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.stdout
    assert not (tmp_path / "var" / "pg").exists(), "nothing is started when the port is taken"


def test_help_explains_the_options():
    result = subprocess.run(
        [sys.executable, "-m", "memoryapp.local.serve", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for option in ("--host", "--port", "--web-workers", "--worker-concurrency"):
        assert option in result.stdout
