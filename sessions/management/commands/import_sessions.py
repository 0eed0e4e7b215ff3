"""Import transcript files and folders straight into a project, with progress and a summary."""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.table import Table

from sessions.capture.service import CaptureError, capture_sessions
from sessions.management.console import progress_bar
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

    def handle(self, *args, paths, team, project, format, **options):
        console = Console(file=self.stdout._out, stderr=False)
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(f"no such file or folder: {', '.join(missing)}")
        try:
            _, project_obj, _ = ensure_team_and_project(team, project)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
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
                rows.append(self._import_one(path, project_obj, format, totals, walked=walked))
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

    def _import_one(self, path: Path, project, fmt, totals, *, walked: bool) -> tuple[str, ...]:
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
            results = capture_sessions(project, parsed)
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
