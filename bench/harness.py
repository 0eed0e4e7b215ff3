"""What the in-process benchmarks share: their own embedded PostgreSQL and Redis in a
temporary folder, migrated, with Django set up — so a benchmark never touches ``var/``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"


@contextlib.contextmanager
def django_on_embedded_servers(keep: Path | None = None):
    """Start fresh servers (in ``keep`` if given, to reuse data between runs), migrate,
    ``django.setup()``; stop the servers on exit. Yields the data folder."""
    folder = keep or Path(tempfile.mkdtemp(prefix="memoryapp-bench-"))
    os.environ.update(
        MEMORYAPP_VAR_DIR=str(folder / "var"), DJANGO_SETTINGS_MODULE="memoryapp.settings"
    )
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from memoryapp.local import embedded

    started = embedded.start_needed()
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=REPO_ROOT, check=True
        )
        import django

        django.setup()
        from django.conf import settings

        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        yield folder
    finally:
        embedded.stop_started(started)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def cpu_seconds(processes: list[psutil.Process], *, reaped: bool = False) -> float:
    """User + system CPU seconds of these processes; with ``reaped``, also of their
    children that have exited (a PostgreSQL backend ends with its connection, and Celery
    closes its connection after each task)."""
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
            total += times.user + times.system
            if reaped:
                total += times.children_user + times.children_system
        except psutil.NoSuchProcess:
            pass
    return total


def postgres_cpu(var_dir: Path) -> float:
    """CPU seconds of the embedded server so far: its postmaster (found by the data folder
    in its command line), its live processes, and the backends it has reaped."""
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "postgres" in (process.info["name"] or "") and str(var_dir) in cmdline:
            children = process.children(recursive=True)
            return cpu_seconds([process], reaped=True) + cpu_seconds(children)
    raise RuntimeError(f"no PostgreSQL server of {var_dir} is running")


def with_children(popens: list[subprocess.Popen]) -> list[psutil.Process]:
    processes = []
    for popen in popens:
        try:
            parent = psutil.Process(popen.pid)
            processes.extend([parent, *parent.children(recursive=True)])
        except psutil.NoSuchProcess:
            pass
    return processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def django_env(var_dir: Path) -> dict[str, str]:
    """This process's environment, with the servers' data in ``var_dir`` (never ``var/``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(MEMORYAPP_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="memoryapp.settings")
    return env


def manage(env, *args) -> str:
    return run_python(env, "manage.py", *args)


def run_python(env, *args) -> str:
    """This interpreter run in the repository with ``env``; its standard output."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def embedded(env, action: str, *, check: bool = True) -> None:
    """``python -m memoryapp.local.embedded start|stop`` for the servers of ``env``."""
    subprocess.run(
        [sys.executable, "-m", "memoryapp.local.embedded", action],
        cwd=REPO_ROOT,
        env=env,
        check=check,
        capture_output=True,
    )


def _executable(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


@dataclass
class Stack:
    """A running web stack: its URL, a project API token, and the processes to stop."""

    env: dict[str, str]
    base: str
    token: str
    web: subprocess.Popen
    worker: subprocess.Popen | None = None


@contextlib.contextmanager
def web_stack(
    var_dir: Path, *, web_workers: int, worker: bool = False, web_args=(), logs: Path | None = None
):
    """Embedded servers in ``var_dir``, migrated, a token of project bench/bench, gunicorn
    answering (and a Celery worker in its own process group when ``worker``); all stopped on
    exit.

    The servers' logs go to ``logs`` (by default a new folder outside ``var_dir``, which a
    benchmark's temporary folder takes with it), printed at the start: an error answer
    (a 500) leaves its traceback there, with the request id the answer gives."""
    env = django_env(var_dir)
    if logs is None:
        logs = Path(tempfile.mkdtemp(prefix="memoryapp-bench-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    print(f"server logs: {logs}", file=sys.stderr, flush=True)
    embedded(env, "start")
    processes: list[subprocess.Popen] = []
    celery = None
    try:
        manage(env, "migrate", "--noinput")
        token = create_token(env, "bench")
        port = free_port()
        # Each child writes its log on its own descriptor; ours closes after the start.
        with (logs / "web.log").open("ab") as log:
            web = subprocess.Popen(
                [
                    *(_executable("gunicorn"), "memoryapp.wsgi", "--bind", f"127.0.0.1:{port}"),
                    *("--workers", str(web_workers), "--no-control-socket", *web_args),
                ],
                cwd=REPO_ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        processes.append(web)
        if worker:
            with (logs / "worker.log").open("ab") as log:
                celery = subprocess.Popen(
                    [_executable("celery"), "-A", "memoryapp", "worker", "-c", "1", "-l", "INFO"],
                    cwd=REPO_ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: paused and resumed whole
                )
            processes.append(celery)
        base = f"http://127.0.0.1:{port}"
        wait_until_answering(f"{base}/api/schema/")
        yield Stack(env=env, base=base, token=token, web=web, worker=celery)
    finally:
        try:
            for process in processes:
                if process.poll() is None:
                    if process is celery:
                        os.killpg(process.pid, signal.SIGCONT)  # a paused worker must hear TERM
                    process.send_signal(signal.SIGTERM)
                    try:
                        process.wait(60)
                    except subprocess.TimeoutExpired:  # a task outlasting the warm shutdown
                        if process is celery:
                            os.killpg(process.pid, signal.SIGKILL)  # its pool children too
                        else:
                            process.kill()
                        process.wait()
        finally:
            embedded(env, "stop", check=False)  # never left running, whatever happened above


def create_token(env, project: str) -> str:
    """A new API token of project ``bench/<project>`` (created when missing)."""
    out = manage(env, "create_api_token", "--team", "bench", "--project", project)
    return out.strip().splitlines()[-1]


def post_json(url: str, token: str, body: bytes, content_type="application/json") -> dict:
    """POST ``body`` with the token; the JSON answer. An error answer raises with its status
    and body (a 500's body holds the request id its traceback is logged with)."""
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"POST {url}: HTTP {exc.code}: {exc.read()[:1000]!r}") from None


def wait_until_answering(url: str, seconds: float = 60) -> None:
    """Until ``url`` answers 200. An error answer other than 503 (starting) ends the wait: it
    is a bug to see, not a server still starting (an HTTPError is an OSError too)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError as exc:
            if exc.code != 503:
                raise RuntimeError(f"GET {url}: HTTP {exc.code}: {exc.read()[:1000]!r}") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
