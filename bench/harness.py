"""What the in-process benchmarks share: their own embedded PostgreSQL and Redis in a
temporary folder, migrated, with Django set up — so a benchmark never touches ``var/``."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

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
