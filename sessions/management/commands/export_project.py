"""Write a whole project (settings, sessions, messages, memories) to one archive."""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from sessions.management.console import archive_arguments, progress_bar
from sessions.models import Session
from sessions.portable.export import write_archive
from teams.models import Project


def find_project(team: str, project: str) -> Project:
    found = Project.objects.select_related("team").filter(team__slug=team, slug=project).first()
    if found is None:
        raise CommandError(f"no project {team}/{project}: give an existing team and project slug")
    return found


class Command(BaseCommand):
    help = (
        "Export TEAM/PROJECT to one archive (a zip): the project's settings and policy, every "
        "session not in the trash with all its messages and memories, the project's other "
        "memories, and a manifest with the format version and a SHA-256 per file. Streams: "
        "memory stays flat however large the project. Read it back with import_project."
    )

    def add_arguments(self, parser):
        archive_arguments(
            parser, archive="the archive to write (.zip)", team="team slug", project="project slug"
        )
        parser.add_argument("--force", action="store_true", help="overwrite an existing file")

    def handle(self, *args, archive: Path, team, project, force, **options):
        console = Console(file=self.stdout._out, stderr=False)
        source = find_project(team, project)
        if archive.exists() and not force:
            raise CommandError(f"{archive} exists; give --force to overwrite it")
        live = Session.objects.filter(project=source, deleted_at__isnull=True)
        total = sum(live.values_list("message_count", flat=True).iterator())
        started = time.perf_counter()
        partial = archive.with_name(archive.name + ".partial")
        with progress_bar(console) as bar:
            task = bar.add_task(f"exporting {source}", total=total)
            try:
                result = write_archive(source, partial, progress=lambda n: bar.advance(task, n))
            except BaseException:
                partial.unlink(missing_ok=True)  # never a half-written archive
                raise
        partial.replace(archive)
        elapsed = time.perf_counter() - started
        table = Table(title=f"Export of {source} to {archive}")
        table.add_column("what")
        table.add_column("count", justify="right")
        table.add_row("sessions", f"{result.sessions:,}")
        table.add_row("messages", f"{result.messages:,}")
        for name, records in result.sections.items():
            table.add_row(f"section {name} (records)", f"{records:,}")
        table.add_row("archive bytes", f"{result.bytes:,}")
        console.print(table)
        rate = result.messages / elapsed if elapsed else 0
        console.print(f"{elapsed:.1f} s ({rate:,.0f} messages/s)")
