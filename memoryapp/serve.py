"""`make run`: the whole product on one machine, in the foreground, until Ctrl-C.

Starts the embedded PostgreSQL and Redis (unless DATABASE_URL / REDIS_URL point elsewhere),
migrates, creates the first admin and a demo team, then runs a Celery worker, Celery beat
and the web server (gunicorn) with their output prefixed by name. Ctrl-C (or SIGTERM)
stops the web server, beat and the worker, then the embedded servers this run started.
If any process dies, the others are stopped too and the exit code says so.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from memoryapp import embedded

STOP_TIMEOUT = 20  # seconds each process gets to finish its work after SIGTERM
COLORS = {"web": "\033[36m", "worker": "\033[35m", "beat": "\033[33m"}
RESET = "\033[0m"


def say(message: str) -> None:
    print(f"memoryapp | {message}", flush=True)


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen | None = None
    reader: threading.Thread | None = field(default=None, repr=False)

    def start(self, env: dict[str, str], use_color: bool) -> None:
        # Own session: the terminal's Ctrl-C reaches only us, and we stop children in order.
        self.process = subprocess.Popen(
            self.argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            text=True,
            bufsize=1,
            errors="replace",
        )
        prefix = (
            f"{COLORS.get(self.name, '')}{self.name:<9}|{RESET} "
            if use_color
            else (f"{self.name:<9}| ")
        )
        self.reader = threading.Thread(target=self._pump, args=(prefix,), daemon=True)
        self.reader.start()

    def _pump(self, prefix: str) -> None:
        assert self.process and self.process.stdout
        for line in self.process.stdout:
            sys.stdout.write(prefix + line)
            sys.stdout.flush()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self) -> None:
        if self.alive():
            self.process.send_signal(signal.SIGTERM)

    def wait(self, deadline: float) -> None:
        if not self.process:
            return
        try:
            self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            say(f"{self.name} did not stop in {STOP_TIMEOUT} s; killing it")
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self.reader:
            self.reader.join(timeout=2)


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def prepare_database(env: dict[str, str]) -> None:
    """Migrate, collect static files, create the first admin and demo team, export the
    query encoder (all idempotent)."""
    python = sys.executable
    for argv in (
        [python, "manage.py", "migrate", "--noinput"],
        [python, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        [python, "manage.py", "bootstrap"],
        [python, "manage.py", "prepare_query_encoder"],
    ):
        result = subprocess.run(argv, env=env, cwd=embedded.BASE_DIR, check=False)
        if result.returncode != 0:
            raise SystemExit(f"memoryapp | `{' '.join(argv[1:])}` failed; see above")


def wait_healthy(url: str, children: list[Child], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not all(child.alive() for child in children):
            return False
        try:
            with urllib.request.urlopen(url, timeout=3) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memoryapp.serve",
        description=(
            "Run memoryapp on this machine: embedded PostgreSQL + Redis (unless DATABASE_URL / "
            "REDIS_URL are set), a Celery worker, Celery beat and the web server."
        ),
    )
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument(
        "--web-workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2"))
    )
    parser.add_argument(
        "--worker-concurrency",
        type=int,
        default=int(os.environ.get("CELERY_CONCURRENCY", "2")),
        help="Celery worker processes (each loads the embedding model once)",
    )
    args = parser.parse_args(argv)
    os.chdir(embedded.BASE_DIR)

    if not port_free(args.host, args.port):
        say(
            f"port {args.port} on {args.host} is in use; "
            "stop what uses it or run `make run PORT=8001`"
        )
        return 1

    say(f"data folder: {embedded.var_dir()}")
    try:
        started = embedded.start_needed()
    except embedded.ServiceError as exc:
        say(f"cannot start: {exc}")
        return 1
    for line in embedded._status_lines():
        say(line)

    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Each worker process embeds with its share of the cores, not all of them at once.
    cores = os.cpu_count() or 1
    env.setdefault("EMBEDDING_THREADS", str(max(1, cores // args.worker_concurrency)))
    python = sys.executable
    bin_dir = os.path.dirname(python)
    children = [
        Child(
            "worker",
            [
                os.path.join(bin_dir, "celery"),
                "-A",
                "memoryapp",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                str(args.worker_concurrency),
                "--hostname",
                "worker@%h",
            ],
        ),
        Child(
            "beat",
            [
                os.path.join(bin_dir, "celery"),
                "-A",
                "memoryapp",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(embedded.var_dir() / "celerybeat-schedule"),
            ],
        ),
        Child(
            "web",
            [
                os.path.join(bin_dir, "gunicorn"),
                "memoryapp.wsgi",
                "--config",
                "python:memoryapp.gunicorn_hooks",
                "--bind",
                f"{args.host}:{args.port}",
                "--workers",
                str(args.web_workers),
                "--timeout",
                "120",
                "--access-logfile",
                "-",
                # gunicorn's control socket defaults to one path per user: two runs would clash.
                "--no-control-socket",
            ],
        ),
    ]

    stopping = threading.Event()

    def on_signal(signum, _frame):
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    exit_code = 0
    try:
        prepare_database(env)
        use_color = sys.stdout.isatty()
        for child in children:
            # A web process embeds one short query at a time: one torch thread answers it in
            # ~11 ms; two threads fighting over shared cores took up to 500 ms
            # (bench/search_speed.py).
            child_env = {**env, "EMBEDDING_THREADS": "1"} if child.name == "web" else env
            child.start(child_env, use_color)
        url = f"http://{args.host}:{args.port}"
        if wait_healthy(f"{url}/healthz", children, timeout=120):
            say(f"memoryapp is up at {url}/  (API docs: {url}/api/docs/, admin: {url}/admin/)")
            say("press Ctrl-C to stop")
        elif not stopping.is_set():
            say(f"not healthy yet; see {url}/healthz")
        while not stopping.is_set():
            dead = [child for child in children if not child.alive()]
            if dead:
                codes = ", ".join(f"{c.name} exited with {c.process.returncode}" for c in dead)
                say(f"stopping everything: {codes}")
                exit_code = 1
                break
            stopping.wait(0.5)
    except SystemExit as exc:
        print(exc, flush=True)
        exit_code = 1
    finally:
        say("stopping web, beat and worker…")
        # Web first (no new work), then beat, then the worker finishes what it holds.
        for name in ("web", "beat", "worker"):
            child = next(c for c in children if c.name == name)
            child.terminate()
            child.wait(time.monotonic() + STOP_TIMEOUT)
        embedded.stop_started(started)
        if started.postgres or started.redis:
            say(
                "stopped the embedded PostgreSQL and Redis; your data stays in "
                + str(embedded.var_dir())
            )
        say("bye")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
