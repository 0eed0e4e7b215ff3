"""The project from the working directory on the client's side (docs/api.md): the slug, the
header, `memoryapp capture` by the transcript's cwd, `memoryapp sessions list` and
`memoryapp similar`, against a live server."""

from __future__ import annotations

import io
import json
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryapp_client import MemoryClient
from memoryapp_client.cli import main
from memoryapp_client.projects import directory_slug, project_reference
from protocol.directories import header_value, project_slug
from sessions.enrich import pipeline
from sessions.models import Session
from teams.models import ApiToken, Project
from tests.factories import ProjectFactory


@pytest.mark.parametrize(
    "path, slug",
    [
        ("/home/user/repos/myapp", "-home-user-repos-myapp"),
        ("/tmp", "-tmp"),
        ("C:\\projects\\web-app", "-C-projects-web-app"),
        ("/home/user/repos/myapp/", "-home-user-repos-myapp"),
        ("/", "-"),
    ],
)
def test_seed_004s_examples(path, slug):
    assert project_slug(path) == slug
    assert directory_slug(path) == slug


paths = st.text(min_size=1, max_size=80).filter(lambda t: "\x00" not in t)


@given(paths)
def test_a_slug_starts_with_a_hyphen_has_no_separators_and_is_its_own_slug(path):
    slug = project_slug(path)
    assert slug.startswith("-")
    assert not {"/", "\\", ":"} & set(slug)
    assert project_slug(slug) == slug


@given(paths)
def test_the_header_value_is_latin_1_and_decodes_back(path):
    slug = project_slug(path)
    value = header_value(slug)
    value.encode("latin-1")  # what http.client sends
    assert urllib.parse.unquote(value) == slug


def test_a_project_option_is_a_directory_or_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web").mkdir()
    assert project_reference("acme/web") == "acme/web"
    assert project_reference("12") == "12"
    assert project_reference("-home-x") == "-home-x"
    assert project_reference(".") == project_slug(tmp_path.resolve())
    assert project_reference("web") == project_slug((tmp_path / "web").resolve())
    assert project_reference("~") == project_slug(type(tmp_path).home().resolve())


@pytest.fixture
def team_env(monkeypatch, live_server, team):
    raw = ApiToken.issue(None, team=team, permissions=["read", "write", "projects"])[1]
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", raw)
    return raw


def capture_in(directory, agent: str, words: str, count: int = 1) -> str:
    return MemoryClient(directory=str(directory)).capture(
        agent_name=agent,
        title=f"{agent} {words}",
        messages=[{"role": "user", "content": words}] * count,
    )["id"]


@pytest.mark.django_db(transaction=True)
def test_capture_files_to_the_project_of_the_directory_each_was_recorded_in(
    team_env, team, shared_dir, capsys
):
    assert main(["capture", str(shared_dir / "samples" / "claude_code")]) == 0
    directories = {
        s.project.directory for s in Session.objects.select_related("project").filter(team=team)
    }
    assert directories == {"-Users-nicksol-Desktop-agentic-wallet", "-Users-uzaxirr-work-raze"}


@pytest.mark.django_db(transaction=True)
def test_the_session_end_hook_uses_the_hooks_cwd(team_env, team, shared_dir, monkeypatch):
    hook = {
        "session_id": "abc",
        "transcript_path": str(shared_dir / "samples" / "claude_code" / "raze.jsonl"),
        "cwd": "/home/me/repos/raze",
        "hook_event_name": "SessionEnd",
    }
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(hook)))
    assert main(["capture", "--hook"]) == 0
    assert Session.objects.get().project.directory == "-home-me-repos-raze"


@pytest.mark.django_db(transaction=True)
def test_sessions_list_shows_this_directorys_project_another_or_all(
    team_env, team, tmp_path, monkeypatch, capsys
):
    here, there = tmp_path / "myapp", tmp_path / "other"
    here.mkdir()
    there.mkdir()
    mine = [capture_in(here, "architect", "auth design", 3), capture_in(here, "dev", "deploy")]
    theirs = capture_in(there, "dev", "cooking")
    monkeypatch.chdir(here)

    assert main(["sessions", "list"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == [
        "SESSION", "STARTED", "AGENT", "MSGS", "SIZE", "OWNER", "VISIBILITY", "TITLE"
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[1:]] == mine[::-1]  # newest first
    assert "2 session(s) in this directory's project" in err

    assert main(["sessions", "list", "--agent", "architect", "--sort", "message_count"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [mine[0]]

    assert main(["sessions", "list", "--project", str(there)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [theirs]

    assert main(["sessions", "list", "--all-projects", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert {s["id"] for s in body["results"]} == {*mine, theirs}

    assert main(["sessions", "list", "--all-projects", "--reverse"]) == 0
    out = capsys.readouterr().out
    assert "PROJECT" in out.splitlines()[0]
    assert [line.split()[0] for line in out.splitlines()[1:]] == [*mine, theirs]


@pytest.mark.django_db(transaction=True)
def test_sessions_list_in_a_new_directory_says_nothing_was_captured_there(
    live_server, team, tmp_path, monkeypatch, capsys
):
    raw = ApiToken.issue(None, team=team, permissions=["read", "write", "projects"])[1]
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", raw)
    monkeypatch.chdir(tmp_path)
    assert main(["sessions", "list"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and "the first session captured from it makes one" in err
    assert not Project.objects.filter(team=team).exists()  # looking made no project
    # Across all projects needs no directory's project.
    assert main(["sessions", "list", "--all-projects"]) == 0
    assert "no sessions in all projects" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_a_project_token_lists_its_project_from_any_directory(
    live_server, project, tmp_path, monkeypatch, capsys
):
    ProjectFactory(team=project.team, directory=project_slug(tmp_path.resolve()))
    raw = ApiToken.issue(project)[1]
    monkeypatch.setenv("MEMORYAPP_URL", live_server.url)
    monkeypatch.setenv("MEMORYAPP_TOKEN", raw)
    session = MemoryClient().capture(agent_name="dev", messages=[{"role": "user", "content": "x"}])
    monkeypatch.chdir(tmp_path)  # another project's directory: the token stays in its own
    assert main(["sessions", "list"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [session["id"]]


@pytest.mark.django_db(transaction=True)
def test_similar_lists_the_nearest_sessions(memory, capsys, settings):
    settings.SESSION_ENRICH_DELAY_SECONDS = 0  # summarise now, not after a quiet spell
    while pipeline.enrich_pending_sessions():  # summaries, and so the sessions' vectors
        pass
    assert main(["similar", memory["auth"], "--limit", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["SIM", "SESSION", "DATE", "AGENT", "TITLE"]
    assert len(lines) == 3 and memory["auth"] not in "".join(lines)
    assert all(line.split()[0].endswith("%") for line in lines[1:])

    assert main(["similar", memory["auth"], "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["session"] == memory["auth"] and body["similar"]

    assert main(["similar", "2025-01-01-nobody-000000"]) == 1
    assert "HTTP 404" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_similar_says_why_a_session_has_nothing_similar_yet(agent_env, capsys):
    session = MemoryClient().capture(agent_name="dev", messages=[{"role": "user", "content": "x"}])
    assert main(["similar", session["id"]]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "once its messages are embedded" in err
