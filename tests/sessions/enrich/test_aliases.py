"""Who is who: aliases learned from real-shaped chats at session enrichment
(sessions/enrich/aliases.py), on real PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.capture.service import append_messages, capture_session
from sessions.enrich import aliases, pipeline
from sessions.models import EnrichmentStatus, Session, SpeakerAlias
from tests.factories import ProjectFactory
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db


def chat(project, lines, *, agent="chat", persona="", user=""):
    """A session of ``(author, text)`` lines (author "" with role assistant for the agent,
    "system:" for an injected prompt), enriched."""
    messages = []
    for author, text in lines:
        if author == "system:":
            messages.append(ParsedMessage(role="system", content=text))
        elif author == "agent:":
            messages.append(ParsedMessage(role="assistant", content=text))
        else:
            messages.append(ParsedMessage(role="user", author=author, content=text))
    parsed = ParsedSession(
        source_format="api",
        agent_name=agent,
        agent_persona=persona,
        user_name=user,
        started_at=timezone.now(),
        messages=messages,
    )
    session = capture_session(project, parsed).session
    enrich(session)
    return session


def enrich(session):
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    while pipeline.enrich_pending_sessions():
        pass
    session.refresh_from_db()
    assert session.enrichment_status == EnrichmentStatus.DONE, session.enrichment_error


def learned(project, usable=True) -> dict[tuple[str, str], int]:
    rows = SpeakerAlias.objects.filter(project=project)
    if usable:
        rows = rows.filter(evidence__gte=aliases.USABLE)
    return {(a.alias_key, a.speaker): a.evidence for a in rows}


TWO_FRIENDS = [
    ("katherine.s", "Hey Rob! Did you see the match last night?"),
    ("rsmith", "Morning Kate, I did, what a finish."),
    ("katherine.s", "I still can't believe the last goal."),
    ("rsmith", "Kate, are you coming on Saturday?"),
    ("katherine.s", "Yes, see you there, Rob!"),
]


def test_two_speakers_call_each_other_by_names_that_are_not_their_display_names():
    project = ProjectFactory()
    chat(project, TWO_FRIENDS)
    found = learned(project)
    assert found[("kate", "katherine.s")] >= 2
    assert found[("rob", "rsmith")] >= 2
    assert ("katherine", "katherine.s") in found  # the first word of a display name
    row = SpeakerAlias.objects.get(project=project, alias_key="kate")
    assert row.alias == "Kate" and row.source == "vocative" and not row.is_agent
    assert row.team_id == project.team_id


def test_in_a_group_the_name_goes_to_whoever_answers():
    project = ProjectFactory()
    chat(
        project,
        [
            ("anna_b", "Hi all, quick question about the trip."),
            ("tom99", "Sure, go ahead."),
            ("anna_b", "Thanks Mel! Did you book the hotel?"),
            ("mk_2000", "Yes, two rooms near the station."),
            ("tom99", "Hey Mel, can you send me the address?"),
            ("mk_2000", "Sent it just now."),
        ],
    )
    found = learned(project)
    assert found == {("mel", "mk_2000"): 4}  # "Hi all" and "Sure," are no names


def test_a_weak_sighting_alone_is_not_used_and_the_own_name_is_never_an_alias():
    project = ProjectFactory()
    chat(
        project,
        [
            ("Caroline", "I went to the support group yesterday."),
            ("Melanie", "That sounds great, Caroline! How was it?"),  # her own name: no alias
            ("Caroline", "It was lovely. Sam, did you go too?"),
        ],
    )
    assert ("caroline", "Caroline") not in learned(project, usable=False)
    assert learned(project, usable=False) == {("sam", "Melanie"): 1}
    assert learned(project) == {}


def test_common_words_days_and_lower_case_words_are_no_names():
    project = ProjectFactory()
    chat(
        project,
        [
            ("a_one", "Hi All! Thanks Again for Monday."),
            ("b_two", "Well, you know how it goes. Happy Friday, Everyone!"),
            ("a_one", "Thanks, I'm glad. Hey Buddy, how are you?"),
            ("b_two", "Hey Will! I will be there, promise."),
            ("a_one", "Bye January! Good morning Sunshine, sunshine is here."),
            ("b_two", "Thanks! Glad you liked it. Hey! Appreciate the help."),
            ("a_one", "Hey Boston's finest, how are you?"),
        ],
    )
    assert learned(project, usable=False) == {}


LOWER_CASE_FRIEND = [
    ("Katherine Smith", "Hey Rob! Did you see the match last night?"),
    ("rsmith", "hey kate! yeah what a finish"),
    ("Katherine Smith", "I still can't believe the last goal."),
    ("rsmith", "thanks kate :) see you saturday"),
    ("rsmith", "hey quick question, is the bar still open?"),
    ("rsmith", "are you still doing the night shifts?"),
    ("rsmith", "ok thanks bud"),
]


def test_a_writer_in_lower_case_names_people_in_lower_case_too():
    project = ProjectFactory()
    chat(project, LOWER_CASE_FRIEND)
    found = learned(project)
    assert found[("kate", "Katherine Smith")] == 2 * aliases.WEAK
    assert found[("rob", "rsmith")] == aliases.STRONG
    # "quick" goes on to a word, "bud" is a way of addressing anyone, "night" opens no
    # sentence in "the night shifts?": no names.
    assert set(learned(project, usable=False)) == {("kate", "Katherine Smith"), ("rob", "rsmith")}


def test_a_writer_who_capitalises_gets_no_lower_case_names():
    project = ProjectFactory()
    chat(
        project,
        [
            ("Katherine Smith", "Hey there."),
            ("rsmith", "Hey kate! Morning."),
            ("Katherine Smith", "Morning!"),
            ("rsmith", "Thanks kate, see you."),
        ],
    )
    assert learned(project, usable=False) == {}


def test_self_introductions_personas_and_an_injected_prompt_name_the_agent():
    project = ProjectFactory()
    chat(
        project,
        [
            ("system:", "You are Sally, the product manager of this team."),
            ("p.ng", "Hello! My name is Priya, I lead the backend."),
            ("agent:", "Nice to meet you. How can I help?"),
        ],
        agent="pm",
        persona="Winston",
    )
    found = {
        (a.alias_key, a.speaker, a.is_agent, a.source)
        for a in SpeakerAlias.objects.filter(project=project, evidence__gte=aliases.USABLE)
    }
    # (No name part: "p" of "p.ng" is one letter.)
    assert found == {
        ("winston", "pm", True, "persona"),
        ("sally", "pm", True, "persona"),
        ("priya", "p.ng", False, "self"),
    }


def test_evidence_adds_up_across_sessions_and_is_counted_once_per_message():
    project = ProjectFactory()
    line = [("a.b", "hi"), ("c_d", "Good evening, Jo."), ("a.b", "hi again")]  # strong + weak
    chat(project, line)
    assert learned(project) == {("jo", "a.b"): 2}
    chat(project, line)
    assert learned(project) == {("jo", "a.b"): 4}


def test_re_enrichment_counts_nothing_twice_and_an_append_adds_only_the_new_messages():
    project = ProjectFactory()
    session = chat(project, TWO_FRIENDS)
    before = learned(project, usable=False)
    # Enriched again from scratch, as after a compaction or a message's removal.
    Session.objects.filter(pk=session.pk).update(
        enriched_through_seq=-1, enrichment_status=EnrichmentStatus.PENDING
    )
    enrich(session)
    assert learned(project, usable=False) == before

    append_messages(session, [ParsedMessage(role="user", author="rsmith", content="Bye Kate!")])
    enrich(session)
    after = learned(project, usable=False)
    assert after[("kate", "katherine.s")] == before[("kate", "katherine.s")] + aliases.STRONG
    assert {k: v for k, v in after.items() if k[0] != "kate"} == {
        k: v for k, v in before.items() if k[0] != "kate"
    }


def test_a_removed_message_takes_its_sightings_back(user):
    from sessions.forget.messages import remove_message

    project = ProjectFactory()
    session = chat(project, TWO_FRIENDS)
    kate = learned(project)[("kate", "katherine.s")]
    message = session.messages.get(seq=3)  # "Kate, are you coming on Saturday?"
    remove_message(session, message.seq, by=user)
    enrich(Session.objects.get(pk=session.pk))
    assert learned(project, usable=False)[("kate", "katherine.s")] == kate - aliases.WEAK


def test_aliases_stay_in_their_project():
    first, second = ProjectFactory(), ProjectFactory()
    chat(first, TWO_FRIENDS)
    assert SpeakerAlias.objects.filter(project=second).count() == 0
    assert set(SpeakerAlias.objects.values_list("team_id", flat=True)) == {first.team_id}


@given(st.text(max_size=300))
def test_reading_names_never_fails_and_finds_only_capitalised_uncommon_words(text):
    for name, weight in [*aliases.vocatives(text), *aliases.self_introductions(text)]:
        assert aliases.is_name(name) and weight in (aliases.WEAK, aliases.STRONG)
    for name in aliases.prompt_personas(text):
        assert aliases.is_name(name)
    for name in aliases.lower_case_vocatives(text):
        assert name.islower() and len(name) >= 3 and name not in aliases.NOT_NAMES


@pytest.mark.django_db(transaction=True)
def test_two_sessions_of_a_project_learning_at_once_add_up_without_deadlock():
    import threading

    from django.db import connection, transaction

    from sessions.models import Message

    project = ProjectFactory()
    sessions = []
    for _ in range(2):
        parsed = ParsedSession(
            source_format="api",
            agent_name="chat",
            started_at=timezone.now(),
            messages=[
                ParsedMessage(role="user", author=author, content=text)
                for author, text in TWO_FRIENDS
            ],
        )
        sessions.append(capture_session(project, parsed).session)
    both_ready, failures = threading.Barrier(2), []

    def learn(session):
        try:
            new = list(Message.objects.filter(session=session).order_by("seq"))
            update = aliases.learn(session, new, from_scratch=True)
            with transaction.atomic():
                both_ready.wait(timeout=30)
                update.save(session)
        except Exception as error:  # reported below, from the test's thread
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=learn, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    alone = ProjectFactory()
    chat(alone, TWO_FRIENDS)
    assert learned(project, usable=False) == {k: 2 * v for k, v in learned(alone, False).items()}


def test_a_session_in_the_trash_counts_for_no_alias_until_it_is_restored(user):
    from sessions.forget.lifecycle import restore, soft_delete

    project = ProjectFactory()
    kept = chat(project, TWO_FRIENDS)
    trashed = chat(project, TWO_FRIENDS)
    one_session = {k: v // 2 for k, v in learned(project, usable=False).items()}
    # An append not yet enriched when the session goes to the trash is enriched there: its
    # metadata changes, the project's aliases do not; restoring gives back all it holds.
    append_messages(trashed, [ParsedMessage(role="user", author="rsmith", content="Bye Kate!")])
    soft_delete(trashed, by=user)
    assert learned(project, usable=False) == one_session
    enrich(Session.objects.get(pk=trashed.pk))
    assert learned(project, usable=False) == one_session
    restore(Session.objects.get(pk=trashed.pk))
    after = learned(project, usable=False)
    assert after[("kate", "katherine.s")] == 2 * one_session[("kate", "katherine.s")] + (
        aliases.STRONG
    )
    assert kept.deleted_at is None


STEPS = st.lists(
    st.tuples(st.sampled_from(["append", "enrich", "trash", "restore"]), st.integers(0, 1)),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_aliases_always_add_up_the_contributions_of_the_sessions_outside_the_trash(user, steps):
    """Whatever the order of appends, enrichments, deletions and restores, a project's
    evidence is the sum of what its sessions outside the trash contributed."""
    from sessions.capture.service import CaptureError
    from sessions.forget.lifecycle import LifecycleConflict, restore, soft_delete

    project = ProjectFactory()
    sessions = [chat(project, TWO_FRIENDS[:2]), chat(project, TWO_FRIENDS[:2])]
    for action, which in steps:
        session = Session.objects.get(pk=sessions[which].pk)
        try:
            if action == "append":
                line = ParsedMessage(role="user", author="rsmith", content="Thanks, Kate!")
                append_messages(session, [line])
            elif action == "enrich":
                enrich(session)
            elif action == "trash":
                soft_delete(session, by=user)
            else:
                restore(session)
        except (LifecycleConflict, CaptureError):
            pass  # already in that state, or an append to the trash: nothing changes
    expected = {}
    for session in Session.objects.filter(pk__in=[s.pk for s in sessions], deleted_at=None):
        for alias, speaker, _agent, _source, weight in session.metadata.get(
            aliases.METADATA_KEY, []
        ):
            key = (alias.lower(), speaker)
            expected[key] = expected.get(key, 0) + weight
    assert {k: v for k, v in learned(project, usable=False).items() if v} == expected
