"""Print a new API token for a project, or a team-level one (--team-level); creates the
team and project when missing.

``--for USER`` makes a token that acts for a member of the team: the sessions it captures
are theirs, and it reads their private sessions (docs/visibility.md). Without it the token
is a team token: its sessions belong to the team. ``--visibility`` is the token's default
for the sessions it captures (else the project's).

A team nobody belongs to is invisible in the browser UI, so a team this command leaves
without members gets an owner: the person named with ``--owner``, else the first admin
user (the one `make run` creates).
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from teams.models import (
    ApiToken,
    Membership,
    Role,
    TokenPermission,
    Visibility,
    parse_token_permissions,
)
from teams.services import ensure_team, ensure_team_and_project


class Command(BaseCommand):
    help = (
        "Create an API token for agents of TEAM/PROJECT (both made if missing). The token is "
        "printed once, alone on the last line, so scripts can take it with `tail -n1`. A team "
        "with nobody in it gets an owner (--owner, else the first admin user), so its sessions "
        "show in the browser UI. --permissions says what the token may do (read and write by "
        "default). --team-level makes a token for every project of TEAM instead: agents name "
        "the project by their working directory (the memoryapp command sends it), and with "
        "the 'projects' permission a new directory's project is created on first use. "
        "--for USER makes a token that acts for a member of the team (its sessions are "
        "theirs, and it reads their private ones); without it, a team token. --visibility "
        "is the default visibility of the sessions it captures (else the project's)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--team", required=True, help="team slug (created if missing)")
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--project", help="project slug (created if missing)")
        where.add_argument(
            "--team-level",
            action="store_true",
            help="a token for every project of the team, found by the agent's working "
            "directory; add 'projects' to --permissions to let it create them on first use",
        )
        parser.add_argument("--name", default="", help="a label to recognise the token by")
        parser.add_argument(
            "--permissions",
            default="read,write",
            help="what the token may do, comma-separated: "
            + "; ".join(p.label for p in TokenPermission)
            + " (default: read,write; delete lets an agent remove sessions; projects, for a "
            "--team-level token, creates a new working directory's project)",
        )
        parser.add_argument(
            "--owner",
            default=None,
            help="username to add to the team as its owner (default: when the team has no "
            "members yet, the first admin user)",
        )
        parser.add_argument(
            "--for",
            dest="person",
            metavar="USER",
            default=None,
            help="username of a member of the team this token acts for: the sessions it "
            "captures are theirs and it reads their private sessions (default: nobody, a "
            "team token whose sessions belong to the team)",
        )
        parser.add_argument(
            "--visibility",
            choices=Visibility.values,
            default="",
            help="who reads the sessions this token captures when a capture does not say: "
            "private (only its person), summary (the team reads title, summary, topics) or "
            "team (default: the project's default)",
        )

    @transaction.atomic
    def handle(self, *args, team, project, team_level, name, owner, permissions, **options):
        person, visibility = options["person"], options["visibility"]
        try:
            permissions = parse_token_permissions(permissions)
        except ValueError as exc:
            raise CommandError(f"--permissions: {exc}") from exc
        if TokenPermission.PROJECTS in permissions and not team_level:
            raise CommandError(
                "--permissions: 'projects' is for team-level tokens (add --team-level instead "
                "of --project): a project token stays in its project"
            )
        try:
            if team_level:
                team_obj, created = ensure_team(team)
                project_obj = None
            else:
                team_obj, project_obj, created = ensure_team_and_project(team, project)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        where = project_obj or f"every project of team {team_obj.slug}"
        if created:
            self.stderr.write(f"Created {project_obj or team_obj.slug}.")
        self.give_an_owner(team_obj, owner)
        acts_for = self.member(team_obj, person) if person is not None else None
        self.check_visibility(project_obj, visibility, acts_for)
        token, raw = ApiToken.issue(
            project_obj,
            team=None if project_obj else team_obj,
            name=name,
            permissions=permissions,
            person=acts_for,
            default_visibility=visibility,
        )
        self.stderr.write(
            f"Token {token.prefix}… for {where} ({', '.join(token.permissions)}), "
            f"{self.describe(acts_for, visibility)}: store it now, it is not shown again.\n"
            "Agents send it as `Authorization: Bearer <token>`; the `memoryapp` command and "
            "memoryapp_client read it from MEMORYAPP_TOKEN."
        )
        self.stdout.write(raw)

    def member(self, team, username: str):
        """The member of ``team`` named ``username``: the person the token acts for. Anyone
        else is refused (the whole command is one transaction: nothing is created)."""
        User = get_user_model()
        person = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if person is None:
            raise CommandError(f"--for: no user named '{username}'; nothing was created.")
        if not Membership.objects.filter(team=team, user=person).exists():
            raise CommandError(
                f"--for: '{username}' is not a member of team {team.slug}; a token acts only "
                "for a member of its team (add them in the admin, /admin/, Teams). Nothing "
                "was created."
            )
        return person

    def check_visibility(self, project, visibility: str, person) -> None:
        """A default the token could never use is refused now, not at its first capture."""
        if visibility == Visibility.PRIVATE and person is None:
            raise CommandError(
                "--visibility private: a team token's sessions belong to the team and cannot "
                "be private; add --for USER, or choose summary. Nothing was created."
            )
        if project is not None and visibility and visibility not in project.allowed_visibilities:
            raise CommandError(
                f"--visibility {visibility}: project {project} allows only "
                f"{', '.join(project.allowed_visibilities)}. Nothing was created."
            )

    @staticmethod
    def describe(person, visibility: str) -> str:
        whose = f"acting for {person.get_username()}" if person else "a team token"
        default = visibility or "the project's default"
        return f"{whose}, new sessions {default}"

    def give_an_owner(self, team, username: str | None) -> None:
        """Add ``username`` (or, to a team without members, the first admin) as owner."""
        User = get_user_model()
        if username is not None:
            person = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
            if person is None:
                raise CommandError(f"No user named '{username}'.")
        elif Membership.objects.filter(team=team).exists():
            return
        else:
            person = User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
            if person is None:
                self.stderr.write(
                    f"Team {team.slug} has no members: add people to it in the admin "
                    "(/admin/, Teams) so they can see its sessions in the browser UI."
                )
                return
        _, added = Membership.objects.get_or_create(
            team=team, user=person, defaults={"role": Role.OWNER}
        )
        if added:
            self.stderr.write(
                f"Added '{person.get_username()}' to team {team.slug} as its owner: signed in "
                "as them, the browser UI shows its sessions."
            )
