"""Print a new API token for a project; creates the team and project when missing."""

from django.core.management.base import BaseCommand, CommandError

from teams.models import ApiToken
from teams.services import ensure_team_and_project


class Command(BaseCommand):
    help = (
        "Create an API token for agents of TEAM/PROJECT (both made if missing). The token is "
        "printed once, alone on the last line, so scripts can take it with `tail -n1`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--team", required=True, help="team slug (created if missing)")
        parser.add_argument("--project", required=True, help="project slug (created if missing)")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args, team, project, name, **options):
        try:
            _, project_obj, created = ensure_team_and_project(team, project)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        token, raw = ApiToken.issue(project_obj, name=name)
        if created:
            self.stderr.write(f"Created {project_obj}.")
        self.stderr.write(
            f"Token {token.prefix}… for {project_obj}: store it now, it is not shown again."
        )
        self.stdout.write(raw)
