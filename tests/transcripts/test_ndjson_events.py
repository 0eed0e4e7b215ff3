import json
from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.ndjson_events import parse_events, parse_ndjson_events

from .helpers import check_invariants

SEED_EVENTS = [
    {"ts": 1704067200, "source": "chainlit", "session_id": "chainlit:abc123",
     "person_id": "p_me", "char_id": "char_cathy", "sender": "user",
     "text": "How are you today?"},
    {"ts": 1704067205, "source": "chainlit", "session_id": "chainlit:abc123",
     "person_id": "p_me", "char_id": "char_cathy", "sender": "assistant",
     "text": "I'm doing well, Sam! How about you?"},
    {"ts": 1704067300, "source": "discord", "session_id": "discord:xyz",
     "person_id": "p_sam", "char_id": "char_bob", "sender": "user", "text": "שלום 👋"},
    {"ts": 1704067210, "source": "chainlit", "session_id": "chainlit:abc123",
     "person_id": "p_me", "char_id": "char_cathy", "sender": "user", "text": "Great."},
]  # fmt: skip


def _ndjson(events) -> bytes:
    return "\n".join(json.dumps(e, ensure_ascii=False) for e in events).encode()


def test_events_are_grouped_by_session():
    sessions = parse_ndjson_events(_ndjson(SEED_EVENTS))
    assert [s.external_id for s in sessions] == ["chainlit:abc123", "discord:xyz"]
    cathy, bob = sessions
    for session in sessions:
        check_invariants(session)
        assert session.source_format == "ndjson_events"
    assert (cathy.agent_name, cathy.user_name, cathy.metadata) == (
        "char_cathy",
        "p_me",
        {"source": "chainlit"},
    )
    assert [(m.role, m.content) for m in cathy.messages] == [
        ("user", "How are you today?"),
        ("assistant", "I'm doing well, Sam! How about you?"),
        ("user", "Great."),
    ]
    assert cathy.messages[0].timestamp == datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
    assert cathy.started_at == datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
    assert cathy.ended_at == datetime(2024, 1, 1, 0, 0, 10, tzinfo=UTC)
    assert cathy.messages[1].author == "char_cathy"
    assert bob.messages[0].content == "שלום 👋"


def test_client_ids_are_stable_and_repeats_distinct():
    events = [dict(SEED_EVENTS[0]), dict(SEED_EVENTS[0]), dict(SEED_EVENTS[1])]
    [first] = parse_events(events)
    [again] = parse_events(events)
    ids = [m.client_id for m in first.messages]
    assert ids == [m.client_id for m in again.messages]
    assert ids[0].startswith("ev-") and ids[1] == ids[0] + "#2"
    assert len(set(ids)) == 3
    [with_id] = parse_events([{**SEED_EVENTS[0], "id": "evt-7"}])
    assert with_id.messages[0].client_id == "evt-7"


def test_senders_and_time_forms():
    base = {"session_id": "s", "char_id": "char_cathy", "text": "x"}
    events = [
        {**base, "sender": "Human", "ts": "2024-01-01T00:00:00Z"},
        {**base, "sender": "char_cathy", "ts": 1704067200000},  # milliseconds
        {**base, "sender": "Narrator", "ts": 1704067200.5},
        {**base, "sender": "system"},
    ]
    [session] = parse_events(events)
    assert [(m.role, m.author) for m in session.messages] == [
        ("user", ""),
        ("assistant", "char_cathy"),
        ("assistant", "Narrator"),
        ("system", ""),
    ]
    assert session.messages[1].timestamp == datetime(2024, 1, 1, tzinfo=UTC)
    assert session.messages[2].timestamp == datetime(2024, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)
    assert session.messages[3].timestamp is None


@pytest.mark.parametrize(
    ("event", "field", "words"),
    [
        ({"session_id": "s", "sender": "user"}, "text", "has no 'text'"),
        ({"session_id": "s", "sender": "user", "text": ["a"]}, "text", "'text' must be a string"),
        ({"sender": "user", "text": "a"}, "session_id", "has no 'session_id'"),
        ({"session_id": "s", "sender": "user", "text": "a", "ts": "yesterday"}, "ts",
         "not an ISO-8601 time"),
        ({"session_id": {"id": 1}, "sender": "user", "text": "a"}, "session_id",
         "'session_id' must be a string"),
    ],
)  # fmt: skip
def test_bad_events_name_line_and_field(event, field, words):
    good = SEED_EVENTS[0]
    data = _ndjson([good, good]) + b"\n\n" + _ndjson([event])  # a blank line: event on line 4
    with pytest.raises(ImportFormatError) as caught:
        parse_ndjson_events(data)
    assert (caught.value.line, caught.value.field) == (4, field)
    assert words in caught.value.message


def test_decoded_events_use_their_position_as_line():
    with pytest.raises(ImportFormatError) as caught:
        parse_events([SEED_EVENTS[0], "not an object"])
    assert caught.value.line == 2
    with pytest.raises(ImportFormatError) as caught:
        parse_events([{"sender": "user", "text": "a"}], first_line=11)
    assert caught.value.line == 11
