"""Search, context, similar sessions, entities and aliases under per-session visibility
(docs/visibility.md), with the real model and real PostgreSQL: a teammate's private (or
summary) sessions are never found, never ranked and never counted, on every path, so the
teammate's results are exactly those of a team where the private sessions do not exist;
their owner finds them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from search import keyword, tuning
from search.service import SearchRequest, search
from search.speed import team_indexes
from sessions import visibility
from sessions.capture.service import capture_session
from sessions.filters import Filters
from sessions.forget.lifecycle import restore, soft_delete
from sessions.models import Session, SpeakerAlias
from teams.access import Access
from teams.models import ApiToken, Role, Visibility
from tests.clients import client_for
from tests.factories import EntityFactory, MembershipFactory
from tests.search.corpus import AUTH, COOKING, DEPLOY, embed_all
from tests.search.test_service import approximate_path
from tests.sessions.enrich.test_aliases import enrich
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

SECRET = "zanzibar"
# Alice's own sessions say what the team's say, and more: were they ranked or counted for
# Bob, they would take his top places and move his words' weights.
PRIVATE_AUTH = [
    ("user", f"The JWT bearer tokens signed with RS256 leak into the {SECRET} staging logs 🚀"),
    (
        "assistant",
        f"Rotate the RS256 key that signs the JWT bearer tokens of {SECRET}, then scrub the "
        "logs; the middleware in src/auth.py verifies the signature.",
    ),
]
PRIVATE_DEPLOY = [
    ("user", f"The {SECRET} release to production failed: kubernetes rolled back."),
    ("assistant", "Push the Docker image to the registry again and roll the deployment."),
]
SUMMARY_ONLY = [
    ("user", f"Draft the {SECRET} pricing for the customer, do not share the numbers."),
    ("assistant", "Kubernetes hosting at cost plus twenty percent, JWT tokens included."),
]
QUERIES = ("JWT bearer tokens signed with RS256", "kubernetes registry release to production")


def capture(project, messages, owner=None, seen: str = Visibility.TEAM) -> Session:
    """A session of ``(role, text)`` messages, ``owner``'s (None: the team's), ``seen``."""
    return captured(project, [ParsedMessage(role=r, content=t) for r, t in messages], owner, seen)


def chat(project, lines, owner=None, seen: str = Visibility.TEAM) -> Session:
    """A session of ``(author, text)`` user messages, enriched (its aliases learned)."""
    messages = [ParsedMessage(role="user", author=a, content=t) for a, t in lines]
    session = captured(project, messages, owner, seen, agent="chat")
    enrich(session)
    return session


def captured(project, messages, owner, seen, agent="architect") -> Session:
    parsed = ParsedSession(
        source_format="api", agent_name=agent, started_at=timezone.now(), messages=messages
    )
    owner_id = owner.pk if owner is not None else None
    return capture_session(project, parsed, visibility.Ownership(owner_id, seen)).session


def person(user, project) -> Access:
    """What ``user``, signed in, sees of ``project``'s team."""
    roles = {project.team_id: user.memberships.get(team=project.team).role}
    return Access(team_ids=(project.team_id,), roles=roles, user=user, person_id=user.pk)


@pytest.fixture
def alice(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user  # owns the private sessions


@pytest.fixture
def bob(team):
    return MembershipFactory(team=team, role=Role.MEMBER).user  # her teammate


@pytest.fixture
def carol(team):
    return MembershipFactory(team=team, role=Role.ADMIN).user  # the team's admin


@pytest.fixture
def world(project, alice):
    """The team's sessions (one with a symbol), and Alice's private and summary ones."""
    sessions = {
        "auth": capture(project, [*AUTH, ("user", "Shipped it 🚀")]),
        "deploy": capture(project, DEPLOY),
        "cooking": capture(project, COOKING),
        "private_auth": capture(project, PRIVATE_AUTH, alice, Visibility.PRIVATE),
        "private_deploy": capture(project, PRIVATE_DEPLOY, alice, Visibility.PRIVATE),
        "summary": capture(project, SUMMARY_ONLY, alice, Visibility.SUMMARY),
    }
    embed_all()
    return sessions


@pytest.fixture(autouse=True)
def fresh_caches():
    keyword._documents_cache.clear()
    team_indexes.forget()
    yield
    keyword._documents_cache.clear()
    team_indexes.forget()


def unreadable_by_bob(world) -> set[int]:
    return {world[k].pk for k in ("private_auth", "private_deploy", "summary")}


def found(access, query, limit=20, **options) -> tuple[str, list[tuple[int, float]]]:
    """The vector path, and each hit's message and relevance, best first."""
    result = search(access, SearchRequest(query, limit=limit, **options))
    return result.vector_path, [(h.message.pk, h.relevance) for h in result.hits]


PATHS = {
    # name: (search options, how to force it)
    "exact": ({"mode": "hybrid"}, None),
    "quantized": ({"mode": "semantic"}, "quantized"),
    "hnsw": ({"mode": "semantic"}, "hnsw"),
    "team-hnsw": ({"mode": "semantic"}, "team-hnsw"),
    "keyword": ({"mode": "keyword"}, None),
    "keyword-pooled": ({"mode": "keyword"}, "pooled"),
}


def force(path: str | None, monkeypatch) -> None:
    if path == "pooled":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE agent_sessions_message")
        keyword._stats_cache["at"] = float("-inf")
        monkeypatch.setattr(keyword, "EXACT_STATS_MAX_DOCS", 0)  # every scope is "large"
    elif path is not None:
        approximate_path(monkeypatch, path)


@pytest.mark.parametrize("path", list(PATHS))
def test_a_teammates_results_are_those_of_a_team_without_the_private_sessions(
    project, world, alice, bob, monkeypatch, path
):
    options, forced = PATHS[path]
    force(forced, monkeypatch)
    hidden = unreadable_by_bob(world)
    before = {}
    for query in (*QUERIES, SECRET, "🚀"):
        # The owner searches first: whatever she warms (the scope's size) must not serve Bob.
        _, hers = found(person(alice, project), query, **options)
        if query == SECRET:
            assert {world["private_auth"].pk, world["private_deploy"].pk} <= {
                Session.objects.get(messages__pk=m).pk for m, _ in hers
            }
        before[query] = found(person(bob, project), query, **options)
        ids = {m for m, _ in before[query][1]}
        assert not Session.objects.filter(messages__pk__in=ids, pk__in=hidden).exists()
    if path != "keyword-pooled":
        vector_path = before[QUERIES[0]][0]
        assert vector_path == ("none" if options["mode"] == "keyword" else path)
    assert before[QUERIES[0]][1], "the team's own sessions are found"
    assert before[SECRET][1] == [] or options["mode"] != "keyword"

    Session.objects.filter(pk__in=hidden).delete()
    keyword._documents_cache.clear()
    team_indexes.forget()
    for query, (vector_path, hits) in before.items():
        again_path, again = found(person(bob, project), query, **options)
        assert again == hits, (query, path)  # same messages, same order, same relevance
        assert again_path == vector_path


def test_the_cached_scope_size_is_the_callers(project, world, alice, bob):
    """The keyword side's cache of a scope's size (its IDFs, the vector path) is keyed by
    the person too: the owner's count, cached first, is never the teammate's."""
    filters = Filters(exclude_archived=True)
    hers = keyword.scope_documents(person(alice, project), filters)
    his = keyword.scope_documents(person(bob, project), filters)
    team_messages = sum(world[k].message_count for k in ("auth", "deploy", "cooking"))
    assert his == team_messages
    alices = sum(world[k].message_count for k in ("private_auth", "private_deploy", "summary"))
    assert hers == team_messages + alices
    team_token = Access(team_ids=(project.team_id,))
    assert keyword.scope_documents(team_token, filters) == team_messages


def test_an_admin_and_a_team_token_search_the_team_only_a_persons_token_finds_theirs(
    project, world, alice, carol
):
    def sessions_found(client) -> set[str]:
        response = client.get("/api/v1/search", {"q": SECRET, "limit": 50})
        assert response.status_code == 200, response.content
        return {r["session"]["id"] for r in response.json()["results"]}

    private = {world["private_auth"].public_id, world["private_deploy"].public_id}
    hidden = private | {world["summary"].public_id}
    assert sessions_found(client_for(carol)).isdisjoint(hidden)
    _, team_token = ApiToken.issue(project)
    assert sessions_found(client_for(token=team_token)).isdisjoint(hidden)
    _, hers = ApiToken.issue(project, person=alice)
    assert private <= sessions_found(client_for(token=hers))
    assert private <= sessions_found(client_for(alice))


def test_entity_search_lists_only_sessions_whose_messages_the_caller_reads(
    project, world, alice, bob
):
    for key in ("auth", "private_auth", "summary"):
        EntityFactory(session=world[key], value="src/auth.py")
    query = {"entity": "src/auth.py", "entity_type": "FILE"}

    def listed(user) -> set[str]:
        response = client_for(user).get("/api/v1/search", query)
        assert response.status_code == 200, response.content
        return {s["session"]["id"] for s in response.json()["sessions"]}

    assert listed(bob) == {world["auth"].public_id}
    assert listed(alice) == {world[k].public_id for k in ("auth", "private_auth", "summary")}


def test_context_never_shows_a_teammates_private_session(project, world, alice, bob):
    Session.objects.filter(pk=world["private_auth"].pk).update(
        summary=f"The {SECRET} keys leaked.", title=f"{SECRET} keys"
    )
    Session.objects.filter(pk=world["summary"].pk).update(summary=f"{SECRET} pricing drafted.")
    for query in (SECRET, QUERIES[0], ""):
        body = {"query": query, "min_relevance": 0, "max_sessions": 10}
        his = client_for(bob).post("/api/v1/context", body, format="json")
        assert his.status_code == 200, his.content
        assert SECRET not in his.json()["markdown"].lower(), query
        shown = {b["session"]["id"] for b in his.json()["sessions"]}
        assert shown.isdisjoint({world[k].public_id for k in unreadable_by_bob_keys()})
    hers = client_for(alice).post(
        "/api/v1/context", {"query": SECRET, "min_relevance": 0}, format="json"
    )
    assert SECRET in hers.json()["markdown"].lower()


def unreadable_by_bob_keys() -> tuple[str, ...]:
    return ("private_auth", "private_deploy", "summary")


def with_session_vectors() -> None:
    """Every session's vector, as enrichment gives it (here: the mean of its chunks)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_sessions_session s SET embedding = (SELECT avg(c.embedding)"
            " FROM agent_sessions_messagechunk c WHERE c.session_id = s.id)"
        )


def test_similar_sessions_suggest_summaries_the_caller_reads_never_a_private_one(
    project, world, alice, bob, carol
):
    with_session_vectors()

    def similar(user, key):
        return client_for(user).get(f"/api/v1/sessions/{world[key].public_id}/similar?limit=50")

    response = similar(bob, "auth")
    assert response.status_code == 200, response.content
    suggested = {s["session"]["id"] for s in response.json()["similar"]}
    assert world["summary"].public_id in suggested  # its summary is the team's to read
    assert suggested.isdisjoint(
        {world["private_auth"].public_id, world["private_deploy"].public_id}
    )
    hers = {s["session"]["id"] for s in similar(alice, "auth").json()["similar"]}
    assert world["private_auth"].public_id in hers
    assert similar(bob, "private_auth").status_code == 404
    assert similar(carol, "private_auth").status_code == 404  # listed, not read
    assert similar(bob, "summary").status_code == 200


def test_resume_shows_a_summary_sessions_messages_only_to_those_who_read_them(
    project, world, alice, bob
):
    url = f"/api/v1/sessions/{world['summary'].public_id}/resume"
    his = client_for(bob).get(url)
    assert his.status_code == 200, his.content
    assert his.json()["messages"] == []
    answer = "cost plus twenty percent"  # (the first message made its title: his to read)
    assert answer not in his.json()["markdown"]
    hers = client_for(alice).get(url).json()
    assert len(hers["messages"]) == 2 and answer in hers["markdown"]
    private = f"/api/v1/sessions/{world['private_auth'].public_id}/resume"
    assert client_for(bob).get(private).status_code == 404


def test_entities_of_a_private_session_are_its_owners_only(project, world, alice, bob, carol):
    EntityFactory(session=world["auth"], value="src/auth.py")
    EntityFactory(session=world["private_auth"], value=f"src/{SECRET}_keys.py")
    EntityFactory(session=world["summary"], value=f"src/{SECRET}_pricing.py")

    def values(user) -> set[str]:
        response = client_for(user).get("/api/v1/entities")
        assert response.status_code == 200, response.content
        return {e["normalized"] for e in response.json()["entities"]}

    assert values(bob) == values(carol) == {"src/auth.py"}
    assert values(alice) == {"src/auth.py", f"src/{SECRET}_keys.py", f"src/{SECRET}_pricing.py"}


FRIENDS = [
    ("mara.k", "Hey Dom! Did you get the keys for the lab?"),
    ("dsilva", "Morning Mara, I did, they were at the desk."),
    ("mara.k", "Great, thanks for picking them up."),
    ("dsilva", "Mara, are you coming on Friday?"),
    ("mara.k", "Yes, see you there, Dom!"),
]


def learned_names(project) -> set[str]:
    return set(SpeakerAlias.objects.filter(project=project).values_list("alias_key", flat=True))


def test_aliases_are_learned_only_from_sessions_the_whole_team_reads(project, alice, bob):
    session = chat(project, FRIENDS, alice, Visibility.PRIVATE)
    assert learned_names(project).isdisjoint({"mara", "dom"})  # said in private: withheld
    listed = client_for(bob).get("/api/v1/aliases").json()
    assert listed["results"] == []

    soft_delete(session)
    restore(session)
    assert learned_names(project).isdisjoint({"mara", "dom"})  # restoring gives nothing

    visibility.change(person(alice, project), [session], Visibility.TEAM)
    assert {"mara", "dom"} <= learned_names(project)  # the team reads it now: shared
    evidence = dict(
        SpeakerAlias.objects.filter(project=project).values_list("alias_key", "evidence")
    )

    visibility.change(person(alice, project), [session], Visibility.SUMMARY)
    assert learned_names(project).isdisjoint({"mara", "dom"})
    visibility.change(person(alice, project), [session], Visibility.PRIVATE)  # no double take
    visibility.change(person(alice, project), [session], Visibility.TEAM)
    again = dict(SpeakerAlias.objects.filter(project=project).values_list("alias_key", "evidence"))
    assert again == evidence  # given back exactly once


def test_an_alias_said_in_a_private_session_does_not_change_a_teammates_search(project, alice, bob):
    venue = "The venue for the offsite is booked: the old mill by the river."
    chat(project, [("lee.w", "Any news on the offsite?"), ("mara.k", venue)])
    chat(project, [("lee.w", "And the offsite venue?"), ("dsilva", "Not booked yet.")])
    private = chat(project, FRIENDS, alice, Visibility.PRIVATE)
    embed_all()
    question = "Where did Mara book the venue for the offsite?"
    with_private = found(person(bob, project), question)
    assert with_private[1]
    Session.objects.filter(pk=private.pk).delete()
    keyword._documents_cache.clear()
    assert found(person(bob, project), question) == with_private


# A teammate's scope that is a small share of the team is not sent to the team's graph.
NEAR_COPY_PATHS = {"hnsw": "hnsw", "team-hnsw": "quantized"}


@pytest.mark.parametrize("path", list(NEAR_COPY_PATHS))
def test_private_near_copies_around_the_query_never_leave_a_teammate_short(
    project, alice, bob, monkeypatch, path
):
    """The graph paths fetch the nearest chunks of the whole team, then keep what the
    caller reads: when a teammate's private sessions hold every one of them, the page is
    filled from what the caller reads (the fallback), as many hits as without them."""
    ours = [capture(project, [(role, text)]) for role, text in (*DEPLOY, *AUTH)]
    for i in range(16):
        note = f"Deploying the release to production, take {i}: shipped to production."
        capture(project, [("user", note)] * 10, alice, Visibility.PRIVATE)
    embed_all()
    question = "deploying the release to production"
    approximate_path(monkeypatch, path)
    # A pool of 15 messages: the graph is asked for 90 chunks, all of them Alice's.
    monkeypatch.setattr(tuning, "MIN_POOL", 1)
    vector_path, his = found(person(bob, project), question, limit=3, mode="semantic")
    assert vector_path == NEAR_COPY_PATHS[path]
    readable = {m for s in ours for m in s.messages.values_list("pk", flat=True)}
    assert len(his) == 3 and {m for m, _ in his} <= readable
    monkeypatch.setattr(tuning, "EXACT_SCAN_MAX_CHUNKS", 10**9)
    _, exact = found(person(bob, project), question, limit=3, mode="semantic")
    assert his == exact
