"""Export, then import into an empty project, gives the same memories: a property over
generated memories of every type, with their type fields, decay, statuses and relationships.
Real PostgreSQL, the real embedding model (for the import)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memories.capture.record import MemoryDraft, agent_state_text, link, record
from memories.models import LinkKind, Memory, MemoryLink
from memories.portable.export import export_zip
from memories.portable.load import import_files, read_upload
from tests.factories import ProjectFactory
from transcripts.base import UnzipLimits

pytestmark = pytest.mark.django_db

VECTOR = np.ones(384, dtype=np.float32) / np.sqrt(384)
word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
text = (
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=80)
    .map(str.strip)
    .filter(bool)
)
moment = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
unit = st.floats(0, 1).map(lambda x: round(x, 4))


@st.composite
def details_of(draw, kind: str) -> tuple[dict, dict]:
    """The type's fields (``details``) and its column fields."""
    details: dict = {}
    columns: dict = {}
    if draw(st.booleans()):
        details["x_note"] = draw(text)  # a field the files have no place for: "extra"
    if kind == "decision":
        details |= draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "rationale": text,
                    "reversible": st.booleans(),
                    "agreed_by": st.lists(word, max_size=3),
                    "alternatives_considered": st.lists(
                        st.fixed_dictionaries(
                            {"option": text}, optional={"rejected_because": text}
                        ),
                        max_size=2,
                    ),
                },
            )
        )
    elif kind == "finding":
        details |= draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "category": word,
                    "location": st.fixed_dictionaries(
                        {"artifact": text}, optional={"line_numbers": st.lists(st.integers(0, 9))}
                    ),
                },
            )
        )
        columns["severity"] = draw(st.sampled_from(["", "critical", "minor"]))
        if draw(st.booleans()):
            columns["resolution"] = "resolved"
            details["resolution"] = {"status": "resolved", "action_taken": draw(text)}
    elif kind == "preference":
        details |= draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "category": word,
                    "source": word,
                    "applies_to": st.fixed_dictionaries({"domains": st.lists(word, max_size=2)}),
                },
            )
        )
    elif kind == "agent_state":
        details["session_learnings"] = draw(st.lists(text, max_size=2))
        details["current_context"] = {"current_task": draw(word)}
    return details, columns


@st.composite
def memory_specs(draw):
    kind = draw(
        st.sampled_from(["decision", "finding", "preference", "learning", "fact", "agent_state"])
    )
    details, columns = draw(details_of(kind))
    agent = draw(word) if kind == "agent_state" else draw(st.just("") | word)
    return {
        "type": kind,
        "content": agent_state_text(agent, details) if kind == "agent_state" else draw(text),
        "details": details,
        "agent": agent,
        # docs/people.md: the person a memory is about, and whether every character sees it
        "person": draw(st.just("") | word),
        "shared": draw(st.booleans()),
        "topic": f"agent:{agent}" if kind == "agent_state" else draw(st.just("") | word),
        "tags": draw(st.lists(word, max_size=3, unique=True)),
        "confidence": draw(st.sampled_from(["", "high", "explicit"])),
        "scope": draw(st.sampled_from(["project", "team"])),
        "pinned": draw(st.booleans()),
        "occurred_at": draw(moment),
        "base_priority": draw(unit),
        **columns,
        "decay": {
            "priority": draw(unit),
            "access_count": draw(st.integers(0, 50)),
            "last_accessed_at": draw(st.none() | moment),
        },
    }


@st.composite
def projects(draw):
    specs = draw(st.lists(memory_specs(), min_size=1, max_size=6))
    count = len(specs)
    pairs = st.tuples(st.integers(0, count - 1), st.integers(0, count - 1)).filter(
        lambda p: p[0] != p[1]
    )
    links = draw(st.lists(st.tuples(pairs, st.sampled_from(list(LinkKind.values))), max_size=4))
    # supersedes only from a later memory to an earlier one: no cycles
    links = [((a, b), kind) for (a, b), kind in links if kind != "supersedes" or a > b]
    return specs, links


def build(project, specs, links) -> None:
    made = []
    for spec in specs:
        spec = dict(spec)
        decay = spec.pop("decay")
        memory = record(project, MemoryDraft(**spec, embedding=VECTOR, reconcile=False)).memory
        Memory.objects.filter(pk=memory.pk).update(
            priority=decay["priority"],
            access_count=decay["access_count"],
            last_accessed_at=decay["last_accessed_at"],
        )
        made.append(memory)
    for (a, b), kind in links:
        link(made[a], made[b], kind)


def snapshot(project) -> tuple[dict, set]:
    fields = (
        "type", "content", "details", "topic", "tags", "confidence", "severity", "resolution",
        "agent", "person", "shared", "scope", "pinned", "status", "occurred_at", "base_priority",
        "priority", "access_count", "last_accessed_at",
    )  # fmt: skip
    memories = {
        m["public_id"]: {**m, "priority": round(m["priority"], 4)}
        for m in Memory.objects.filter(project=project).values("public_id", *fields)
    }
    links = set(
        MemoryLink.objects.filter(source__project=project).values_list(
            "source__public_id", "kind", "target__public_id"
        )
    )
    return memories, links


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(projects())
def test_export_then_import_into_an_empty_project_gives_the_same_memories(generated):
    specs, links = generated
    source, target = ProjectFactory(), ProjectFactory()
    build(source, specs, links)
    archive = export_zip(Memory.objects.filter(project=source))
    imported = import_files(target, read_upload("memories.zip", archive, UnzipLimits()))
    assert imported.renumbered == {}
    assert snapshot(target) == snapshot(source)
    assert set(Memory.objects.filter(project=target).values_list("origin", flat=True)) == {"import"}


def test_statuses_and_history_are_exported_and_imported_back(owner):
    from memories.capture import review
    from memories.models import Origin
    from memories.portable.export import export_files

    source, target = ProjectFactory(), ProjectFactory()
    waiting = record(
        source,
        MemoryDraft("fact", "The cache lives in Redis", confidence="low", origin=Origin.EXTRACTOR),
    ).memory
    dropped = record(
        source,
        MemoryDraft("fact", "Logs rotate daily", confidence="low", origin=Origin.EXTRACTOR),
    ).memory
    review.reject(dropped, by=owner, reason="not true here")
    withdrawn = record(source, MemoryDraft("decision", "Ship on Fridays")).memory
    review.revert(withdrawn, by=owner, reason="broke prod")

    files = export_files(Memory.objects.filter(project=source))
    facts = {f["id"]: f for f in files["facts.yaml"]["facts"]}
    assert facts[waiting.public_id]["status"] == "proposed"
    rejected = facts[dropped.public_id]
    assert rejected["status"] == "rejected"
    assert [(h["from_status"], h["to_status"], h["by"]) for h in rejected["history"]] == [
        ("", "proposed", "extractor"),
        ("proposed", "rejected", owner.get_username()),
    ]
    assert rejected["history"][1]["reason"] == "not true here"

    archive = export_zip(Memory.objects.filter(project=source))
    import_files(target, read_upload("memories.zip", archive, UnzipLimits()))
    got = {m.public_id: m for m in Memory.objects.filter(project=target)}
    assert {k: m.status for k, m in got.items()} == {
        waiting.public_id: "proposed",
        dropped.public_id: "rejected",
        withdrawn.public_id: "reverted",
    }
    history = got[withdrawn.public_id].history.order_by("at", "id")
    assert [(e.to_status, e.actor, e.reason) for e in history] == [
        ("active", "agent", "recorded by agent"),
        ("reverted", owner.get_username(), "broke prod"),
    ]
    # A statement the target project already rejected stays a rejection on import.
    third = ProjectFactory()
    refused = record(
        third, MemoryDraft("fact", "Logs rotate daily", confidence="low", origin=Origin.EXTRACTOR)
    ).memory
    review.reject(refused, by=owner)
    outcome = import_files(third, read_upload("memories.zip", archive, UnzipLimits()))
    assert refused.public_id in outcome.unchanged
    assert Memory.objects.filter(project=third, content="Logs rotate daily").count() == 1
