"""Build the big teams' own indexes now, rather than at the next hourly run."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from search.speed import team_indexes, warm


class Command(BaseCommand):
    help = (
        "Give every team with at least TEAM_INDEX_MIN_MESSAGES messages its own HNSW and GIN "
        "indexes (search/speed/team_indexes.py), built CONCURRENTLY so capture goes on, and drop "
        "those of deleted teams. Celery beat runs the same every hour; nothing to do when "
        "they exist. --list shows them; --warm then reads what searches read (the big teams' "
        "graphs, every team's messages) into PostgreSQL's buffers, as a starting worker does "
        "(search/speed/warm.py)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--list", action="store_true", help="list them and do nothing")
        parser.add_argument(
            "--warm",
            action="store_true",
            help="after building, read what searches read into shared_buffers "
            "(up to 80%% of it), as a starting worker does",
        )

    def handle(self, *args, **options):
        if options["list"]:
            for name, (valid, entries) in sorted(team_indexes.existing().items()):
                state = "valid" if valid else "INVALID (rebuilt at the next run)"
                self.stdout.write(f"{name}: {state}, ~{int(entries)} entries")
            return
        threshold = team_indexes.min_messages()
        self.stdout.write(f"teams of >= {threshold} messages: {len(team_indexes.big_teams())}")
        changes = team_indexes.ensure()
        for c in changes:
            self.stdout.write(f"{c.action} {c.index} ({c.seconds:.1f} s)")
        if not changes:
            self.stdout.write("nothing to do")
        if options["warm"]:
            for w in warm.warm():
                self.stdout.write(
                    f"warmed team {w.team_id}'s {w.what} (~{w.megabytes:.0f} MB, {w.seconds:.1f} s)"
                )
