"""Re-embed messages (and session summaries) with the configured model, with progress."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from sessions.embedding.backend import embed
from sessions.embedding.model_files import model_name
from sessions.enrich import pipeline
from sessions.models import EnrichmentStatus, Message, Session
from teams.models import Project


class Command(BaseCommand):
    help = (
        "Re-embed stored messages and session summaries, e.g. after EMBEDDING_MODEL changed. "
        "By default only what was embedded with another model than the configured one; "
        "--all for everything (also after a change to what is embedded, such as short turns "
        "embedded with the turn before them). Runs here, batch by batch, with a progress "
        "bar; workers running at the same time share the work safely."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--model",
            help="only vectors made by this model name (default: any model but the current one)",
        )
        parser.add_argument("--project", help="'team/project': only this project")
        parser.add_argument("--all", action="store_true", help="re-embed everything")
        parser.add_argument("--batch", type=int, default=settings.EMBED_BATCH_MESSAGES)

    def handle(self, *args, model, project, all, batch, **options):
        messages = Message.objects.all()
        sessions = Session.objects.exclude(summary="")
        if project:
            team_slug, _, project_slug = project.partition("/")
            found = Project.objects.filter(team__slug=team_slug, slug=project_slug).first()
            if found is None:
                raise CommandError(f"no project {project!r} (use 'team/project')")
            messages = messages.filter(session__project=found)
            sessions = sessions.filter(project=found)
        if not all:
            if model:
                messages = messages.filter(chunks__model=model).distinct()
                sessions = sessions.filter(embedding_model=model)
            else:
                messages = messages.exclude(chunks__model=model_name()).filter(
                    enrichment_status=EnrichmentStatus.DONE
                )
                sessions = sessions.exclude(embedding_model=model_name())
        ids = list(messages.values_list("id", flat=True))
        self.stdout.write(f"{len(ids)} message(s) and {sessions.count()} session(s) to re-embed")
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        ) as progress:
            task = progress.add_task("messages", total=len(ids))
            for start in range(0, len(ids), batch):
                chunk = ids[start : start + batch]
                Message.objects.filter(id__in=chunk).update(
                    enrichment_status=EnrichmentStatus.PENDING
                )
                while pipeline.embed_pending_messages(limit=batch, only_ids=chunk):
                    pass
                progress.advance(task, len(chunk))
            summaries = list(sessions.values_list("id", "summary"))
            task = progress.add_task("sessions", total=len(summaries))
            for start in range(0, len(summaries), batch):
                part = summaries[start : start + batch]
                vectors = embed([summary for _, summary in part])
                for (session_id, _), vector in zip(part, vectors, strict=True):
                    Session.objects.filter(pk=session_id).update(
                        embedding=vector, embedding_model=model_name()
                    )
                progress.advance(task, len(part))
        self.stdout.write(self.style.SUCCESS(f"done: vectors now from {model_name()}"))
