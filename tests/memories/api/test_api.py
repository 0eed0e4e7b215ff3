"""The memories REST API as agents and people use it: record each type in its own shape,
list with filters and sorts, search, read (an access), edit, delete and restore, resolve a
finding, relate memories, what relates to one, topics, timeline, agent states."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import LinkKind, Memory, MemoryLink, MemoryStatus
from tests.clients import client_for
from tests.memories.conftest import decision, finding, preference

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"


def post(client, body, url=URL):
    return client.post(url, body, format="json")


def test_a_decision_is_recorded_in_its_own_shape_with_its_evidence(agent, session):
    response = post(agent, decision(session=session.public_id, evidence=[1, 2]))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["id"] == "DEC-001" and body["outcome"] == "created"
    assert body["type"] == "decision" and body["confidence"] == "high"
    assert body["details"]["alternatives_considered"] == [
        {"option": "Session cookies", "rejected_because": "Not suitable for API auth"}
    ]
    assert body["details"]["implementation_impact"] == "high"
    assert body["details"]["reversible"] is False
    assert body["session"] == session.public_id
    assert [e["seq"] for e in body["evidence"]] == [1, 2]
    assert body["origin"] == "agent" and body["priority"] >= 0.9  # high impact floor
    memory = Memory.objects.get(public_id="DEC-001")
    assert memory.details["rationale"].startswith("Industry standard")
    assert memory.project_id == session.project_id


def test_a_finding_and_a_preference_keep_their_fields(agent):
    found = post(agent, finding()).json()
    assert found["id"] == "FIND-001" and found["severity"] == "critical"
    assert found["resolution"] == "open"
    assert found["details"]["location"]["line_numbers"] == [45, 60]
    liked = post(agent, preference()).json()
    assert liked["id"] == "PREF-001" and liked["confidence"] == "explicit"
    assert liked["topic"] == "mfa_requirements"
    assert liked["details"]["applies_to"]["domains"] == ["authentication"]


def test_a_restatement_answers_200_merged_and_a_change_supersedes(agent):
    first = post(agent, preference()).json()
    again = post(agent, preference(content="MFA required for admin users, optional for customers."))
    assert again.status_code == 200 and again.json()["outcome"] == "merged"
    assert again.json()["id"] == first["id"] and again.json()["access_count"] == 1
    changed = post(agent, preference(content="MFA required for every user, customers included"))
    assert changed.status_code == 201
    assert changed.json()["superseded"] == [first["id"]]
    assert Memory.objects.get(public_id=first["id"]).status == MemoryStatus.SUPERSEDED


def test_a_person_records_to_the_project_they_name_or_their_sessions(project, owner, session):
    person = client_for(owner)
    by_session = post(person, finding(session=session.public_id))
    assert by_session.status_code == 201, by_session.json()
    assert by_session.json()["origin"] == "person"
    assert by_session.json()["created_by"] == owner.get_username()
    named = post(person, decision(project=f"{project.team.slug}/{project.slug}"))
    assert named.status_code == 201 and named.json()["project"].endswith(project.slug)


def test_supersedes_and_links_are_written_with_the_memory(agent):
    old = post(agent, decision(content="Use session cookies for the web app")).json()
    pref = post(agent, preference()).json()
    new = post(
        agent,
        decision(
            content="Use short-lived JWTs in the web app too",
            supersedes=[old["id"]],
            links=[{"kind": "influenced", "target": pref["id"]}],
        ),
    )
    assert new.status_code == 201, new.json()
    assert new.json()["superseded"] == [old["id"]]
    shown = agent.get(f"{URL}/{new.json()['id']}").json()
    assert {"kind": "supersedes", "direction": "out", "memory": old["id"]} in shown["links"]
    assert {"kind": "influenced", "direction": "out", "memory": pref["id"]} in shown["links"]


# -- list, filters, sorts, search --------------------------------------------------------


@pytest.fixture
def recorded(agent):
    """A decision, an open critical finding, a resolved finding and a preference."""
    ids = {
        "decision": post(agent, decision()).json()["id"],
        "open": post(agent, finding()).json()["id"],
        "fixed": post(
            agent,
            finding(
                content="Session timeout not defined",
                severity="important",
                tags=["session"],
                agent="veritas",
            ),
        ).json()["id"],
        "preference": post(agent, preference()).json()["id"],
    }
    assert agent.post(f"{URL}/{ids['fixed']}/resolve", {}, format="json").status_code == 200
    return ids


def ids_of(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [memory["id"] for memory in response.json()["results"]]


def test_filters_narrow_the_list(agent, recorded):
    assert set(ids_of(agent.get(URL))) == set(recorded.values())
    assert ids_of(agent.get(URL, {"type": "decision"})) == [recorded["decision"]]
    both = ids_of(agent.get(URL, {"type": "decision,preference"}))
    assert set(both) == {recorded["decision"], recorded["preference"]}
    repeated = ids_of(agent.get(f"{URL}?type=decision&type=preference"))
    assert set(repeated) == set(both)
    assert ids_of(agent.get(URL, {"type": "finding", "resolution": "open"})) == [recorded["open"]]
    assert set(ids_of(agent.get(URL, {"tag": "security"}))) == {
        recorded["decision"],
        recorded["open"],
    }
    assert ids_of(agent.get(URL, {"topic": "mfa_requirements"})) == [recorded["preference"]]
    assert set(ids_of(agent.get(URL, {"agent": "veritas"}))) == {
        recorded["open"],
        recorded["fixed"],
    }
    assert ids_of(agent.get(URL, {"confidence": "explicit"})) == [recorded["preference"]]
    later = (timezone.now() + timedelta(minutes=1)).isoformat()
    assert ids_of(agent.get(URL, {"after": later})) == []
    assert len(ids_of(agent.get(URL, {"before": later}))) == 4


def test_decayed_memories_are_left_out_unless_asked_for(agent, recorded):
    Memory.objects.filter(public_id=recorded["decision"]).update(priority=0.1)
    assert recorded["decision"] not in ids_of(agent.get(URL))
    assert recorded["decision"] in ids_of(agent.get(URL, {"include_decayed": "true"}))
    assert recorded["decision"] in ids_of(agent.get(URL, {"min_priority": "0.05"}))
    assert recorded["decision"] not in ids_of(agent.get(URL, {"min_priority": "0.5"}))


def test_sorts_and_cursor_pages(agent, recorded):
    Memory.objects.filter(public_id=recorded["preference"]).update(priority=0.99)
    Memory.objects.filter(public_id=recorded["decision"]).update(priority=0.4)
    by_priority = ids_of(agent.get(URL))
    assert by_priority[0] == recorded["preference"] and by_priority[-1] == recorded["decision"]
    assert ids_of(agent.get(URL, {"sort": "priority"})) == by_priority[::-1]
    newest = ids_of(agent.get(URL, {"sort": "-time"}))
    assert newest[0] == recorded["preference"]
    assert ids_of(agent.get(URL, {"sort": "time"})) == newest[::-1]
    first = agent.get(URL, {"limit": 3}).json()
    second = agent.get(first["next"]).json()
    assert [m["id"] for m in first["results"] + second["results"]] == by_priority
    assert second["next"] is None


def test_search_finds_by_words_and_counts_as_a_read(agent, recorded):
    response = agent.get(URL, {"q": "MFA admin", "type": "preference"})
    assert ids_of(response) == [recorded["preference"]]
    assert 0 < response.json()["results"][0]["relevance"] <= 1
    assert Memory.objects.get(public_id=recorded["preference"]).access_count == 1
    agent.get(URL)  # a plain list is not a read
    assert Memory.objects.get(public_id=recorded["preference"]).access_count == 1


def test_reading_a_memory_counts_as_an_access_and_raises_its_priority(agent, recorded):
    Memory.objects.filter(public_id=recorded["decision"]).update(
        priority=0.2, last_accessed_at=timezone.now() - timedelta(days=60)
    )
    body = agent.get(f"{URL}/{recorded['decision']}").json()
    assert body["access_count"] == 1
    memory = Memory.objects.get(public_id=recorded["decision"])
    assert memory.access_count == 1 and memory.priority >= 0.9
    assert (timezone.now() - memory.last_accessed_at).total_seconds() < 60
    assert body["priority"] == pytest.approx(memory.priority)


def test_unknown_parameters_and_bad_values_are_named(agent):
    for params, field in (
        ({"typ": "decision"}, "detail"),
        ({"type": "opinion"}, "type"),
        ({"sort": "size"}, "sort"),
        ({"min_priority": "2"}, "min_priority"),
        ({"session": "nope"}, "session"),
        ({"limit": "0"}, "limit"),
    ):
        response = agent.get(URL, params)
        assert response.status_code == 400, params
        assert field in response.json(), (params, response.json())
    assert "typ" in agent.get(URL, {"typ": "x"}).json()["detail"]


# -- one memory ---------------------------------------------------------------------------


def test_an_edit_changes_content_fields_tags_and_pin(agent, recorded):
    url = f"{URL}/{recorded['decision']}"
    response = agent.patch(
        url,
        {
            "content": "Use OAuth 2.1 with JWT tokens",
            "rationale": "2.1 folds in the security BCP",
            "reversible": None,
            "tags": ["Security"],
            "pinned": True,
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["content"] == "Use OAuth 2.1 with JWT tokens" and body["pinned"] is True
    assert body["details"]["rationale"] == "2.1 folds in the security BCP"
    assert "reversible" not in body["details"] and body["tags"] == ["security"]
    assert body["details"]["alternatives_considered"]  # untouched fields stay
    memory = Memory.objects.get(public_id=recorded["decision"])
    assert memory.priority == pytest.approx(memory.base_priority)  # pinned: no decay


def test_an_edit_refuses_another_types_field_and_fixed_fields(agent, recorded):
    url = f"{URL}/{recorded['decision']}"
    before = Memory.objects.get(public_id=recorded["decision"]).content
    for body, field in (({"severity": "critical"}, "severity"), ({"type": "finding"}, "type")):
        response = agent.patch(url, body, format="json")
        assert response.status_code == 400 and field in response.json(), response.json()
    assert Memory.objects.get(public_id=recorded["decision"]).content == before


def test_delete_needs_a_reason_is_409_twice_and_restores(agent, recorded):
    url = f"{URL}/{recorded['decision']}"
    assert agent.delete(url).status_code == 400
    assert "reason" in agent.delete(url).json()
    assert agent.delete(url + "?reason=wrong+project").status_code == 204
    again = agent.delete(url + "?reason=again")
    assert again.status_code == 409 and "already deleted" in again.json()["detail"]
    assert recorded["decision"] not in ids_of(agent.get(URL))
    shown = agent.get(url).json()
    assert shown["status"] == "deleted" and shown["delete_reason"] == "wrong project"
    assert agent.patch(url, {"content": "x y"}, format="json").status_code == 409
    restored = agent.post(url + "/restore")
    assert restored.status_code == 200 and restored.json()["status"] == "active"
    assert agent.post(url + "/restore").status_code == 409


def test_resolving_a_finding(agent, recorded):
    url = f"{URL}/{recorded['open']}/resolve"
    response = agent.post(
        url,
        {"action_taken": "Added MFA for admins", "resolved_by": recorded["decision"]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["resolution"] == "resolved"
    assert body["details"]["resolution"]["action_taken"] == "Added MFA for admins"
    assert {"kind": "resolves", "direction": "in", "memory": recorded["decision"]} in body["links"]
    assert agent.post(url, {}, format="json").status_code == 409
    not_a_finding = agent.post(f"{URL}/{recorded['decision']}/resolve", {}, format="json")
    assert not_a_finding.status_code == 400 and "type" in not_a_finding.json()
    open_only = ids_of(agent.get(URL, {"type": "finding", "resolution": "open"}))
    assert recorded["open"] not in open_only


def test_links_are_added_and_removed(agent, recorded):
    url = f"{URL}/{recorded['open']}/links"
    made = agent.post(url, {"kind": "led_to", "target": recorded["decision"]}, format="json")
    assert made.status_code == 201
    assert made.json() == {
        "source": recorded["open"],
        "kind": "led_to",
        "target": recorded["decision"],
    }
    assert MemoryLink.objects.filter(kind=LinkKind.LED_TO).count() == 1
    gone = agent.delete(f"{url}?kind=led_to&target={recorded['decision']}")
    assert gone.status_code == 204
    assert MemoryLink.objects.filter(kind=LinkKind.LED_TO).count() == 0
    missing = agent.delete(f"{url}?kind=led_to&target={recorded['decision']}")
    assert missing.status_code == 404


def test_removing_the_last_supersedes_makes_the_older_active_again(agent, recorded):
    older, newer = recorded["decision"], recorded["preference"]
    url = f"{URL}/{newer}/links"
    assert (
        agent.post(url, {"kind": "supersedes", "target": older}, format="json").status_code == 201
    )
    assert Memory.objects.get(public_id=older).status == MemoryStatus.SUPERSEDED
    assert agent.delete(f"{url}?kind=supersedes&target={older}").status_code == 204
    assert Memory.objects.get(public_id=older).status == MemoryStatus.ACTIVE


def test_related_gives_links_then_the_nearest_by_meaning(agent, recorded):
    similar = post(agent, decision(content="Authenticate API calls with OAuth 2.0 bearer JWTs"))
    assert similar.status_code == 201
    agent.post(
        f"{URL}/{recorded['decision']}/links",
        {"kind": "relates_to", "target": recorded["open"]},
        format="json",
    )
    body = agent.get(f"{URL}/{recorded['decision']}/related").json()
    assert body["memory"] == recorded["decision"]
    assert [(e["kind"], e["direction"], e["memory"]["id"]) for e in body["links"]] == [
        ("relates_to", "out", recorded["open"])
    ]
    nearest = [entry["memory"]["id"] for entry in body["similar"]]
    assert nearest[0] == similar.json()["id"] and recorded["open"] not in nearest
    assert body["similar"][0]["similarity"] > 0.5
    assert agent.get(f"{URL}/{recorded['decision']}/related", {"limit": "x"}).status_code == 400


def test_topics_count_memories_by_type_with_weights(agent, recorded):
    response = agent.get(f"{URL}/topics")
    assert response.status_code == 200
    topics = {t["name"]: t for t in response.json()["topics"]}
    security = topics["security"]
    assert security["by_type"] == {"decision": 1, "finding": 1}
    assert security["mentions"] == 2
    assert set(security["memories"]["finding"]) == {recorded["open"]}
    assert topics["mfa_requirements"]["by_type"] == {"preference": 1}
    weights = [t["weight"] for t in response.json()["topics"]]
    assert weights == sorted(weights, reverse=True) and weights[0] == 1.0
    only = agent.get(f"{URL}/topics", {"type": "preference"}).json()["topics"]
    assert {t["name"] for t in only} == {"mfa_requirements"}


def test_timeline_lists_events_oldest_first_in_hour_buckets(agent, recorded):
    hour = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(days=1)
    Memory.objects.filter(public_id=recorded["decision"]).update(occurred_at=hour)
    body = agent.get(f"{URL}/timeline").json()
    refs = [event["ref"] for event in body["events"]]
    assert refs[0] == recorded["decision"] and len(refs) == 4
    assert body["buckets"][hour.strftime("%Y-%m-%dT%H:00")] == {
        "event_count": 1,
        "event_refs": [recorded["decision"]],
    }
    assert sum(b["event_count"] for b in body["buckets"].values()) == 4
    assert body["truncated"] is False
    latest = agent.get(f"{URL}/timeline", {"limit": 2}).json()
    assert latest["truncated"] is True and len(latest["events"]) == 2
    assert recorded["decision"] not in [e["ref"] for e in latest["events"]]


def test_agent_state_is_one_per_agent_and_merges_sections(agent, session):
    url = "/api/v1/agent-states/veritas"
    first = agent.put(
        url,
        {
            "session": session.public_id,
            "current_context": {"current_task": "verify_requirements"},
            "session_learnings": ["Check MFA in every auth section"],
        },
        format="json",
    )
    assert first.status_code == 201, first.json()
    assert first.json()["type"] == "agent_state" and first.json()["agent"] == "veritas"
    again = agent.put(
        url,
        {"session": session.public_id, "working_memory": {"concerns_identified": ["MFA"]}},
        format="json",
    )
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    shown = agent.get(url).json()
    assert shown["details"]["current_context"] == {"current_task": "verify_requirements"}
    assert shown["details"]["working_memory"] == {"concerns_identified": ["MFA"]}
    assert "verify_requirements" in shown["content"]
    assert agent.get("/api/v1/agent-states/nobody").status_code == 404
    unknown = agent.put(url, {"mood": "good"}, format="json")
    assert unknown.status_code == 400 and "mood" in unknown.json()


def test_an_agent_state_is_not_recorded_as_a_memory(agent):
    response = post(agent, {"type": "agent_state", "content": "x"})
    assert response.status_code == 400 and "agent-states" in response.json()["type"][0]
