"""Paths and small helpers shared by the importer tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from transcripts.base import ROLES, ParsedSession

# The real sample files sit beside the checkout (../shared/samples), in CI too.
SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"


def sample(relative: str) -> bytes:
    return (SAMPLES / relative).read_bytes()


def fixture(relative: str) -> bytes:
    return (FIXTURES / relative).read_bytes()


def roles(session: ParsedSession) -> Counter:
    return Counter(m.role for m in session.messages)


def check_invariants(session: ParsedSession) -> None:
    """What every importer promises for every session."""
    assert session.source_format
    ids = [m.client_id for m in session.messages]
    assert all(ids), "every message has a client id"
    assert len(ids) == len(set(ids)), "client ids are unique within a session"
    for message in session.messages:
        assert message.role in ROLES
        assert isinstance(message.content, str)
        if message.timestamp is not None:
            assert message.timestamp.tzinfo is not None
        if message.role == "tool" and message.tool_call_id:
            calls = [
                m
                for m in session.messages
                if m.role == "assistant" and m.tool_call_id == message.tool_call_id
            ]
            assert len(calls) == 1, f"result {message.tool_call_id} links to exactly one call"
        json.dumps(message.metadata)  # metadata is stored as JSON: it must serialise
    json.dumps(session.metadata)
    for moment in (session.started_at, session.ended_at):
        assert moment is None or moment.tzinfo is not None
