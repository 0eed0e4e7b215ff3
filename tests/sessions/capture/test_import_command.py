"""`manage.py import_sessions`: files and folders, a summary table, per-file all-or-nothing."""

import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from sessions.models import Message, Session

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command(
        "import_sessions", *map(str, args), "--team", "acme", "--project", "web", stdout=out
    )
    return out.getvalue()


def test_imports_a_folder_of_real_transcripts_and_skips_them_the_second_time(tmp_path, shared_dir):
    folder = tmp_path / "transcripts"
    shutil.copytree(shared_dir / "samples", folder)
    first = run(folder)
    assert "Import into acme/web" in first
    formats = set(Session.objects.values_list("source_format", flat=True))
    assert {"claude_code", "codex", "aider", "openai_chat"} <= formats
    messages = Message.objects.count()
    assert messages > 100
    assert "0 failed" in first
    assert "1 file(s) not transcripts" in first  # the samples' README.md
    second = run(folder)
    assert Message.objects.count() == messages
    assert "duplicate" in second
    assert "0 new message(s)" in second


def test_a_broken_file_fails_alone_with_its_reason(tmp_path, shared_dir):
    good = tmp_path / "good.jsonl"
    good.write_bytes((shared_dir / "samples" / "claude_code" / "raze.jsonl").read_bytes())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n{oops\n')
    with pytest.raises(CommandError, match="1 file"):
        run(tmp_path)
    assert Session.objects.count() == 1  # the good file imported, the bad one not at all


def test_missing_paths_are_refused(tmp_path):
    with pytest.raises(CommandError, match="no such file or folder"):
        run(tmp_path / "nope")


def test_sessions_imported_for_a_member_are_theirs_at_the_visibility_asked(tmp_path, shared_dir):
    from teams.models import Membership, Role, Team
    from tests.factories import UserFactory

    sample = tmp_path / "raze.jsonl"
    sample.write_bytes((shared_dir / "samples" / "claude_code" / "raze.jsonl").read_bytes())
    run_for = ["--team", "acme", "--project", "web"]
    with pytest.raises(CommandError, match="not a member of team acme"):
        call_command("import_sessions", str(sample), *run_for, "--for", "nobody", stdout=StringIO())
    with pytest.raises(CommandError, match="cannot be private"):
        call_command(
            "import_sessions", str(sample), *run_for, "--visibility", "private", stdout=StringIO()
        )
    assert not Session.objects.exists()  # refused before anything was read
    person = UserFactory(username="ada")
    Membership.objects.create(team=Team.objects.get(slug="acme"), user=person, role=Role.MEMBER)
    call_command(
        "import_sessions",
        str(sample),
        *run_for,
        "--for",
        "ada",
        "--visibility",
        "private",
        stdout=StringIO(),
    )
    assert list(Session.objects.values_list("owner__username", "visibility")) == [
        ("ada", "private")
    ]
