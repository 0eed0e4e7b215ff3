"""The isolation campaign (issue 38, point 5): every endpoint of the API, every page and every
MCP tool, called by each kind of caller (the sessions' owner, by person and by token; an admin,
a member and a viewer of the team; a team token; a token acting for a teammate; another team's
person and token) on sessions of each visibility (private, summary, team), and what each may
see of them:

- what a caller may not read of a session is a 404 identical to a session that never existed
  (never a 403, never an empty 200 that tells it exists);
- what it may read, it reads at its level: an admin lists a teammate's private session
  ('listed': title, owner, dates, size) but reads none of it; the team reads a 'summary'
  session's title, summary, topics and accepted memories, not its messages;
- no answer (JSON, page, export, archive, tool result) holds a word of a session beyond what
  the caller reads of it (tests/isolation/world.py says which word lives where);
- for a caller that may not read a private session, every list, search, context, count and
  page is the same as in a world where that session never existed.

The endpoints come from the OpenAPI schema, the pages from the URL map and the tools from the
MCP server: one that the tables below do not place fails ``test_the_campaign_covers_…``, so a
new endpoint is not silently left out.

The world (tests/isolation/world.py) is built once for the module, committed, and flushed
after it; each test runs in a transaction rolled back after it, so the writes it tries and
the world without the private session it makes for comparison leave nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.core.management import call_command

from tests.isolation import checks
from tests.isolation.checks import (
    CALLERS,
    COMPARED,
    PEOPLE,
    TOKENS,
    assert_no_leak,
    first_difference,
    leaks,
    name,
    reads,
    remove_private_session,
    stable,
    text_of,
)
from tests.isolation.world import OWNER_NAME, VISIBILITIES, Reading, World, build_world

pytestmark = pytest.mark.django_db

NONE, LISTED, SUMMARY, CONTENT = Reading.NONE, Reading.LISTED, Reading.SUMMARY, Reading.CONTENT
VIS = tuple(str(v) for v in VISIBILITIES)
FAKE_SESSION = "2020-01-01-architect-0f0f0f"
FAKE_MEMORY = "DEC-999"
ORDER = ("private", "summary", "team")  # from least to most visible


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> World:
    with django_db_blocker.unblock():
        try:
            yield build_world()
        finally:
            # As a transactional test ends: nothing of the world is left for the next tests.
            call_command("flush", interactive=False, verbosity=0)


# --- the API's endpoints --------------------------------------------------------------------


@dataclass(frozen=True)
class SessionCall:
    """A request about one session. Below ``may`` the caller must get the 404 of a session
    that does not exist; from ``needs`` on it must be answered (``ok``); between the two,
    either, as long as the answer shows nothing beyond what it reads."""

    needs: int
    may: int | None = None
    body: Callable | None = None  # (session, the id asked for) -> JSON body
    query: str = ""
    ok: tuple[int, ...] = (200,)  # answered: one of these (writes: any but 404 and 5xx)

    @property
    def lowest(self) -> int:
        return self.needs if self.may is None else self.may


WRITE = ()  # an answered write: anything but a 404 or a 5xx (a viewer's 403, a 409 of state)
S = "/api/v1/sessions/{id}"
SESSION_API: dict[str, SessionCall] = {
    f"GET {S}": SessionCall(LISTED),
    # Asked to make it as visible as can be: only its owner may (tested below: nobody else
    # ever makes a session more visible).
    f"PATCH {S}": SessionCall(LISTED, body=lambda s, i: {"visibility": "team"}, ok=WRITE),
    "POST /api/v1/sessions/visibility": SessionCall(
        LISTED, body=lambda s, i: {"ids": [i], "visibility": "team"}, ok=WRITE
    ),
    f"DELETE {S}": SessionCall(LISTED, query="reason=campaign", ok=WRITE),
    f"POST {S}/restore": SessionCall(LISTED, ok=WRITE),
    f"GET {S}/size": SessionCall(LISTED),
    f"GET {S}/similar": SessionCall(CONTENT, may=SUMMARY),
    f"GET {S}/resume": SessionCall(CONTENT, may=SUMMARY),
    f"GET {S}/messages": SessionCall(CONTENT),
    f"POST {S}/messages": SessionCall(
        CONTENT, body=lambda s, i: {"messages": [{"role": "user", "content": "more"}]}, ok=WRITE
    ),
    f"PATCH {S}/messages/{{seq}}": SessionCall(
        CONTENT, body=lambda s, i: {"pinned": True}, ok=WRITE
    ),
    f"DELETE {S}/messages/{{seq}}": SessionCall(CONTENT, query="reason=campaign", ok=WRITE),
    f"GET {S}/export": SessionCall(CONTENT, ok=(200, 403)),  # (a viewer may not export)
    f"POST {S}/anonymize": SessionCall(
        CONTENT, may=LISTED, body=lambda s, i: {"dry_run": True}, ok=WRITE
    ),
    f"POST {S}/compact": SessionCall(
        CONTENT, may=LISTED, body=lambda s, i: {"dry_run": True}, ok=WRITE
    ),
}

M = "/api/v1/memories/{id}"
MEMORY_BODIES = {
    f"PATCH {M}": {"pinned": True},
    f"POST {M}/links": {"kind": "relates_to", "target": "placeholder"},
    f"POST {M}/resolve": {},
    f"POST {M}/revert": {"reason": "campaign"},
    f"POST {M}/reject": {"reason": "campaign"},
    f"POST {M}/accept": {},
    f"POST {M}/visibility": {"visibility": "team"},
}
# Requests about one memory: a memory the caller may not read is a 404 (as one that does not
# exist); one it reads is answered (GET: 200; the rest: anything but a 404 or a 5xx).
MEMORY_API = {
    f"GET {M}": "",
    f"PATCH {M}": "",
    f"DELETE {M}": "reason=campaign",
    f"GET {M}/related": "",
    f"POST {M}/accept": "",
    f"POST {M}/confirm": "",
    f"POST {M}/links": "",
    f"DELETE {M}/links": "kind=relates_to&target=DEC-999",
    f"POST {M}/reject": "",
    f"POST {M}/reopen": "",
    f"POST {M}/resolve": "",
    f"POST {M}/restore": "",
    f"POST {M}/revert": "",
    f"POST {M}/unreject": "",
    "POST /api/v1/memories/review": "",  # the ids in its body
    f"POST {M}/visibility": "",
}


@dataclass(frozen=True)
class ListCall:
    """A request of a list, search, aggregate or export: it shows only what the caller
    reads, and, for a caller that may not read the private session, exactly what it shows
    without that session."""

    path: str
    params: dict = field(default_factory=dict)
    body: dict | None = None  # POST
    ok: tuple[int, ...] = (200, 403)  # (403: the caller's role may not; it tells nothing)


def q(**params):
    return params


PROJECT = "<the caller's project>"  # said as 'team/project' when the request is made


LIST_API: dict[str, list[ListCall]] = {
    "GET /api/v1/sessions": [ListCall("/api/v1/sessions", q(limit=50))],
    "GET /api/v1/search": [
        ListCall("/api/v1/search", q(q="zebracorn", mode=mode, limit=20))
        for mode in ("keyword", "semantic", "hybrid")
    ]
    + [ListCall("/api/v1/search", q(q="zebracorn pool connections", group="true"))],
    "POST /api/v1/search": [ListCall("/api/v1/search", body={"q": "zebracorn", "limit": 20})],
    "GET /api/v1/context": [
        ListCall("/api/v1/context", q(query="zebracorn")),
        ListCall("/api/v1/context", q(person=OWNER_NAME)),
    ],
    "POST /api/v1/context": [
        ListCall("/api/v1/context", body={"query": "zebracorn pool", "max_sessions": 10})
    ],
    "GET /api/v1/entities": [
        ListCall("/api/v1/entities"),
        ListCall("/api/v1/entities", q(q="zebracorn")),
    ],
    "GET /api/v1/aliases": [ListCall("/api/v1/aliases")],
    "GET /api/v1/memories": [
        ListCall("/api/v1/memories", q(limit=100)),
        ListCall("/api/v1/memories", q(q="zebracorn pool", limit=100)),
        ListCall("/api/v1/memories", q(status="proposed", limit=100)),
        ListCall("/api/v1/memories", q(person=OWNER_NAME, limit=100)),
    ],
    "GET /api/v1/memories/timeline": [ListCall("/api/v1/memories/timeline")],
    "GET /api/v1/memories/topics": [ListCall("/api/v1/memories/topics")],
    "GET /api/v1/memories/trash": [ListCall("/api/v1/memories/trash")],
    "GET /api/v1/memories/export": [
        ListCall("/api/v1/memories/export"),
        ListCall("/api/v1/memories/export", q(format="yaml")),
    ],
    "POST /api/v1/memories/delete": [
        ListCall("/api/v1/memories/delete", body={"reason": "campaign", "all": True})
    ],
    "POST /api/v1/sessions/delete": [
        ListCall("/api/v1/sessions/delete", body={"reason": "campaign", "all": True})
    ],
    "GET /api/v1/diary": [
        ListCall("/api/v1/diary"),
        ListCall("/api/v1/diary", q(q="zebracorn pool")),
        ListCall("/api/v1/diary", q(person=OWNER_NAME)),
    ],
    "GET /api/v1/diary/export": [ListCall("/api/v1/diary/export", ok=(200, 403, 404))],
    "GET /api/v1/people/{person}/recent": [
        ListCall(f"/api/v1/people/{OWNER_NAME}/recent", ok=(200, 403, 404))
    ],
    "GET /api/v1/agent-states/{agent}": [
        ListCall("/api/v1/agent-states/architect", ok=(200, 403, 404))
    ],
    "GET /api/v1/deletions": [ListCall("/api/v1/deletions")],
    "GET /api/v1/retention": [ListCall("/api/v1/retention", q(days=1, project=PROJECT))],
    "GET /api/v1/pipeline": [ListCall("/api/v1/pipeline")],
}

# Endpoints that read or change no existing session, memory or diary of anyone else: they
# make new things (captured as the caller's own), or are about a job or token of the caller.
EXEMPT_API = {
    "POST /api/v1/sessions": "captures a new session of the caller's own",
    "POST /api/v1/import": "captures new sessions of the caller's own",
    "POST /api/v1/events": "captures new sessions of the caller's own",
    "POST /api/v1/memories": "records a new memory (its session reference: MEMORY_SESSION_REF)",
    "POST /api/v1/memories/import": "imports memory files into the caller's project",
    "PUT /api/v1/agent-states/{agent}": "writes the agent's own state",
    "POST /api/v1/anonymize": "anonymises a project; admins only, as a job",
    "GET /api/v1/anonymize/{job}": "a job of the caller's own",
    "GET /api/schema/": "the OpenAPI schema",
    "GET /api/docs/": "the API's documentation page",
}


def schema_operations() -> set[str]:
    """Every operation of the API, as the OpenAPI schema's generator finds them in the URL
    map (drf-spectacular's enumerator: what ``manage.py spectacular`` documents, and also an
    endpoint left out of the schema)."""
    from drf_spectacular.generators import EndpointEnumerator

    return {
        f"{method} {path}"
        for path, _regex, method, _view in EndpointEnumerator().get_api_endpoints()
        if method in ("GET", "POST", "PUT", "PATCH", "DELETE")
    }


def test_the_campaign_covers_every_api_endpoint():
    placed = set(SESSION_API) | set(MEMORY_API) | set(LIST_API) | set(EXEMPT_API)
    operations = schema_operations()
    missing = sorted(operations - placed)
    assert not missing, (
        "endpoints the isolation campaign does not try (place each in SESSION_API, "
        "MEMORY_API, LIST_API or EXEMPT_API of tests/isolation/test_visibility_campaign.py): "
        + ", ".join(missing)
    )
    # Every endpoint with a session id is tried as a session endpoint.
    about_a_session = {op for op in operations if "/sessions/{id}" in op}
    assert about_a_session <= set(SESSION_API), sorted(about_a_session - set(SESSION_API))
    gone = sorted((set(SESSION_API) | set(MEMORY_API) | set(LIST_API)) - operations)
    assert not gone, f"the campaign tries endpoints the schema no longer has: {gone}"


def request(client, method: str, url: str, body=None):
    call = getattr(client, method.lower())
    if body is None:
        return call(url)
    return call(url, body, format="json")


def session_url(template: str, public_id: str, query: str = "") -> str:
    path = template.split(" ", 1)[1].replace("{id}", public_id).replace("{seq}", "0")
    return path + (f"?{query}" if query else "")


@dataclass(frozen=True)
class Answer:
    status_code: int
    content: bytes

    def get(self, header, default=""):
        return default


_NONEXISTENT: dict[tuple, Answer] = {}


def nonexistent(caller: str, key: tuple, make: Callable) -> Answer:
    """The answer to ``caller`` about an id that does not exist (the same for every
    visibility: asked once per caller and request)."""
    if (caller, *key) not in _NONEXISTENT:
        response = make()
        _NONEXISTENT[(caller, *key)] = Answer(response.status_code, response.content)
    return _NONEXISTENT[(caller, *key)]


def assert_same_as_nonexistent(world, caller, where, response, fake_response, real_id, fake_id):
    """An answer that tells nothing: the same status and body as for an id that does not
    exist (a 404; or the refusal every id gets, such as a token's missing permission)."""
    assert response.status_code == fake_response.status_code, (
        f"{caller} on {where}: {response.status_code} where a session or memory it may not "
        f"read must be answered as one that does not exist ({fake_response.status_code}): "
        f"{response.content[:300]!r}"
    )
    said = response.content.decode("utf-8", "replace").replace(real_id, "<id>")
    fake = fake_response.content.decode("utf-8", "replace").replace(fake_id, "<id>")
    assert said == fake, (
        f"{caller} on {where}: the 404 differs from a nonexistent one's: {said[:300]!r} "
        f"vs {fake[:300]!r}"
    )


def session_case_tried(caller: str, visibility: str, endpoint: str) -> bool:
    """The matrix, less what repeats a case it holds (to stay fast): another team's callers
    read none of team A's sessions whatever their visibility, so the summary one adds
    nothing to the private one; the owner's token writes as the owner does (its reads are
    all tried)."""
    if caller.startswith("outsider") and visibility == "summary":
        return False
    return not (caller == "owner_token" and not endpoint.startswith("GET "))


SESSION_CASES = [
    pytest.param(caller, visibility, endpoint, id=f"{caller}-{visibility}-{endpoint}")
    for caller in CALLERS
    for visibility in VIS
    for endpoint in SESSION_API
    if session_case_tried(caller, visibility, endpoint)
]


@pytest.mark.parametrize(("caller", "visibility", "endpoint"), SESSION_CASES)
def test_session_endpoint(world, caller, visibility, endpoint):
    call = SESSION_API[endpoint]
    session = world.sessions[visibility]
    reading = reads(caller, visibility)
    client = world.callers[caller].api()
    method = endpoint.split(" ", 1)[0]

    def body(public_id):
        return call.body(session, public_id) if call.body else None

    where = f"{endpoint} of the {visibility} session ({name(reading)})"
    url = session_url(endpoint, session.public_id, call.query)
    response = request(client, method, url, body(session.public_id))
    assert_not_more_visible(world, caller, visibility, where)
    assert response.status_code < 500, f"{caller} on {where}: {response.status_code}"
    if reading < call.lowest:
        fake = nonexistent(
            caller,
            ("api", endpoint),
            lambda: request(
                client, method, session_url(endpoint, FAKE_SESSION, call.query), body(FAKE_SESSION)
            ),
        )
        assert_same_as_nonexistent(
            world, caller, where, response, fake, session.public_id, FAKE_SESSION
        )
        return
    assert_no_leak(world, caller, where, text_of(response))
    if reading >= call.needs:
        if call.ok:
            assert response.status_code in call.ok, (
                f"{caller} on {where}: {response.status_code}, not {call.ok}: "
                f"{response.content[:300]!r}"
            )
        else:
            assert response.status_code != 404, f"{caller} on {where}: 404 for what it reads"
    if endpoint == f"GET {S}" and response.status_code == 200:
        data = response.json()
        assert (data["reading"], data["owner"], data["visibility"]) == (
            name(reading),
            OWNER_NAME,
            visibility,
        ), f"{caller} on {where}: {data}"
        if reading == LISTED:
            assert (data["summary"], data["topics"]) == ("", []), f"{caller} on {where}: {data}"
    if endpoint == f"DELETE {S}" and caller == "admin":
        assert response.status_code == 204, (
            f"an admin may delete any session of the team ({visibility}): "
            f"{response.status_code} {response.content[:300]!r}"
        )


def assert_not_more_visible(world, caller: str, visibility: str, where: str) -> None:
    """Nobody but its owner makes a session more visible than its owner chose."""
    from sessions.models import Session

    if caller in ("owner", "owner_token"):
        return
    now = Session.objects.filter(pk=world.sessions[visibility].pk).values_list(
        "visibility", flat=True
    )
    assert all(ORDER.index(v) <= ORDER.index(visibility) for v in now), (
        f"{caller} on {where} made the {visibility} session {now[0]}"
    )


def memory_readable(caller: str, tag: str, kind: str) -> bool:
    """An accepted memory is read with its session's summary; a proposed one with its
    messages."""
    return reads(caller, tag) >= (SUMMARY if kind == "memory" else CONTENT)


def memory_of(world: World, tag: str, kind: str):
    word = f"zebracorn-{tag}-{kind}"
    found = [m for m in world.memories[tag] if word in m.content]
    assert found, f"the world has no memory with {word!r}: {world.memories[tag]}"
    return found[0]


MEMORY_CASES = [
    pytest.param(caller, visibility, kind, id=f"{caller}-{visibility}-{kind}")
    for caller in CALLERS
    for visibility in VIS
    for kind in ("memory", "proposal")
]


# Of a memory the caller reads, these are tried (for the words of their answers); of one it
# may not read, every request of MEMORY_API (each must be the 404 of a nonexistent memory).
READ_MEMORY = (f"GET {M}", f"GET {M}/related")


def memory_writes_tried(caller: str, visibility: str, kind: str) -> bool:
    """Whether every request of MEMORY_API is tried, or only READ_MEMORY: every request where
    the caller may not read the memory, for each rule that hides one (a private session's
    memory; a summary session's proposal; another team's memory); the reads elsewhere."""
    if memory_readable(caller, visibility, kind):
        return False
    if caller.startswith("outsider"):
        return (visibility, kind) == ("team", "memory")
    return (visibility, kind) in (("private", "memory"), ("summary", "proposal"))


@pytest.mark.parametrize(("caller", "visibility", "kind"), MEMORY_CASES)
def test_memory_endpoints(world, caller, visibility, kind):
    """Each request about the session's accepted memory (``memory``) or proposal, in turn
    (each in a savepoint rolled back after it)."""
    from django.db import transaction

    from memories.models import Memory

    memory = memory_of(world, visibility, kind)
    readable = memory_readable(caller, visibility, kind)
    client = world.callers[caller].api()
    # People name the project; a token is of its own.
    project = world.project_ref if world.callers[caller].is_person else ""
    failures = []
    every_request = memory_writes_tried(caller, visibility, kind)
    for endpoint, query in MEMORY_API.items():
        if endpoint not in READ_MEMORY and not every_request:
            continue
        method, template = endpoint.split(" ", 1)
        where = f"{endpoint} of the {visibility} session's {kind} {memory.public_id}"

        def url(public_id, template=template, query=query):
            path = template.replace("{id}", public_id)
            in_project = f"project={project}" if project else ""
            return f"{path}?{'&'.join(filter(None, [query, in_project]))}"

        def body(public_id, endpoint=endpoint, method=method):
            if endpoint.endswith("/review"):
                asked = {"reject": [public_id], "reason": "campaign"}
                return {**asked, "project": project} if project else asked
            found = MEMORY_BODIES.get(endpoint)
            if found and "target" in found:  # a memory every teammate reads
                return {**found, "target": memory_of(world, "team", "memory").public_id}
            return found if found is not None or method == "GET" else {}

        def ask(public_id, method=method, url=url, body=body, where=where):
            with transaction.atomic():
                response = request(client, method, url(public_id), body(public_id))
                if public_id == memory.public_id and caller not in ("owner", "owner_token"):
                    now = Memory.objects.get(pk=memory.pk).visibility
                    assert ORDER.index(now) <= ORDER.index(memory.visibility), (
                        f"{caller} on {where} made the memory {now} ({memory.visibility} before)"
                    )
                transaction.set_rollback(True)
            return response

        try:
            response = ask(memory.public_id)
            assert response.status_code < 500, f"{caller} on {where}: {response.status_code}"
            if not readable:
                fake = nonexistent(caller, ("memory", endpoint), lambda ask=ask: ask(FAKE_MEMORY))
                assert_same_as_nonexistent(
                    world, caller, where, response, fake, memory.public_id, FAKE_MEMORY
                )
                continue
            assert_no_leak(world, caller, where, text_of(response))
            expected = (200,) if method == "GET" else tuple(range(200, 500))
            assert response.status_code in expected and response.status_code != 404, (
                f"{caller} on {where}: {response.status_code} for a memory it reads: "
                f"{response.content[:300]!r}"
            )
        except AssertionError as failure:
            failures.append(str(failure).split("\nassert")[0])
    assert not failures, "\n".join(failures)


LIST_CASES = [
    pytest.param(caller, endpoint, i, id=f"{caller}-{endpoint}-{i}")
    for caller in CALLERS
    if caller != "owner_token"  # (reads as the owner does: all of team A, none of team B)
    for endpoint, calls in LIST_API.items()
    for i in range(len(calls))
]


def list_request(world, caller, client, call: ListCall):
    ref = (
        f"{world.other_team.slug}/{world.other_project.slug}"
        if caller.startswith("outsider")
        else world.project_ref
    )
    if call.body is not None:
        return client.post(call.path, call.body, format="json")
    return client.get(call.path, {k: ref if v == PROJECT else v for k, v in call.params.items()})


@pytest.mark.parametrize(("caller", "endpoint", "index"), LIST_CASES)
def test_list_endpoint(world, caller, endpoint, index):
    call = LIST_API[endpoint][index]
    client = world.callers[caller].api()
    where = f"{endpoint} {call.params or call.body or ''}"
    checks.clear_search_caches()
    response = list_request(world, caller, client, call)
    assert response.status_code in call.ok, (
        f"{caller} on {where}: {response.status_code}: {response.content[:300]!r}"
    )
    assert_no_leak(world, caller, where, text_of(response))
    if caller in COMPARED:
        remove_private_session(world)
        without = list_request(world, caller, client, call)
        a, b = stable(response), stable(without)
        assert a == b, (
            f"{caller} on {where}: the answer is not what it is without the private session "
            f"(which {caller} may not read): {first_difference(a, b)}"
        )


def listed_ids(world, caller) -> dict[str, str]:
    return {
        tag: s.public_id
        for tag, s in world.sessions.items()
        if reads(caller, tag) >= LISTED and (tag == "otherteam") == (caller.startswith("outsider"))
    }


@pytest.mark.parametrize("caller", CALLERS)
def test_the_session_list_holds_exactly_what_the_caller_may_list(world, caller):
    response = world.callers[caller].api().get("/api/v1/sessions", {"limit": 50})
    assert response.status_code == 200
    rows = {row["id"]: row for row in response.json()["results"]}
    expected = listed_ids(world, caller)
    assert set(rows) == set(expected.values()), (
        f"{caller} lists {sorted(rows)}; it may list exactly {expected}"
    )
    for tag, public_id in expected.items():
        assert rows[public_id]["reading"] == name(reads(caller, tag)), (caller, tag, rows)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_search_finds_what_the_caller_reads_and_nothing_else(world, caller, mode):
    checks.clear_search_caches()
    response = (
        world.callers[caller]
        .api()
        .get("/api/v1/search", {"q": "zebracorn message flow handler", "mode": mode, "limit": 50})
    )
    assert response.status_code == 200, response.content[:300]
    found = {hit["session"]["id"] for hit in response.json()["results"]}
    readable = {s.public_id for tag, s in world.sessions.items() if reads(caller, tag) >= SUMMARY}
    content = {s.public_id for tag, s in world.sessions.items() if reads(caller, tag) == CONTENT}
    assert found <= readable, f"{caller} ({mode}) finds sessions it may not read: " + ", ".join(
        tag for tag, s in world.sessions.items() if s.public_id in found - readable
    )
    assert content <= found, f"{caller} ({mode}) misses sessions it reads: {content - found}"


@pytest.mark.parametrize("caller", CALLERS)
def test_the_memory_list_holds_exactly_the_memories_the_caller_reads(world, caller):
    response = world.callers[caller].api().get("/api/v1/memories", {"limit": 100})
    assert response.status_code == 200
    found = {row["id"] for row in response.json()["results"]}
    project = world.other_project if caller.startswith("outsider") else world.project
    readable = {
        m.public_id
        for tag, memories in world.memories.items()
        for m in memories
        if m.project_id == project.pk
        and m.status == "active"
        and memory_readable(caller, tag, "memory" if "-memory" in m.content else "proposal")
    }
    assert found == readable, f"{caller} lists memories {sorted(found)}, not {sorted(readable)}"


# --- the web pages --------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    needs: int
    may: int | None = None
    post: bool = False

    @property
    def lowest(self) -> int:
        return self.needs if self.may is None else self.may


# Pages about one session (by URL name), with what they need of it.
SESSION_PAGES = {
    "session": Page(SUMMARY, may=LISTED),  # the admin's look at a private session: its metadata
    "messages": Page(CONTENT),
    "similar": Page(CONTENT, may=SUMMARY),
    "export": Page(CONTENT),
    # The trash's pages: an admin deletes, restores and purges sessions it does not read
    # (test_an_admin_deletes_a_private_session_it_does_not_read); the others may be refused.
    "delete": Page(CONTENT, may=LISTED),
    "anonymize": Page(CONTENT, may=LISTED),
    "pin": Page(CONTENT, post=True),
    "message-remove": Page(CONTENT, post=True),
    "restore": Page(CONTENT, may=LISTED, post=True),
    "purge": Page(CONTENT, may=LISTED, post=True),
    # The visibility control, asked to share it with the team: only its owner may.
    "session-visibility": Page(CONTENT, may=LISTED, post=True),
}
# Pages about one memory, tried with each session's accepted memory and proposal.
MEMORY_PAGES = {
    "memory": False,
    "memory-edit": False,
    "memory-resolve": True,
    "memory-pin": True,
    "memory-visibility": True,
    "memory-status": True,
    "memory-delete": False,
    "memory-restore": True,
}
# Lists, searches, aggregates and exports (name, query), for words and the world without the
# private session.
LIST_PAGES = [
    ("home", {}),
    ("enrichment", {}),
    ("sessions", {}),
    ("sessions", {"q": "zebracorn"}),
    ("search", {"q": "zebracorn"}),
    ("search", {"q": "zebracorn pool connections", "mode": "keyword"}),
    ("memories", {}),
    ("memories", {"q": "zebracorn pool"}),
    ("memories-export", {}),
    ("memory-review", {}),
    ("memory-rejections", {}),
    ("people", {}),
    ("person", {"person": OWNER_NAME}),
    ("person-export", {"person": OWNER_NAME}),
    ("trash", {}),
    ("memory-trash", {}),
    ("deletions", {}),
    ("tokens", {}),
    ("project-archive", {}),
    ("project-archive-download", {"project_id": None}),
]
# Pages that act on no existing session or memory of anyone's, or only post a form whose
# target the campaign tries elsewhere.
EXEMPT_PAGES = {
    "switch": "chooses the caller's own team or project",
    "retry-failures": "retries the enrichment of failed sessions (none here); admins only",
    "bulk-delete": "posts session ids: tried in test_bulk_pages",
    "bulk-restore": "posts session ids: tried in test_bulk_pages",
    "bulk-visibility": "posts session ids: tried in test_bulk_pages",
    "memory-bulk-delete": "posts memory ids: tried in test_bulk_pages",
    "memory-restore-selected": "posts memory ids: tried in test_bulk_pages",
    "token-revoke": "a token of the caller's own",
}


def web_url_names() -> set[str]:
    from web import urls

    return {pattern.name for pattern in urls.urlpatterns}


def test_the_campaign_covers_every_page():
    placed = (
        set(SESSION_PAGES)
        | set(MEMORY_PAGES)
        | {page for page, _ in LIST_PAGES}
        | set(EXEMPT_PAGES)
    )
    missing = sorted(web_url_names() - placed)
    assert not missing, (
        "pages the isolation campaign does not try (place each in SESSION_PAGES, MEMORY_PAGES, "
        "LIST_PAGES or EXEMPT_PAGES of tests/isolation/test_visibility_campaign.py): "
        + ", ".join(missing)
    )


def page_url(page: str, **kwargs) -> str:
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse(f"web:{page}", kwargs=kwargs)
    except NoReverseMatch:
        pytest.fail(f"the campaign tries the page web:{page}, which the URL map does not have")


def session_page_url(page: str, public_id: str) -> str:
    kwargs = {"public_id": public_id}
    if page in ("pin", "message-remove"):
        kwargs["seq"] = 0
    return page_url(page, **kwargs)


WEB_SESSION_CASES = [
    pytest.param(caller, visibility, page, id=f"{caller}-{visibility}-{page}")
    for caller in PEOPLE
    for visibility in VIS
    for page in SESSION_PAGES
]


@pytest.mark.parametrize(("caller", "visibility", "page"), WEB_SESSION_CASES)
def test_session_page(world, caller, visibility, page):
    spec = SESSION_PAGES[page]
    session = world.sessions[visibility]
    reading = reads(caller, visibility)
    client = world.callers[caller].web()
    data = {"visibility": "team", "reason": "campaign"} if spec.post else {}

    def fetch(url):
        return client.post(url, data) if spec.post else client.get(url)

    where = f"page {page} of the {visibility} session ({name(reading)})"
    response = fetch(session_page_url(page, session.public_id))
    assert_not_more_visible(world, caller, visibility, where)
    assert response.status_code < 500, f"{caller} on {where}: {response.status_code}"
    if reading < spec.lowest:
        fake = nonexistent(
            caller, ("page", page), lambda: fetch(session_page_url(page, FAKE_SESSION))
        )
        assert response.status_code == fake.status_code == 404, (
            f"{caller} on {where}: {response.status_code} for a session it may not see "
            f"({fake.status_code} for one that does not exist)"
        )
        said = checks.normalized_text(response, session.public_id)
        fake_said = checks.normalized_text(fake, FAKE_SESSION)
        assert said == fake_said, (
            f"{caller} on {where}: the 404 page differs from a nonexistent session's: "
            f"{first_difference(said, fake_said)}"
        )
        return
    assert_no_leak(world, caller, where, text_of(response))
    if reading >= spec.needs:
        assert response.status_code != 404, f"{caller} on {where}: 404 for what it reads"
        if not spec.post and page not in ("delete", "anonymize", "export"):
            # (the transcript's fragment sends a browser without htmx to the session page)
            status = response.status_code
            assert status in (200, 302), f"{caller} on {where}: {status}"


WEB_MEMORY_CASES = [
    pytest.param(caller, visibility, kind, id=f"{caller}-{visibility}-{kind}")
    for caller in PEOPLE
    for visibility in VIS
    for kind in ("memory", "proposal")
]


@pytest.mark.parametrize(("caller", "visibility", "kind"), WEB_MEMORY_CASES)
def test_memory_pages(world, caller, visibility, kind):
    from django.db import transaction

    memory = memory_of(world, visibility, kind)
    readable = memory_readable(caller, visibility, kind)
    client = world.callers[caller].web()
    failures = []
    for page, post in MEMORY_PAGES.items():
        if readable and page not in ("memory", "memory-edit"):
            continue  # (what it may do to a memory it reads is the memory tests' matter)
        where = f"page {page} of the {visibility} session's {kind} {memory.public_id}"
        try:

            def fetch(public_id, page=page, post=post):
                with transaction.atomic():
                    ask = client.post if post else client.get
                    url = page_url(page, project_id=memory.project_id, public_id=public_id)
                    answer = ask(url, {"status": "rejected"} if page == "memory-status" else {})
                    transaction.set_rollback(True)
                return answer

            response = fetch(memory.public_id)
            assert response.status_code < 500, f"{caller} on {where}: {response.status_code}"
            if not readable:
                fake = nonexistent(caller, ("memory-page", page), lambda f=fetch: f(FAKE_MEMORY))
                assert response.status_code == fake.status_code, (
                    f"{caller} on {where}: {response.status_code} for a memory it may not read "
                    f"({fake.status_code} for one that does not exist)"
                )
                continue
            assert_no_leak(world, caller, where, text_of(response))
            if page != "memory-restore":  # (a memory not in the trash is not found there)
                assert response.status_code != 404, f"{caller} on {where}: 404 for what it reads"
        except AssertionError as failure:
            failures.append(str(failure).split("\nassert")[0])
    assert not failures, "\n".join(failures)


WEB_LIST_CASES = [
    pytest.param(caller, i, id=f"{caller}-{page}-{i}")
    for caller in PEOPLE
    for i, (page, _) in enumerate(LIST_PAGES)
]


def list_page_url(world, index: int) -> tuple[str, dict]:
    page, params = LIST_PAGES[index]
    kwargs = {k: v for k, v in params.items() if k in ("person", "project_id")}
    if "project_id" in kwargs:
        kwargs["project_id"] = world.project.pk
    query = {k: v for k, v in params.items() if k not in kwargs}
    return page_url(page, **kwargs), query


@pytest.mark.parametrize(("caller", "index"), WEB_LIST_CASES)
def test_list_page(world, caller, index):
    url, query = list_page_url(world, index)
    client = world.callers[caller].web()
    where = f"page {url} {query or ''}"
    checks.clear_search_caches()
    response = client.get(url, query)
    assert response.status_code in (200, 302, 403, 404), (
        f"{caller} on {where}: {response.status_code}"
    )
    assert_no_leak(world, caller, where, text_of(response))
    if caller in COMPARED:
        remove_private_session(world)
        without = client.get(url, query)
        a, b = stable(response), stable(without)
        assert a == b, (
            f"{caller} on {where}: the page is not what it is without the private session "
            f"(which {caller} may not read): {first_difference(a, b)}"
        )


@pytest.mark.parametrize("caller", PEOPLE)
def test_the_session_list_page_shows_what_the_caller_may_list(world, caller):
    page = text_of(world.callers[caller].web().get(page_url("sessions")))
    for tag, session in world.sessions.items():
        listed = session.public_id in page
        may = tag in listed_ids(world, caller)
        assert listed == may, (
            f"{caller}: the session list {'shows' if listed else 'does not show'} the {tag} "
            f"session, which it {'may' if may else 'may not'} list"
        )


@pytest.mark.parametrize("caller", PEOPLE)
def test_bulk_pages(world, caller):
    """The bulk actions posted with the private session's id (and memory ids) change nothing
    of what the caller may not list, and say nothing of it."""
    from memories.models import Memory
    from sessions.models import Session

    client = world.callers[caller].web()
    private = world.sessions["private"]
    memories = [memory_of(world, "private", kind) for kind in ("memory", "proposal")]
    posts = [
        ("bulk-delete", {"ids": [private.public_id], "reason": "campaign", "confirm": "1"}),
        ("bulk-restore", {"ids": [private.public_id]}),
        ("bulk-visibility", {"session": [private.public_id], "visibility": "team"}),
        ("memory-bulk-delete", {"ids": [f"{m.project_id}/{m.public_id}" for m in memories]}),
        ("memory-restore-selected", {"ids": [f"{m.project_id}/{m.public_id}" for m in memories]}),
    ]
    for page, data in posts:
        response = client.post(page_url(page), data, follow=True)
        where = f"page {page} with the private session's ids"
        assert response.status_code < 500, f"{caller} on {where}: {response.status_code}"
        assert_no_leak(world, caller, where, text_of(response))
    if reads(caller, "private") < LISTED:
        assert Session.objects.get(pk=private.pk).deleted_at is None, (
            f"{caller} deleted the private session it may not see, through bulk-delete"
        )
    if reads(caller, "private") < CONTENT:
        assert not Memory.objects.filter(
            pk__in=[m.pk for m in memories], status="deleted"
        ).exists(), f"{caller} deleted the private session's memories, through memory-bulk-delete"


def test_an_admin_deletes_a_private_session_it_does_not_read(world):
    """The team's admins see that a private session exists and may delete it (to the trash,
    then for good), without reading it; the trash shows it as it is listed."""
    from sessions.models import Session

    private = world.sessions["private"]
    web = world.callers["admin"].web()
    where = "the private session's delete page"
    page = web.get(page_url("delete", public_id=private.public_id))
    assert page.status_code == 200, f"admin on {where}: {page.status_code}"
    assert_no_leak(world, "admin", where, text_of(page))
    done = web.post(
        page_url("delete", public_id=private.public_id), {"reason": "campaign"}, follow=True
    )
    assert done.status_code == 200, f"admin posting {where}: {done.status_code}"
    assert_no_leak(world, "admin", f"posting {where}", text_of(done))
    assert Session.objects.get(pk=private.pk).deleted_at is not None, "not in the trash"
    trash = web.get(page_url("trash"))
    assert private.public_id in text_of(trash), "the admin's trash does not list it"
    assert_no_leak(world, "admin", "the trash", text_of(trash))
    member_trash = text_of(world.callers["member"].web().get(page_url("trash")))
    assert_no_leak(world, "member", "the trash with the private session in it", member_trash)
    api = world.callers["admin"].api()
    listed = api.get("/api/v1/sessions", {"deleted": "true", "limit": 50})
    assert_no_leak(world, "admin", "GET /api/v1/sessions?deleted=true", text_of(listed))
    member_listed = (
        world.callers["member"].api().get("/api/v1/sessions", {"deleted": "true", "limit": 50})
    )
    assert_no_leak(world, "member", "GET /api/v1/sessions?deleted=true", text_of(member_listed))
    purged = web.post(page_url("purge", public_id=private.public_id), follow=True)
    assert purged.status_code == 200, f"admin purging the private session: {purged.status_code}"
    assert not Session.objects.filter(pk=private.pk).exists(), "the admin could not purge it"


# --- MCP ------------------------------------------------------------------------------------

MCP_HEADERS = {
    "HTTP_ACCEPT": "application/json, text/event-stream",
    "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
}


def mcp(token: str, method: str, params: dict) -> dict:
    from django.test import Client

    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = Client().post(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **MCP_HEADERS,
    )
    assert response.status_code == 200, response.content[:300]
    return response.json()


def tool(token: str, name_: str, arguments: dict) -> tuple[bool, str, object]:
    """(is_error, everything the tool answered as text, its structured answer or text)."""
    result = mcp(token, "tools/call", {"name": name_, "arguments": arguments})["result"]
    texts = [part.get("text", "") for part in result.get("content", [])]
    structured = result.get("structuredContent")
    if structured is not None:
        texts.append(json.dumps(structured))
    answer = structured if structured is not None else "\n".join(texts)
    return bool(result.get("isError")), "\n".join(texts), answer


# Tools that read lists: (arguments) for words and the world without the private session.
MCP_LISTS = {
    "search_sessions": [
        {"query": "zebracorn", "limit": 20, "mode": mode} for mode in ("keyword", "hybrid")
    ],
    "get_context": [{"task": "zebracorn pool", "max_sessions": 10}, {"task": ""}],
    "list_recent_sessions": [{"limit": 50}],
    "list_memories": [
        {"type": "decision"},
        {"type": "preference", "proposed": True},
        {"type": "decision", "topic": "zebracorn pool"},
    ],
    "list_deleted_memories": [{}],
}
# Tools about one session or memory: what the caller may not read is an error saying 404.
MCP_ONE = {
    "resume_session": "session",
    "accept_memory": "proposal",
    "reject_memory": "memory",
    "restore_memory": "memory",
    "record_memory": "session",  # a memory of that session
    "set_memory_visibility": "memory",  # asked to share it with the team
}
MCP_EXEMPT = {"save_session": "captures a new session of the caller's own"}


def test_the_campaign_covers_every_mcp_tool(world):
    listed = mcp(world.callers["team_token"].token, "tools/list", {})["result"]["tools"]
    missing = sorted({t["name"] for t in listed} - set(MCP_LISTS) - set(MCP_ONE) - set(MCP_EXEMPT))
    assert not missing, f"MCP tools the isolation campaign does not call: {missing}"


MCP_LIST_CASES = [
    pytest.param(caller, tool_name, i, id=f"{caller}-{tool_name}-{i}")
    for caller in TOKENS
    for tool_name, variants in MCP_LISTS.items()
    for i in range(len(variants))
]


@pytest.mark.parametrize(("caller", "tool_name", "index"), MCP_LIST_CASES)
def test_mcp_list_tool(world, caller, tool_name, index):
    arguments = MCP_LISTS[tool_name][index]
    token = world.callers[caller].token
    where = f"MCP {tool_name}({arguments})"
    checks.clear_search_caches()
    failed, said, answer = tool(token, tool_name, arguments)
    assert not failed, f"{caller} on {where}: {said[:300]}"
    assert_no_leak(world, caller, where, said)
    if caller in COMPARED:
        remove_private_session(world)
        _, _, without = tool(token, tool_name, arguments)
        a, b = checks.stable_json(answer), checks.stable_json(without)
        assert a == b, (
            f"{caller} on {where}: the answer is not what it is without the private session: "
            f"{first_difference(a, b)}"
        )


MCP_ONE_CASES = [
    pytest.param(caller, visibility, tool_name, id=f"{caller}-{visibility}-{tool_name}")
    for caller in TOKENS
    for visibility in VIS
    for tool_name in MCP_ONE
]


@pytest.mark.parametrize(("caller", "visibility", "tool_name"), MCP_ONE_CASES)
def test_mcp_tool_about_one(world, caller, visibility, tool_name):
    token = world.callers[caller].token
    reading = reads(caller, visibility)
    target = MCP_ONE[tool_name]
    session = world.sessions[visibility]
    if target == "session":
        readable = reading >= (CONTENT if tool_name == "resume_session" else SUMMARY)
        arguments = (
            {"session_id": session.public_id}
            if tool_name == "resume_session"
            else {"type": "learning", "content": "a learning", "session": session.public_id}
        )
        real, fake_arguments = session.public_id, {**arguments}
        key = "session_id" if tool_name == "resume_session" else "session"
        fake_arguments[key] = FAKE_SESSION
        fake_id = FAKE_SESSION
    else:
        memory = memory_of(world, visibility, target)
        readable = memory_readable(caller, visibility, target)
        extra = {"visibility": "team"} if tool_name == "set_memory_visibility" else {}
        arguments = {"memory_id": memory.public_id, **extra}
        fake_arguments = {"memory_id": FAKE_MEMORY, **extra}
        real, fake_id = memory.public_id, FAKE_MEMORY
    where = f"MCP {tool_name} on the {visibility} session's {target} ({name(reading)})"
    failed, said, _ = tool(token, tool_name, arguments)
    if not readable and not (tool_name == "resume_session" and reading == SUMMARY):
        # (a memory's session that is not found is a 400 naming the field, as any unknown one)
        assert failed, f"{caller} on {where}: answered: {said[:300]}"
        _, fake_said, _ = tool(token, tool_name, fake_arguments)
        assert said.replace(real, "<id>") == fake_said.replace(fake_id, "<id>"), (
            f"{caller} on {where}: the error differs from a nonexistent one's: {said[:300]} vs "
            f"{fake_said[:300]}"
        )
        return
    assert_no_leak(world, caller, where, said)
    if readable and tool_name == "resume_session":
        assert not failed, f"{caller} on {where}: {said[:300]}"


# --- the world is what the campaign says it is -----------------------------------------------


def test_the_world_holds_each_word_where_the_campaign_expects_it(world):
    """The owner reads every word of its sessions, through the API: the campaign's absent
    words are absent because they are withheld, not because the world lacks them."""
    owner = world.callers["owner"].api()
    for tag in VIS:
        session = world.sessions[tag]
        assert (session.visibility, session.owner_id) == (tag, world.owner.pk), tag
        text = "\n".join(
            text_of(owner.get(url))
            for url in (
                f"/api/v1/sessions/{session.public_id}",
                f"/api/v1/sessions/{session.public_id}/messages",
                "/api/v1/memories?limit=100&status=proposed",
                "/api/v1/memories?limit=100",
                "/api/v1/entities",
            )
        )
        missing = [w for w in checks.forbidden_words(tag, NONE) if w.lower() not in text.lower()]
        assert not missing, f"the owner does not read {missing} of its {tag} session"
    # And the check sees them: the owner's list, judged as another team's, leaks.
    listed = text_of(world.callers["owner"].api().get("/api/v1/sessions"))
    assert leaks(world, "outsider", listed), "the words' check finds nothing to find"
