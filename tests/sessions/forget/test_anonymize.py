"""Anonymisation of a session and of a project (sessions/forget/anonymize.py)."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.forget.anonymize import AnonymizationConfig, anonymize_session, start_run
from sessions.models import Entity, Message, MessageChunk, Pseudonym, Session
from tests.factories import (
    EntityFactory,
    MembershipFactory,
    MessageFactory,
    ProjectFactory,
    SessionFactory,
    UserFactory,
)

NAMES = ["John Smith", "John", "Smith", "jsmith", "Maria Garcia", "Maria"]
EMAIL = "john.smith@acme-corp.com"
PHONE = "+44 20 7946 0958"
IP = "203.0.113.42"
PATH = "/home/jsmith/shop/src/checkout.py"


def apply(session, config=None, by=None):
    run = start_run(session.project, config or AnonymizationConfig(), dry_run=False)
    return anonymize_session(session, run, by=by)


def preview(session, config=None):
    run = start_run(session.project, config or AnonymizationConfig(), dry_run=True)
    return anonymize_session(session, run)


@pytest.fixture
def shop(db):
    """A project "E-Commerce" of team "Acme" with member John Smith (jsmith), and a session
    where he, Maria Garcia (a user_name only) and the project are named everywhere."""
    project = ProjectFactory(name="E-Commerce", slug="e-commerce", team__name="Acme Corp")
    user = UserFactory(username="jsmith", first_name="John", last_name="Smith")
    MembershipFactory(team=project.team, user=user)
    session = SessionFactory(
        project=project,
        title="John Smith fixes E-Commerce checkout",
        user_name="Maria Garcia",
        summary=f"John and Maria debugged {PATH} on {IP}.",
        topics=["e-commerce", "checkout"],
        artifacts=[PATH],
        metadata={"owner": "Maria Garcia", "cwd": "/home/jsmith/shop", "host": IP},
    )
    MessageFactory(
        session=session,
        seq=0,
        role="user",
        author="Maria",
        content=f"Hi, I'm Maria. Mail {EMAIL} or call {PHONE}; John wrote {PATH}.",
        metadata={"git_user": "jsmith"},
    )
    MessageFactory(
        session=session,
        seq=1,
        role="assistant",
        content="Version 1.2.3 released 2024-01-15 12:30:45, build 1772743184.9849733250.",
    )
    MessageFactory(
        session=session,
        seq=2,
        role="tool",
        tool_name="Read",
        tool_call_id="call_1",
        content=f"cat {PATH}\nssh jsmith@10.1.2.3 # E-Commerce box",
        metadata={"input": {"file_path": PATH}},
    )
    EntityFactory(
        session=session, type="FILE", value=PATH, normalized=PATH, context=f"John: {PATH}"
    )
    EntityFactory(
        session=session,
        type="FILE",
        value="/home/maria/shop/src/checkout.py",
        normalized="/home/maria/shop/src/checkout.py",
        count=2,
    )
    return session


def everything_of(session: Session) -> str:
    """Every text of the session's rows a person or a search could see."""
    session.refresh_from_db()
    rows = [
        session.title,
        session.user_name,
        session.summary,
        json.dumps(session.topics),
        json.dumps(session.artifacts),
        json.dumps(session.metadata),
    ]
    for m in Message.objects.filter(session=session):
        rows += [m.content, m.author, m.tool_name, json.dumps(m.metadata)]
    for e in Entity.objects.filter(session=session):
        rows += [e.value, e.normalized, e.context]
    rows += list(MessageChunk.objects.filter(session=session).values_list("text", flat=True))
    return "\n".join(rows)


def assert_nothing_personal_left(session):
    text = everything_of(session)
    for secret in [*NAMES, "Garcia", EMAIL, "7946", IP, "10.1.2.3", "/home/", "E-Commerce"]:
        assert secret.lower() not in text.lower(), secret


def test_apply_replaces_every_name_address_and_path(shop):
    outcome = apply(shop)
    assert_nothing_personal_left(shop)
    shop.refresh_from_db()
    # Numbered in the order they are met: the title first.
    assert shop.user_name == "User-2"
    assert shop.title == "User-1 fixes Project-A checkout"
    assert shop.topics == ["Project-A", "checkout"]
    first = Message.objects.get(session=shop, seq=0)
    assert first.author == "User-2"
    assert first.content == (
        "Hi, I'm User-2. Mail [EMAIL-1] or call [PHONE-1]; User-1 wrote /path/…/checkout.py."
    )
    assert first.metadata == {"git_user": "User-1"}
    assert outcome.replacements["email"] == 1 and outcome.replacements["phone"] == 1
    assert outcome.mapping["User-1"] >= {"John Smith", "John", "jsmith"}
    # The structure stays: roles, order, tool links.
    tool = Message.objects.get(session=shop, seq=2)
    assert (tool.role, tool.tool_call_id, tool.tool_name) == ("tool", "call_1", "Read")
    assert tool.content == "cat /path/…/checkout.py\nssh User-1@[IP-2] # Project-A box"
    # Dates, versions and timestamps are not phone numbers or addresses.
    assert Message.objects.get(session=shop, seq=1).content.startswith("Version 1.2.3 released")
    # Two files that became the same one are merged, their counts added.
    entities = list(Entity.objects.filter(session=shop))
    assert [(e.value, e.count) for e in entities] == [("/path/…/checkout.py", 3)]


def test_preview_says_what_changes_and_writes_nothing(shop):
    def snapshot():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT md5(string_agg(content || author || metadata::text, '|' ORDER BY seq)) "
                "FROM agent_sessions_message WHERE session_id = %s",
                [shop.pk],
            )
            messages = cursor.fetchone()[0]
        session = Session.objects.filter(pk=shop.pk).values().get()
        entities = list(Entity.objects.filter(session=shop).values())
        return messages, session, entities, Pseudonym.objects.count()

    before = snapshot()
    outcome = preview(shop)
    assert snapshot() == before
    assert outcome.dry_run and outcome.messages_changed == 2 and outcome.entities_changed == 2
    assert outcome.replacements["user"] >= 5 and outcome.replacements["path"] >= 4
    assert any("Maria" in e["before"] and "User-2" in e["after"] for e in outcome.excerpts)
    # The preview promises what the apply does.
    assert apply(shop).as_dict()["mapping"] == outcome.as_dict()["mapping"]


def test_generic_placeholders_and_options_off(shop):
    config = AnonymizationConfig(
        replace_with_placeholders=False, remove_file_paths=False, remove_phones=False
    )
    apply(shop, config)
    first = Message.objects.get(session=shop, seq=0)
    assert first.content == (
        f"Hi, I'm [REMOVED]. Mail [REMOVED] or call {PHONE}; [REMOVED] wrote "
        "/home/[REMOVED]/shop/src/checkout.py."
    )
    assert not Pseudonym.objects.exists()


def test_without_structure_timestamps_links_and_metadata_go(shop):
    apply(shop, AnonymizationConfig(preserve_structure=False))
    tool = Message.objects.get(session=shop, seq=2)
    assert (tool.tool_call_id, tool.timestamp, tool.metadata) == ("", None, {})
    assert tool.role == "tool" and tool.seq == 2


def test_the_same_person_is_the_same_placeholder_across_the_project(shop):
    other = SessionFactory(project=shop.project, user_name="Peter Parker")
    MessageFactory(session=other, seq=0, content="Peter asked Maria and John Smith")
    third = SessionFactory(project=shop.project)
    MessageFactory(session=third, seq=0, content="Maria again, and jsmith")
    run = start_run(shop.project, AnonymizationConfig(), dry_run=False)
    for session in (other, shop, third):
        anonymize_session(session, run)
    # Numbers are given in the order people are met.
    assert Message.objects.get(session=other).content == "User-1 asked User-2 and User-3"
    assert Message.objects.get(session=third).content == "User-2 again, and User-3"
    assert Session.objects.get(pk=shop.pk).user_name == "User-2"
    # A later run keeps them: a new session naming John (a member) and Peter's e-mail.
    later = SessionFactory(project=shop.project)
    MessageFactory(session=later, seq=0, content="John Smith, mail john.smith@acme-corp.com")
    apply(later)
    assert Message.objects.get(session=later).content == "User-3, mail [EMAIL-1]"
    # Only keyed hashes are kept, never the names.
    assert not Pseudonym.objects.filter(digest__icontains="smith").exists()
    assert Pseudonym.objects.filter(kind="user").count() == 3


def test_the_search_index_follows_the_new_text(shop):
    apply(shop)
    words = Message.objects.filter(session=shop, search_vector="maria")
    assert not words.exists()
    assert Message.objects.filter(session=shop, search_vector="user-2").exists()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM agent_sessions_message WHERE session_id = %s "
            "AND context_vector @@ plainto_tsquery('english', 'maria')",
            [shop.pk],
        )
        assert cursor.fetchone()[0] == 0
    changed = Message.objects.filter(session=shop, seq__in=[0, 2])
    assert set(changed.values_list("enrichment_status", flat=True)) == {"pending"}
    assert Session.objects.get(pk=shop.pk).enrichment_status == "pending"


def test_a_reply_embedded_with_a_rewritten_message_is_embedded_again(shop):
    from sessions.enrich import pipeline

    MessageFactory(session=shop, seq=3, role="assistant", content="John Smith wrote the fix.")
    thanks = MessageFactory(session=shop, seq=4, role="user", content="Thanks, that works.")
    while pipeline.embed_pending_messages():
        pass
    [chunk] = MessageChunk.objects.filter(message=thanks)
    assert "John Smith" in chunk.text  # the turn before it, as its context
    apply(shop)
    thanks.refresh_from_db()
    assert thanks.enrichment_status == "pending"
    assert not MessageChunk.objects.filter(message=thanks).exists()
    while pipeline.embed_pending_messages():
        pass
    [chunk] = MessageChunk.objects.filter(message=thanks)
    assert chunk.text.endswith("user: Thanks, that works.") and "wrote the fix" in chunk.text
    assert_nothing_personal_left(shop)


names = st.sampled_from([*NAMES, EMAIL, PHONE, IP, PATH, "E-Commerce", "Acme Corp"])
filler = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=20
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.one_of(names, filler), min_size=1, max_size=8),
    config=st.builds(AnonymizationConfig),
)
def test_anonymising_twice_changes_nothing_the_second_time(shop, parts, config):
    message = Message.objects.get(session=shop, seq=1)
    message.content = " ".join(parts)
    message.save(update_fields=["content"])
    apply(shop, config)
    once = everything_of(shop)
    outcome = apply(shop, config)
    assert everything_of(shop) == once
    assert outcome.messages_changed == 0 and outcome.sessions_changed == 0
