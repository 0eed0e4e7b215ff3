"""Team-level tokens and the project of a working directory (docs/api.md): found by the
directory's slug, created on first use with the "projects" permission (once, even when
clients race), refused by name without it; a project token stays in its project; another
team's project is never reached."""

from __future__ import annotations

import threading
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client

from protocol.directories import DIRECTORY_HEADER
from sessions.models import Session
from teams.models import ApiToken, Project, Role
from tests.clients import client_for
from tests.factories import MembershipFactory, ProjectFactory, TeamFactory

pytestmark = pytest.mark.django_db

MYAPP = "/home/user/repos/myapp"
MYAPP_SLUG = "-home-user-repos-myapp"
CAPTURE = {"agent_name": "dev", "messages": [{"role": "user", "content": "deploy the api"}]}


def team_token(team, *permissions) -> str:
    return ApiToken.issue(None, team=team, permissions=list(permissions))[1]


def in_directory(token: str, directory: str | None):
    client = client_for(token=token)
    if directory is not None:
        client.credentials(
            HTTP_AUTHORIZATION=f"Bearer {token}", **{"HTTP_X_MEMORYAPP_DIRECTORY": directory}
        )
    return client


def capture(client, **extra):
    return client.post("/api/v1/sessions", {**CAPTURE, **extra}, format="json")


def test_a_team_token_with_projects_creates_the_directorys_project_on_first_use(team):
    client = in_directory(team_token(team, "read", "write", "projects"), MYAPP)
    first = capture(client)
    assert first.status_code == 201, first.json()
    project = Project.objects.get(team=team, directory=MYAPP_SLUG)
    assert first.json()["project"] == f"{team.slug}/{project.slug}"
    assert project.name == MYAPP_SLUG and project.slug == "home-user-repos-myapp"
    # The same directory, by header (with a trailing slash) or slug: the same project.
    again = capture(in_directory(client_token(client), MYAPP + "/"))
    by_slug = capture(client_for(token=client_token(client)), project=MYAPP_SLUG)
    assert again.json()["project"] == by_slug.json()["project"] == first.json()["project"]
    assert Project.objects.filter(team=team).count() == 1
    assert Session.objects.filter(project=project).count() == 3


def client_token(client) -> str:
    return client._credentials["HTTP_AUTHORIZATION"].split()[1]


def test_a_windows_directory_has_seed_004s_slug(team):
    client = in_directory(team_token(team, "read", "write", "projects"), r"C:\projects\web-app")
    assert capture(client).status_code == 201
    assert Project.objects.filter(team=team, directory="-C-projects-web-app").exists()


def ask(client, method: str):
    return {
        "capture": lambda: capture(client),
        "import": lambda: client.post(
            "/api/v1/import?format=plain_text",
            b"User: hi\nAssistant: hello\n",
            content_type="text/plain",
        ),
        "search": lambda: client.post("/api/v1/search", {"q": "deploy"}, format="json"),
        "context": lambda: client.post("/api/v1/context", {"query": "deploy"}, format="json"),
        "list": lambda: client.get("/api/v1/sessions"),
        "memories": lambda: client.get("/api/v1/memories"),
    }[method]()


@pytest.mark.parametrize("method", ["capture", "import"])
def test_a_token_that_may_not_create_projects_is_refused_by_name_and_nothing_is_written(
    team, method
):
    ProjectFactory(team=team, directory="-srv-known")
    response = ask(in_directory(team_token(team, "read", "write"), "/srv/brand-new"), method)
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "MEM_E112"
    assert "'projects' permission" in body["detail"] and "-srv-brand-new" in body["detail"]
    assert list(Project.objects.filter(team=team).values_list("directory", flat=True)) == [
        "-srv-known"
    ]
    assert Session.objects.count() == 0


@pytest.mark.parametrize("method", ["search", "context", "list", "memories"])
@pytest.mark.parametrize("permissions", [("read", "write"), ("read", "write", "projects")])
def test_reading_a_new_directory_is_a_404_and_makes_no_project(team, method, permissions):
    """Looking around (a list, a start hook's context) in a directory nothing was captured
    from leaves no empty project behind, whatever the token may create."""
    ProjectFactory(team=team, directory="-srv-known")
    response = ask(in_directory(team_token(team, *permissions), "/srv/brand-new"), method)
    assert response.status_code == 404, response.json()
    assert "-srv-brand-new" in response.json()["detail"]
    assert "first session captured from it" in response.json()["detail"]
    assert list(Project.objects.filter(team=team).values_list("directory", flat=True)) == [
        "-srv-known"
    ]


def test_a_token_without_projects_works_in_a_known_directory(team):
    known = ProjectFactory(team=team, directory="-srv-known")
    client = in_directory(team_token(team, "read", "write"), "/srv/known")
    assert capture(client).status_code == 201
    assert Session.objects.get().project == known


def test_a_project_token_stays_in_its_project(team, project):
    other = ProjectFactory(team=team, directory=MYAPP_SLUG)
    raw = ApiToken.issue(project, permissions=["read", "write", "delete"])[1]
    # The header never moves it: the session lands in its own project.
    assert capture(in_directory(raw, MYAPP)).status_code == 201
    assert Session.objects.get().project == project
    # Naming another directory (known or new) is refused, and nothing is written.
    for directory in (MYAPP, "/somewhere/new"):
        refused = capture(client_for(token=raw), project=directory)
        assert refused.status_code == 403, refused.json()
        assert f"belongs to project {project}" in refused.json()["detail"]
        listed = client_for(token=raw).get("/api/v1/sessions", {"project": directory})
        assert listed.status_code == 403
    assert Session.objects.filter(project=other).count() == 0
    assert Project.objects.filter(team=team).count() == 2


def test_a_project_token_may_name_its_own_directory(team):
    project = ProjectFactory(team=team, directory=MYAPP_SLUG)
    raw = ApiToken.issue(project)[1]
    assert capture(client_for(token=raw), project=MYAPP).status_code == 201


def test_another_teams_project_is_never_reached(team):
    theirs = ProjectFactory(directory=MYAPP_SLUG)  # another team, same directory
    their_raw = ApiToken.issue(theirs)[1]
    assert capture(client_for(token=their_raw)).status_code == 201
    mine = in_directory(team_token(team, "read", "write", "projects"), MYAPP)
    assert capture(mine).status_code == 201
    created = Project.objects.get(team=team)
    assert created.directory == MYAPP_SLUG and created != theirs
    assert Session.objects.filter(project=theirs).count() == 1  # nothing more there
    # By name or id, their project is a 404; their session never listed or searched.
    for reference in (f"{theirs.team.slug}/{theirs.slug}", str(theirs.pk)):
        assert capture(client_for(token=client_token(mine)), project=reference).status_code == 404
    listed = client_for(token=client_token(mine)).get("/api/v1/sessions").json()["results"]
    assert [s["project"] for s in listed] == [f"{team.slug}/{created.slug}"]
    their_id = Session.objects.get(project=theirs).public_id
    assert mine.get(f"/api/v1/sessions/{their_id}").status_code == 404


def test_a_team_token_reads_the_directorys_project_or_the_whole_team(team):
    raw = team_token(team, "read", "write", "projects")
    for directory in ("/a/one", "/a/two"):
        capture(in_directory(raw, directory))
    one = in_directory(raw, "/a/one").get("/api/v1/sessions").json()["results"]
    assert [s["project"] for s in one] == [f"{team.slug}/a-one"]
    by_param = client_for(token=raw).get("/api/v1/sessions", {"project": "-a-two"}).json()
    assert [s["project"] for s in by_param["results"]] == [f"{team.slug}/a-two"]
    everything = client_for(token=raw).get("/api/v1/sessions").json()["results"]
    assert sorted(s["project"] for s in everything) == [f"{team.slug}/a-one", f"{team.slug}/a-two"]
    # Without a directory or a project, a write has nowhere obvious to go: 400 naming both.
    nowhere = capture(client_for(token=raw))
    assert nowhere.status_code == 400
    assert DIRECTORY_HEADER in str(nowhere.json()["project"])


def test_a_directory_no_project_can_keep_is_a_400_naming_the_header(team):
    client = in_directory(team_token(team, "read", "write", "projects"), "/" + "x" * 1200)
    response = capture(client)
    assert response.status_code == 400
    assert DIRECTORY_HEADER in response.json()
    assert Project.objects.count() == 0


def test_projects_whose_slugs_clash_get_numbered_slugs(team):
    raw = team_token(team, "read", "write", "projects")
    for directory in ("/srv/My App", "/srv/my-app"):
        assert capture(in_directory(raw, directory)).status_code == 201
    assert sorted(Project.objects.values_list("slug", flat=True)) == ["srv-my-app", "srv-my-app-2"]


@pytest.mark.django_db(transaction=True)
def test_clients_creating_the_same_project_at_once_get_one_project():
    """Real threads, each on its own PostgreSQL connection, released together."""
    team = TeamFactory()
    raw = team_token(team, "read", "write", "projects")
    workers, rounds = 8, 4
    answers: list[tuple[int, str]] = []
    for round_ in range(rounds):
        barrier = threading.Barrier(workers)
        directory = f"/race/{round_}"

        def run(directory=directory, barrier=barrier):
            try:
                barrier.wait()
                response = capture(in_directory(raw, directory))
                answers.append((response.status_code, response.json().get("project")))
            finally:
                connection.close()

        threads = [threading.Thread(target=run) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert len(answers) == workers * rounds
    assert {code for code, _ in answers} == {201}
    assert Project.objects.filter(team=team).count() == rounds
    for round_ in range(rounds):
        project = Project.objects.get(team=team, directory=f"-race-{round_}")
        assert Session.objects.filter(project=project).count() == workers


def test_create_api_token_makes_a_team_level_token():
    out, err = StringIO(), StringIO()
    call_command(
        "create_api_token",
        "--team",
        "acme",
        "--team-level",
        "--permissions",
        "read,write,projects",
        stdout=out,
        stderr=err,
    )
    token = ApiToken.objects.get()
    assert token.project is None and token.team.slug == "acme"
    assert token.permissions == ["read", "write", "projects"]
    assert "every project of team acme" in err.getvalue()
    assert Project.objects.count() == 0
    assert capture(in_directory(out.getvalue().splitlines()[-1], MYAPP)).status_code == 201


def test_create_api_token_refuses_projects_on_a_project_token():
    with pytest.raises(CommandError, match="'projects' is for team-level tokens"):
        call_command(
            "create_api_token",
            "--team",
            "acme",
            "--project",
            "web",
            "--permissions",
            "read,projects",
            stdout=StringIO(),
        )
    assert ApiToken.objects.count() == 0


def test_the_tokens_page_makes_and_shows_team_level_tokens(team, project):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    browser = Client()
    browser.force_login(admin)
    page = browser.post(
        "/tokens",
        {"project": "0", "name": "laptop", "permissions": ["read", "write", "projects"]},
    )
    assert page.status_code == 200
    token = ApiToken.objects.get(name="laptop")
    assert token.project is None and token.team == team
    assert token.permissions == ["read", "write", "projects"]
    html = page.content.decode()
    assert "Token created for all projects of the team" in html
    assert "All projects" in browser.get("/tokens").content.decode()
    # "projects" on a project token is refused, by name.
    refused = browser.post(
        "/tokens", {"project": str(project.pk), "name": "x", "permissions": ["read", "projects"]}
    )
    assert "&#x27;projects&#x27; is for a team-level token" in refused.content.decode()
    assert not ApiToken.objects.filter(name="x").exists()


def test_only_an_admin_may_give_projects(team):
    member = MembershipFactory(team=team, role=Role.MEMBER).user
    browser = Client()
    browser.force_login(member)
    browser.post("/tokens", {"project": "0", "name": "m", "permissions": ["read", "projects"]})
    assert not ApiToken.objects.filter(name="m").exists()


def test_a_projects_directory_typed_in_the_admin_is_kept_as_its_slug(project):
    project.directory = "/home/user/repos/myapp/"
    project.full_clean()
    assert project.directory == MYAPP_SLUG


def test_retention_preview_with_a_team_token_names_the_project(team, project):
    raw = team_token(team, "read", "write", "delete")
    client = client_for(token=raw)
    assert client.get("/api/v1/retention").status_code == 400
    named = client.get("/api/v1/retention", {"project": f"{team.slug}/{project.slug}"})
    assert named.status_code == 200, named.json()
