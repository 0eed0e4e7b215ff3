"""Distil the diaries of past days again: after an upgrade, an import, or to backfill."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console

from memories.diary import due
from memories.diary.models import DiaryEntry
from memories.models import Memory
from sessions.management.console import progress_bar
from sessions.models import Session
from teams.models import Team


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"{value!r} is not a day (YYYY-MM-DD)") from exc


class Command(BaseCommand):
    help = (
        "Distil the diary entries of every day from --since to --until (default today, UTC) "
        "that has sessions, memories or entries, for every team or one (--team), then every "
        "other day marked due. Days are marked first, so what an interrupted run leaves is "
        "done by the beat task (memories.tasks.distill_due_diaries). Shows a progress bar."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--until", help="last day, YYYY-MM-DD (default: today, UTC)")
        parser.add_argument("--team", help="a team's slug: only its diaries")

    def handle(self, *args, since, until, team, **options):
        first = _day(since)
        last = _day(until) if until else datetime.now(UTC).date()
        if last < first:
            raise CommandError(f"--until {last} is before --since {first}")
        team_ids = None
        if team:
            found = Team.objects.filter(slug=team).first()
            if found is None:
                raise CommandError(f"no team {team!r}")
            team_ids = [found.pk]
        marked = due.mark(self._material(first, last, team_ids))
        console = Console(file=self.stdout)
        self.stdout.write(f"{marked} team-day(s) from {first} to {last} to distil")
        with progress_bar(console) as progress:
            task = progress.add_task("days", total=None)

            def advance(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            written = due.distill_due(progress=advance)
        self.stdout.write(
            f"{sum(written.values())} diary entr(ies) written over {len(written)} day(s)"
        )

    @staticmethod
    def _material(first: date, last: date, team_ids):
        """(team, day) pairs of the range with something a diary is made of, or an entry."""
        start = datetime.combine(first, datetime.min.time(), tzinfo=UTC)
        end = datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
        sessions = Session.objects.alive().exclude(user_name="").filter(started_at__lt=end)
        sessions = sessions.exclude(ended_at__lt=start, started_at__lt=start)
        memories = Memory.objects.active().filter(occurred_at__gte=start, occurred_at__lt=end)
        entries = DiaryEntry.objects.filter(day__gte=first, day__lte=last)
        if team_ids is not None:
            sessions = sessions.filter(team_id__in=team_ids)
            memories = memories.filter(team_id__in=team_ids)
            entries = entries.filter(team_id__in=team_ids)
        for team_id, started, ended in sessions.values_list("team_id", "started_at", "ended_at"):
            for day in due.days_between(started, ended):
                if first <= day <= last:
                    yield team_id, day
        for team_id, when in memories.values_list("team_id", "occurred_at"):
            yield team_id, when.astimezone(UTC).date()
        yield from entries.values_list("team_id", "day").distinct()
