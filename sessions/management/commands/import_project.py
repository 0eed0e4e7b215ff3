"""Read a project archive (from export_project) into a project of this or another instance."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from sessions.capture.service import CaptureError
from sessions.management.console import archive_arguments, progress_bar
from sessions.portable.load import import_archive
from sessions.portable.manifest import ArchiveRefused
from teams.models import Project, Team
from transcripts.base import ImportFormatError


class Command(BaseCommand):
    help = (
        "Import an archive written by export_project into TEAM/PROJECT (the project is created "
        "when missing, and then takes the archive's settings; an existing project keeps its "
        "own unless --apply-settings). The archive is checked first (format version, a SHA-256 per "
        "file): a damaged or unknown archive is refused before anything is written. Every "
        "message goes through capture (redaction, quota, enrichment). Ids are remapped: "
        "importing the same archive again changes nothing, and an import that stopped "
        "halfway completes when run again."
    )

    def add_arguments(self, parser):
        archive_arguments(
            parser,
            archive="an archive from export_project",
            team="team slug (must exist)",
            project="project slug (created if missing)",
        )
        parser.add_argument(
            "--apply-settings",
            action="store_true",
            help="apply the archive's settings and policy to an existing project too",
        )

    def handle(self, *args, archive: Path, team, project, apply_settings, **options):
        console = Console(file=self.stdout._out, stderr=False)
        if not archive.is_file():
            raise CommandError(f"no such file: {archive}")
        target_team = Team.objects.filter(slug=team).first()
        if target_team is None:
            raise CommandError(f"no team {team!r}: create it first (or give an existing slug)")
        total = _message_total(archive)
        existing = Project.objects.filter(team=target_team, slug=project).first()
        target = existing or Project(team=target_team, slug=project, name=project)
        started = time.perf_counter()
        with progress_bar(console) as bar:
            task = bar.add_task(f"importing into {target_team.slug}/{project}", total=total)
            try:
                result = import_archive(
                    archive,
                    target,
                    settings=apply_settings or existing is None,
                    progress=lambda n: bar.advance(task, n),
                    prepare=target.save if existing is None else lambda: None,
                )
            except ArchiveRefused as exc:
                raise CommandError(f"archive refused, nothing was written: {exc}") from None
            except (ImportFormatError, CaptureError) as exc:
                raise CommandError(
                    f"import stopped: {exc}. What was imported before stays; fix the cause "
                    "and run the same import again to complete it"
                ) from None
        elapsed = time.perf_counter() - started
        self._summary(console, target, result, elapsed)

    def _summary(self, console, target, result, elapsed) -> None:
        table = Table(title=f"Import into {target}")
        table.add_column("what")
        table.add_column("count", justify="right")
        rows = [
            ("sessions created", result.sessions_created),
            ("sessions already here", result.sessions_found),
            ("messages added", result.messages_added),
            ("messages already here (skipped)", result.duplicates),
            ("values redacted", result.redactions),
        ]
        rows += [(f"sessions with {name}", n) for name, n in result.attachments.items()]
        for name, summary in result.sections.items():
            rows += [(f"{name}: {key}", value) for key, value in summary.items()]
        rows += [(f"skipped section {name}", n) for name, n in result.skipped_sections.items()]
        for what, count in rows:
            table.add_row(what, f"{count:,}")
        console.print(table)
        if result.renumbered:
            pairs = ", ".join(f"{a} → {b}" for a, b in sorted(result.renumbered.items()))
            console.print(f"renumbered (ids taken here already): {pairs}")
        console.print(
            "settings: " + ("the archive's applied" if result.settings_applied else "kept")
        )
        rate = result.messages_added / elapsed if elapsed else 0
        console.print(f"{elapsed:.1f} s ({rate:,.0f} messages/s)")


def _message_total(archive: Path) -> int | None:
    """From the manifest, for the progress bar (checked properly by the import)."""
    try:
        with zipfile.ZipFile(archive) as opened:
            return int(json.loads(opened.read("manifest.json"))["counts"]["messages"])
    except Exception:  # a broken archive: the import names what is wrong
        return None
