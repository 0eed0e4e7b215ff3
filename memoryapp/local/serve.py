"""`make run`: the whole product on one machine, in the foreground, until Ctrl-C.

Starts the embedded PostgreSQL and Redis (unless DATABASE_URL / REDIS_URL point elsewhere),
migrates, creates the first admin and a demo team, then runs a Celery worker, Celery beat
and the web server (gunicorn) with their output prefixed by name. Ctrl-C (or SIGTERM)
stops the web server, beat and the worker, then the embedded servers this run started.

A child that dies (a crash, an out-of-memory kill) is started again after a pause that doubles
with each quick death (1 s up to 60 s, back to 1 s once it has stayed up a minute), and each
restart is said plainly; the others keep running, so the web keeps answering meanwhile
(`/healthz` says 503 while no worker is there).

Why a loop of our own: honcho (Procfile runner) stops everything when one process exits;
supervisor and circus restart, but with a fixed or linear delay, a config file and a daemon
(circus also brings ZeroMQ and tornado) for what is three children of one foreground command.
"""

from __future__ import annotations

import argparse
import contextlib
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

from memoryapp.local import embedded

STOP_TIMEOUT = 20  # seconds each process gets to finish its work after SIGTERM
FIRST_RESTART_DELAY = 1.0  # seconds before restarting a child that died...
MAX_RESTART_DELAY = 60.0  # ...doubling with each quick death up to this
STABLE_AFTER = 60.0  # a child up this long is healthy again: its next death restarts after 1 s
COLORS = {"web": "\033[36m", "worker": "\033[35m", "beat": "\033[33m"}
RESET = "\033[0m"


# Children's lines and ours come from several threads: one whole line at a time.
_output_lock = threading.Lock()


def write_line(line: str) -> None:
    with _output_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def say(message: str) -> None:
    write_line(f"memoryapp | {message}\n")


@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict, repr=False)
    process: subprocess.Popen | None = None
    reader: threading.Thread | None = field(default=None, repr=False)
    started_at: float = 0.0
    restarts: int = 0
    restart_delay: float = 0.0  # the pause before the last restart (0: none yet)
    restart_at: float | None = None  # when a dead child is due to start again

    def start(self, use_color: bool) -> None:
        # Own session: the terminal's Ctrl-C reaches only us, and we stop children in order.
        self.process = subprocess.Popen(
            self.argv,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            text=True,
            bufsize=1,
            errors="replace",
        )
        self.started_at = time.monotonic()
        self.restart_at = None
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
            write_line(prefix + line)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def died(self) -> bool:
        """Dead, and not yet scheduled for a restart."""
        return self.process is not None and self.restart_at is None and not self.alive()

    def schedule_restart(self, now: float) -> str:
        """Clear what the dead child left behind, pick the pause before its restart and say
        what happened."""
        self._kill_leftovers()
        stayed_up = now - self.started_at >= STABLE_AFTER
        if stayed_up or not self.restart_delay:
            self.restart_delay = FIRST_RESTART_DELAY
        else:
            self.restart_delay = min(self.restart_delay * 2, MAX_RESTART_DELAY)
        self.restarts += 1
        self.restart_at = now + self.restart_delay
        return (
            f"{self.name} exited with {describe_exit(self.process.returncode)}; restarting in "
            f"{self.restart_delay:g} s (restart {self.restarts})"
        )

    def due(self, now: float) -> bool:
        return self.restart_at is not None and now >= self.restart_at

    def _kill_leftovers(self) -> None:
        """A killed Celery worker leaves its pool processes behind (in its process group):
        with their parent gone they can report nothing, so they go too (their transaction
        rolls back; the pipeline picks the work up again)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.reader:
            self.reader.join(timeout=2)

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
        self._kill_leftovers()
        self.process.wait()


def describe_exit(returncode: int) -> str:
    """-9 -> "-9 (SIGKILL)": the number as Popen reports it, and the signal's name."""
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"{returncode} ({signal.Signals(-returncode).name})"
    return str(returncode)


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


def wait_healthy(url: str, stopping: threading.Event, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping.is_set():
        try:
            with urllib.request.urlopen(url, timeout=3) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        stopping.wait(0.5)
    return False


def announce_when_healthy(url: str, stopping: threading.Event) -> None:
    if wait_healthy(f"{url}/healthz", stopping, timeout=120):
        say(f"memoryapp is up at {url}/  (API docs: {url}/api/docs/, admin: {url}/admin/)")
        say(
            "an API token for your agents: .venv/bin/python manage.py create_api_token "
            "--team TEAM --project PROJECT  (README: your first session)"
        )
        say("press Ctrl-C to stop")
    elif not stopping.is_set():
        say(f"not healthy yet; see {url}/healthz")


def supervise(children: list[Child], stopping: threading.Event, use_color: bool) -> None:
    """Until Ctrl-C/SIGTERM: restart each child that dies, after its pause."""
    while not stopping.is_set():
        now = time.monotonic()
        for child in children:
            if child.died():
                say(child.schedule_restart(now))
            elif child.due(now):
                child.start(use_color)
        stopping.wait(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memoryapp.local.serve",
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
        "--web-threads",
        type=int,
        default=int(os.environ.get("WEB_THREADS", "4")),
        help="threads per web process: while one waits on PostgreSQL (a commit's flush), "
        "another runs",
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
            env,
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
            env,
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
                # Threads (gthread) let a process serve the next request while one waits on
                # PostgreSQL: appends doubled against as many sync processes
                # (docs/benchmark-log.md, "Capture and appends").
                "--threads",
                str(args.web_threads),
                "--timeout",
                "120",
                "--access-logfile",
                "-",
                # gunicorn's control socket defaults to one path per user: two runs would clash.
                "--no-control-socket",
            ],
            # A web process embeds one short query at a time: one thread answers it fast,
            # while threads fighting over shared cores made it many times slower
            # (bench/search_speed.py measures it; docs/benchmarks.md).
            {**env, "EMBEDDING_THREADS": "1"},
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
            child.start(use_color)
        url = f"http://{args.host}:{args.port}"
        threading.Thread(target=announce_when_healthy, args=(url, stopping), daemon=True).start()
        supervise(children, stopping, use_color)
    except SystemExit as exc:
        write_line(f"{exc}\n")
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
