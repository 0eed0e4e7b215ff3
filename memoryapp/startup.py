"""What every process of a deployment checks before it starts: the settings load (SECRET_KEY,
DATABASE_URL, ... are valid), PostgreSQL accepts the DATABASE_URL's credentials, Redis answers
at REDIS_URL. A problem ends the process with one line on stderr that names the variable and
the problem, and exit status 2: never a traceback, never a web server or worker that starts
and then fails every request or task.

- web: ``python -m memoryapp.startup`` is the first step of ``docker/web.sh``; ``manage.py``
  turns a settings error into the same one line.
- worker and beat: the Celery app reads its configuration through ``celery_settings`` below,
  which runs the checks when that configuration is first read by ``celery worker`` or
  ``celery beat`` (before their banners), and only the settings check for other commands.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

EXIT_STATUS = 2
CONNECT_TIMEOUT = 5


class StartupProblem(Exception):
    """One line: the variable and what is wrong with it."""


def fail(process: str, problem: str) -> None:
    sys.stderr.write(f"memoryapp {process}: {problem}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_STATUS)


def load_settings():
    """Django's settings, loaded now; a bad value is a StartupProblem."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 (imports the settings module)
    except ImproperlyConfigured as exc:
        raise StartupProblem(" ".join(str(exc).split())) from None
    return settings


def _address(url: str) -> str:
    parts = urlsplit(url)
    if not parts.hostname and parts.path:  # a unix socket
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or ''}".rstrip(":")


def check_database(settings) -> None:
    import psycopg

    if settings.EMBEDDED_DATABASE:
        return
    db = settings.DATABASES["default"]
    where = f"{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}"
    try:
        psycopg.connect(
            host=db.get("HOST") or None,
            port=db.get("PORT") or None,
            user=db.get("USER") or None,
            password=db.get("PASSWORD") or None,
            dbname=db.get("NAME"),
            connect_timeout=CONNECT_TIMEOUT,
        ).close()
    except psycopg.OperationalError as exc:
        detail = " ".join(str(exc).split())
        if "password authentication failed" in detail:
            reason = f"PostgreSQL at {where} refused the password of user '{db.get('USER')}'"
        elif f'database "{db.get("NAME")}" does not exist' in detail:
            reason = f"PostgreSQL at {where} has no database '{db.get('NAME')}'"
        else:
            reason = f"cannot connect to PostgreSQL at {where} ({detail.split(': ')[-1]})"
        raise StartupProblem(f"DATABASE_URL: {reason}") from None


def check_redis(settings) -> None:
    """A ping through kombu, which reads every URL form the broker may be given."""
    from kombu import Connection

    if settings.EMBEDDED_REDIS:
        return
    url = settings.REDIS_URL
    options = {"socket_connect_timeout": CONNECT_TIMEOUT, "socket_timeout": CONNECT_TIMEOUT}
    try:
        with Connection(url, transport_options=options) as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=CONNECT_TIMEOUT)
            connection.default_channel.client.ping()
    except Exception as exc:  # kombu and redis raise their own assorted errors
        detail = " ".join(str(exc).split())
        raise StartupProblem(
            f"REDIS_URL: cannot reach Redis at {_address(url)} ({detail})"
        ) from None


def check(process: str, *, services: bool = True):
    """The settings, then (``services``) PostgreSQL and Redis; exits on the first problem."""
    try:
        settings = load_settings()
        if services:
            check_database(settings)
            check_redis(settings)
    except StartupProblem as problem:
        fail(process, str(problem))
    return settings


def _celery_command() -> str | None:
    """The ``celery`` subcommand being started (``worker``, ``beat``, ...), if any."""
    try:
        import click
    except ImportError:  # pragma: no cover - celery depends on click
        return None
    context = click.get_current_context(silent=True)
    return context.command.name if context is not None else None


def __getattr__(name: str):
    # ``app.config_from_object("memoryapp.startup:celery_settings")``: read when Celery first
    # needs its configuration, which `celery worker` and `celery beat` do while reading their
    # command line, before they print or start anything.
    if name == "celery_settings":
        command = _celery_command()
        return check(command or "celery", services=command in ("worker", "beat"))
    raise AttributeError(name)


def main() -> None:
    check("web")


if __name__ == "__main__":
    main()
