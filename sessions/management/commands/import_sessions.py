"""Import transcript files and folders straight into a project, with progress and a summary."""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from sessions.capture.service import CaptureError, capture_sessions
from sessions.management.console import progress_bar
from sessions.visibility import Ownership, VisibilityError, for_capture
from teams.access import Access
from teams.models import Membership, Visibility
from teams.services import ensure_team_and_project
from transcripts import FORMATS, ImportFormatError, detect_format, parse, parse_path
from transcripts.files import UNKNOWN_FORMAT, find_transcripts


class Command(BaseCommand):
    help = (
        "Import transcripts (Claude Code, Codex, Aider, Gemini CLI, Cursor and OpenCode, "
        "ChatGPT exports, OpenAI/Anthropic message logs, Claude Managed Agents event logs, "
        "NDJSON events, conversation.md, plain text) from files and folders into "
        "TEAM/PROJECT. Each file imports whole or not at all; sessions already there get only "
        "their new messages; records of a newer format version the importer does not know "
        "are skipped and counted. Ends with a table: imported, duplicates, failed."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="files or folders to import")
        parser.add_argument("--team", default="demo", help="team slug (created if missing)")
        parser.add_argument("--project", default="demo", help="project slug (created if missing)")
        parser.add_argument(
            "--format",
            default=None,
            help=f"force a format instead of detecting it per file: {', '.join(FORMATS)}",
        )
        parser.add_argument(
            "--for",
            dest="person",
            metavar="USER",
            default=None,
            help="username of the team member the new sessions belong to (default: the team)",
        )
        parser.add_argument(
            "--visibility",
            choices=Visibility.values,
            default=None,
            help="who reads the new sessions: private (needs --for), summary or team "
            "(default: the project's; docs/visibility.md)",
        )

    def handle(self, *args, paths, team, project, format, person, visibility, **options):
        console = Console(file=self.stdout._out, stderr=False)
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(f"no such file or folder: {', '.join(missing)}")
        try:
            _, project_obj, _ = ensure_team_and_project(team, project)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        ownership = self._ownership(project_obj, person, visibility)
        files = list(find_transcripts(paths))
        if not files:
            raise CommandError("no transcript files found under the given paths")

        explicit = {p.resolve() for p in paths}
        rows = []
        totals = {
            "sessions": 0,
            "messages": 0,
            "duplicates": 0,
            "failed": 0,
            "skipped": 0,
            "unknown": 0,
        }
        started = time.perf_counter()
        with progress_bar(console) as progress:
            task = progress.add_task("importing", total=len(files))
            for path in files:
                progress.update(task, description=f"importing {path.name}")
                walked = path.resolve() not in explicit
                rows.append(
                    self._import_one(path, project_obj, ownership, format, totals, walked=walked)
                )
                progress.advance(task)
        elapsed = time.perf_counter() - started

        table = Table(title=f"Import into {project_obj}")
        for column in ("file", "result", "sessions", "new messages", "duplicates", "detail"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        rate = totals["messages"] / elapsed if elapsed else 0
        unknown = f"{totals['unknown']} unknown record(s) skipped, " if totals["unknown"] else ""
        console.print(
            f"{len(files)} file(s): {totals['sessions']} session(s) with new messages, "
            f"{totals['messages']} new message(s), {totals['duplicates']} duplicate message(s) "
            f"skipped, {unknown}{totals['skipped']} file(s) not transcripts, "
            f"{totals['failed']} failed — "
            f"{elapsed:.1f} s ({rate:,.0f} messages/s)"
        )
        if totals["failed"]:
            raise CommandError(f"{totals['failed']} file(s) failed; see the table above")

    def _ownership(self, project, username: str | None, asked: str | None) -> Ownership:
        """Whose the new sessions are (``--for``: a member of the team) and who reads them."""
        person_id = None
        if username is not None:
            member = Membership.objects.filter(
                team_id=project.team_id, user__username=username
            ).first()
            if member is None:
                raise CommandError(
                    f"{username!r} is not a member of team {project.team.slug}; add them in "
                    "the admin first, or import for the team (leave out --for)"
                )
            person_id = member.user_id
        try:
            return for_capture(
                Access(team_ids=(project.team_id,), person_id=person_id), project, asked
            )
        except VisibilityError as exc:
            raise CommandError(str(exc)) from exc

    def _import_one(
        self, path: Path, project, ownership, fmt, totals, *, walked: bool
    ) -> tuple[str, ...]:
        if walked and not fmt and path.is_file():
            # Found inside a folder (a README, a config file…): skip what is no transcript.
            try:
                detect_format(path.read_bytes(), path.name)
            except ImportFormatError as exc:
                if str(exc).startswith(UNKNOWN_FORMAT):
                    totals["skipped"] += 1
                    return (str(path), "[dim]skipped", "0", "0", "0", "not a transcript")
            except OSError:
                pass  # reported by the import below
        try:
            parsed = (
                parse(path.read_bytes(), filename=path.name, format=fmt)
                if fmt
                else (parse_path(path))
            )
            results = capture_sessions(project, parsed, ownership)
        except (ImportFormatError, CaptureError, OSError) as exc:
            totals["failed"] += 1
            return (str(path), "[red]failed", "0", "0", "0", str(exc))
        added = sum(len(r.added) for r in results)
        duplicates = sum(r.duplicates for r in results)
        changed = sum(1 for r in results if r.added)
        totals["sessions"] += changed
        totals["messages"] += added
        totals["duplicates"] += duplicates
        result = "[green]imported" if added else "[yellow]duplicate"
        ids = ", ".join(r.session.public_id for r in results[:3])
        more = f" (+{len(results) - 3} more)" if len(results) > 3 else ""
        totals["unknown"] += parsed.skipped_total
        unknown = "; skipped " + ", ".join(f"{r}: {n}" for r, n in parsed.skipped.items())
        detail = ids + more + (unknown if parsed.skipped else "")
        return (str(path), result, str(len(results)), str(added), str(duplicates), detail)
