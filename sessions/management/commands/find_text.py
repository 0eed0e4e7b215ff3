"""Say where a name, an address or a secret is still stored (sessions/forget/audit.py)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from sessions.forget.audit import find_text


class Command(BaseCommand):
    help = (
        "Search every text, JSON, keyword-index and text-array column of every table for "
        "one or more strings (case-insensitive) and list where they are, with row counts: "
        "to check that what was erased or anonymised is gone everywhere. Reads whole "
        "tables: slow on a big database. Exits with status 1 when anything is found."
    )

    def add_arguments(self, parser):
        parser.add_argument("strings", nargs="+", help="what to look for")

    def handle(self, *args, strings, **options):
        if any(not s.strip() for s in strings):
            raise CommandError("an empty string matches everything; give the text to find")
        hits = find_text(strings)
        for hit in hits:
            self.stdout.write(f"{hit.table}.{hit.column}: {hit.rows} row(s) hold {hit.needle!r}")
        if hits:
            raise CommandError(f"found in {len(hits)} column(s)", returncode=1)
        self.stdout.write("found nowhere")
