"""`memoryapp search|context|resume` and the client's search methods, against a live server
holding sessions captured over HTTP and embedded by the real pipeline."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from memoryapp_client import MemoryClient, MemoryError
from memoryapp_client.cli import BOLD, RESET, format_results, main, mark
from sessions.models import Entity, Session
from tests.client.conftest import day_of
from tests.conftest import REPO_ROOT

live = pytest.mark.django_db(transaction=True)  # the live server sees committed rows only

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- search --------------------------------------------------------------------------------


@live
def test_search_prints_a_table_of_hits_with_the_expected_session(memory, capsys):
    code, out, err = run(capsys, "search", "JWT signature middleware")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["REL", "SESSION", "DATE", "AGENT", "WHERE"]
    top = lines[1].split()
    assert top[0].endswith("%") and 50 < int(top[0][:-1]) <= 100
    assert top[1:] == [memory["auth"], day_of(memory["auth"]), "architect", "assistant", "#1"]
    assert "JWT bearer tokens" in lines[2] and lines[2].startswith(" ")
    assert not ANSI.search(out), "no escape codes when stdout is not a terminal"
    assert "result(s), hybrid in" in err


@live
def test_search_marks_matched_words_in_bold_on_a_terminal(memory, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "search", "JWT signature middleware", "--limit", "1")
    assert code == 0
    marked = re.findall(re.escape(BOLD) + r"(.*?)" + re.escape(RESET), out)
    assert marked and {m.lower() for m in marked} <= {"jwt", "signature", "middleware"}

    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "search", "JWT signature middleware", "--limit", "1")
    assert BOLD not in out


@live
def test_search_json_is_the_servers_response(memory, capsys):
    code, out, _ = run(capsys, "search", "tokens", "--group", "--json")
    assert code == 0
    body = json.loads(out)
    assert body["query"] == "tokens" and body["mode"] == "hybrid"
    assert body["sessions"][0]["session"]["id"] == memory["auth"]


@live
def test_search_grouped_shows_one_row_per_session(memory, capsys):
    code, out, _ = run(capsys, "search", "JWT", "tokens", "--group")
    assert code == 0
    rows = [line for line in out.splitlines()[1:] if not line.startswith(" ")]
    ids = [row.split()[1] for row in rows]
    assert ids[0] == memory["auth"] and len(ids) == len(set(ids))
    assert "hit(s)" in rows[0]
    assert "    Auth fix" in out


@live
def test_search_filters_by_agent_workflow_and_mode(memory, capsys):
    _, out, _ = run(capsys, "search", "tokens", "--agent", "dev", "--json")
    assert {r["session"]["id"] for r in json.loads(out)["results"]} <= {memory["deploy"]}

    code, out, _ = run(
        capsys, "search", "make release", "--mode", "keyword", "--workflow", "release"
    )
    assert code == 0
    assert memory["deploy"] in out and memory["auth"] not in out

    code, out, err = run(capsys, "search", "risotto", "--agent", "architect", "--mode", "keyword")
    assert code == 0 and out == ""
    assert "no results" in err


@live
def test_search_by_entity_lists_the_sessions_that_touched_it(memory, project, capsys):
    Entity.objects.create(
        team=project.team,
        session=Session.objects.get(public_id=memory["auth"]),
        type="FILE",
        value="src/auth.py",
        normalized="src/auth.py",
    )
    code, out, err = run(capsys, "search", "--entity-type", "file", "--entity", "src/auth.py")
    assert code == 0, err
    rows = [line for line in out.splitlines()[1:] if not line.startswith(" ")]
    assert [row.split()[1] for row in rows] == [memory["auth"]]
    assert "4 msgs" in rows[0] and "Auth fix" in out


@pytest.mark.parametrize("argv", [["search"], ["search", "   "], ["context"], ["context", ""]])
def test_an_empty_query_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "give a QUERY" in capsys.readouterr().err


@live
def test_bad_input_gets_the_servers_message_and_a_failing_exit(memory, capsys):
    code, out, err = run(capsys, "search", "tokens", "--limit", "0")
    assert code == 1 and out == ""
    assert err.startswith("memoryapp: HTTP 400: limit: ")

    code, _, err = run(capsys, "search", "tokens", "--entity-type", "planet")
    assert code == 1 and "entity_type" in err

    code, _, err = run(capsys, "context", "auth", "--max-tokens", "5")
    assert code == 1 and "max_tokens" in err


@live
def test_an_unreachable_server_fails_clearly(agent_env, closed_port_url, no_backoff, capsys):
    code, _, err = run(capsys, "--url", closed_port_url, "search", "tokens")
    assert code == 1
    assert f"cannot reach memoryapp at {closed_port_url}" in err


@live
def test_without_a_token_it_says_how_to_make_one(live_server, monkeypatch, capsys):
    monkeypatch.delenv("MEMORYAPP_TOKEN", raising=False)
    code, _, err = run(capsys, "--url", live_server.url, "search", "tokens")
    assert code == 2 and "create_api_token" in err


# -- context and resume --------------------------------------------------------------------


@live
def test_context_prints_seed_000_markdown_and_the_token_count(memory, capsys):
    code, out, err = run(capsys, "context", "how did we handle authentication?")
    assert code == 0
    assert out.startswith("## Relevant Past Discussions\n\n### Session: ")
    assert f"### Session: {day_of(memory['auth'])} - Architect (Winston) - security" in out
    assert "\nRelevance: " in out and "JWT" in out
    tokens = int(re.search(r"memoryapp: (\d+) tokens of 4000", err).group(1))
    assert tokens > 0


@live
def test_context_options_reach_the_server(memory, capsys):
    code, out, _ = run(
        capsys, "context", "tokens", "--agent", "dev", "--min-relevance", "0", "--json"
    )
    assert code == 0
    body = json.loads(out)
    assert {s["session"]["id"] for s in body["sessions"]} == {memory["deploy"]}

    _, out, _ = run(capsys, "context", "authentication", "--max-tokens", "60", "--json")
    body = json.loads(out)
    assert body["max_tokens"] == 60 and body["tokens"] <= 60


@live
def test_context_prints_nothing_when_nothing_is_relevant(memory, capsys):
    code, out, err = run(
        capsys, "context", "quantum chromodynamics lattice gauge", "--min-relevance", "0.5"
    )
    assert code == 0
    assert out == ""
    assert "0 tokens" in err


@live
def test_resume_prints_the_sessions_last_messages(memory, capsys):
    code, out, err = run(capsys, "resume", memory["auth"], "--lastn", "2")
    assert code == 0
    assert out.startswith(f"## Resuming session {memory['auth']}: Auth fix")
    assert "Refresh tokens rotate" in out
    assert "keeps rejecting valid users" not in out
    assert "tokens" in err

    code, out, err = run(capsys, "resume", "2020-01-01-nobody-000000")
    assert code == 1 and out == ""
    assert "HTTP 404" in err


# -- the client's methods -----------------------------------------------------------------


@live
def test_client_search_context_resume_similar_and_entities(memory):
    client = MemoryClient()
    found = client.search("JWT signature", agent="architect", limit=2, mode="hybrid", group=None)
    assert found["results"][0]["session"]["id"] == memory["auth"]
    assert client.context("authentication", max_tokens=500)["markdown"].startswith(
        "## Relevant Past Discussions"
    )
    assert [m["seq"] for m in client.resume(memory["auth"], lastn=1)["messages"]] == [3]
    assert client.similar(memory["auth"], limit=2)["session"] == memory["auth"]
    assert client.entities(type="FILE") == {"entities": []}


@live
def test_client_raises_memory_error_with_the_servers_message(memory):
    client = MemoryClient()
    with pytest.raises(MemoryError) as caught:
        client.search("")
    assert caught.value.status == 400
    assert str(caught.value).startswith("HTTP 400: q: give a query")
    with pytest.raises(MemoryError, match="unknown parameter"):
        client.search("tokens", colour="blue")
    with pytest.raises(MemoryError) as caught:
        client.similar("2020-01-01-nobody-000000")
    assert caught.value.status == 404 and "No such session" in str(caught.value)
    with pytest.raises(MemoryError, match="give a session id"):
        client.resume(" ")


# -- without a server ----------------------------------------------------------------------


def test_mark_bolds_the_highlights_and_keeps_one_line():
    assert mark("a JWT\ntoken", [[2, 5]], bold=True) == f"a {BOLD}JWT{RESET} token"
    assert mark("a JWT\ntoken", [[2, 5]], bold=False) == "a JWT token"
    assert mark("abc", [[1, 9], [2, 1]], bold=True) == "abc"  # bad ranges are ignored


def test_format_results_wraps_snippets_under_their_row():
    session = {"id": "2025-01-15-architect-1a2b3c", "started_at": "2025-01-15T10:00:00Z"}
    session["agent_name"] = "architect"
    hit = {
        "session": session,
        "message": {"seq": 4, "role": "user"},
        "snippet": "word " * 40,
        "highlights": [],
        "relevance": 0.876,
    }
    text = format_results({"results": [hit]}, width=60)
    lines = text.splitlines()
    assert lines[1].split() == ["88%", session["id"], "2025-01-15", "architect", "user", "#4"]
    assert len(lines) > 3 and all(len(line) <= 60 for line in lines[2:])
    assert format_results({"results": []}) == ""


def test_a_hit_in_a_chat_of_people_says_who_said_it():
    session = {"id": "2026-11-29-whatsapp-8dd0a2", "started_at": "2026-11-29T10:00:00Z"}
    session["agent_name"] = "whatsapp"
    hit = {
        "session": session,
        "message": {"seq": 3, "role": "user", "author": "katherine_s"},
        "snippet": "No, I switched to three days a week.",
        "highlights": [],
        "relevance": 0.8,
    }
    tool = {**hit, "message": {"seq": 4, "role": "tool", "author": "search_flights"}}
    lines = format_results({"results": [hit, tool]}).splitlines()
    assert lines[1].split()[-3:] == ["user", "katherine_s", "#3"]
    assert lines[3].split()[-3:] == ["tool", "search_flights", "#4"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("search", ["--mode", "--limit", "--agent", "--workflow", "--project", "--entity-type"]),
        ("search", ["--entity", "--group", "--json", "examples:", "memoryapp search"]),
        ("context", ["--max-tokens", "--max-sessions", "--min-relevance", "--agent"]),
        ("context", ["--workflow", "examples:", "## Relevant Past Discussions"]),
        ("resume", ["--lastn", "examples:", "memoryapp resume 2025-01-15-architect-1a2b3c"]),
    ],
)
def test_each_command_has_help_with_examples(command, expected):
    result = subprocess.run(
        [sys.executable, "-m", "memoryapp_client.cli", command, "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for text in expected:
        assert text in result.stdout, text


def test_the_client_needs_only_the_standard_library():
    code = (
        "import sys, memoryapp_client, memoryapp_client.cli, memoryapp_client.hooks;"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'requests', 'sessions', 'search', 'teams'});"
        "print(loaded); sys.exit(1 if loaded else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
