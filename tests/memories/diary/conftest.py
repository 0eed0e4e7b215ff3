"""A person (sam) with two characters (cathy, rex) on one day, in ``project``."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memories.capture.record import MemoryDraft, record
from tests.factories import MessageFactory, SessionFactory

DAY = date(2026, 1, 11)
AT = datetime(2026, 1, 11, 9, 0, tzinfo=UTC)


def chat(project, person, character, lines, *, at=AT, **fields):
    session = SessionFactory(
        project=project, user_name=person, agent_name=character, started_at=at, **fields
    )
    for seq, (role, text) in enumerate(lines):
        MessageFactory(session=session, seq=seq, role=role, content=text, timestamp=at)
    return session


@pytest.fixture
def sam(project):
    """sam's day: a trip planned with cathy (a decision, a shared preference, cathy's own
    fact) and code reviewed with rex."""
    with_cathy = chat(
        project,
        "sam",
        "cathy",
        [
            ("user", "Let's plan the trip to Lisbon in May."),
            ("assistant", "Lisbon in May is lovely. Shall we book the train?"),
            ("user", "Yes, we decided to take the night train."),
        ],
    )
    with_rex = chat(
        project,
        "sam",
        "rex",
        [
            ("user", "Review the parser in src/parse.py please."),
            ("assistant", "The parser drops empty lines; I fixed it."),
        ],
        at=AT.replace(hour=15),
    )
    record(
        project,
        MemoryDraft("decision", "Take the night train to Lisbon", with_cathy, agent="cathy"),
    )
    record(
        project,
        MemoryDraft("preference", "Sam is vegetarian", with_cathy, agent="cathy", shared=True),
    )
    record(project, MemoryDraft("fact", "Sam's sister lives in Porto", with_cathy, agent="cathy"))
    return {"cathy": with_cathy, "rex": with_rex}
