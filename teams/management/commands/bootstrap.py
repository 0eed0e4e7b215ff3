"""Create the first admin user and a demo team/project, once; safe to run on every start."""

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from teams.services import ensure_team_and_project


class Command(BaseCommand):
    help = (
        "Create the first admin user (password from MEMORYAPP_ADMIN_PASSWORD, or generated and "
        "printed once) and a demo team and project. Does nothing that is already done."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("MEMORYAPP_ADMIN_USER", "admin"))
        parser.add_argument("--email", default=os.environ.get("MEMORYAPP_ADMIN_EMAIL", ""))
        parser.add_argument("--team", default="demo")
        parser.add_argument("--project", default="demo")

    def handle(self, *args, username, email, team, project, **options):
        User = get_user_model()
        admin = User.objects.filter(is_superuser=True).order_by("pk").first()
        password_file = settings.VAR_DIR / "initial-admin-password"
        if admin is None:
            given = os.environ.get("MEMORYAPP_ADMIN_PASSWORD")
            password = given or secrets.token_urlsafe(12)
            admin = User.objects.create_superuser(username=username, email=email, password=password)
            if given:
                # Never echo a password we did not make.
                self.stdout.write(
                    f"Created admin user '{username}' with the password from "
                    "MEMORYAPP_ADMIN_PASSWORD."
                )
            else:
                password_file.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(password + "\n")
                self.stdout.write(
                    self.style.SUCCESS(
                        f"Created admin user '{username}' with the generated password: {password}\n"
                        f"(also saved, readable only by you, in {password_file}; "
                        "change it with `python manage.py changepassword "
                        f"{username}` and delete that file)"
                    )
                )
        else:
            hint = (
                f"the generated password is in {password_file}"
                if password_file.exists()
                else "use the password you set (`python manage.py changepassword` resets it)"
            )
            self.stdout.write(f"Sign in as '{admin.get_username()}': {hint}.")
        _, demo_project, created = ensure_team_and_project(team, project, owner=admin)
        if created:
            self.stdout.write(f"Created the demo team and project '{demo_project}'.")
