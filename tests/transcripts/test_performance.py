"""A 100k-message file parses in seconds (linear time).

Timed in this process's CPU time, not wall time: the machines are shared, and other
processes' load must not fail a test of the parser's own cost (a quadratic parser would take
minutes, far over the limit either way)."""

import json
import time

from transcripts import parse

LIMIT_SECONDS = 15  # CPU seconds: generous for slow CI machines; locally these take 1-3 s


def _timed(data: bytes, fmt: str):
    start = time.process_time()
    sessions = parse(data, format=fmt)
    return sessions, time.process_time() - start


def test_claude_code_100k_messages():
    lines = []
    parent = None
    for i in range(50_000):
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "uuid": f"u{i}",
                    "parentUuid": parent,
                    "sessionId": "s",
                    "timestamp": "2025-01-01T00:00:00Z",
                    "message": {"role": "user", "content": f"question {i}"},
                }
            )
        )
        text = [{"type": "text", "text": f"answer {i}"}]
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": f"a{i}",
                    "parentUuid": f"u{i}",
                    "sessionId": "s",
                    "timestamp": "2025-01-01T00:00:01Z",
                    "message": {"id": f"m{i}", "role": "assistant", "model": "x", "content": text},
                }
            )
        )
        parent = f"a{i}"  # fmt: skip
    [session], seconds = _timed("\n".join(lines).encode(), "claude_code")
    assert len(session.messages) == 100_000
    assert seconds < LIMIT_SECONDS


def test_codex_100k_messages():
    lines = [json.dumps({"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta",
                         "payload": {"id": "s"}})]  # fmt: skip
    for i in range(50_000):
        lines.append(
            json.dumps(
                {
                    "timestamp": "2025-01-01T00:00:00Z",
                    "type": "event_msg",
                    "payload": {"type": "user_message", "message": f"q{i}"},
                }
            )
        )
        reply = [{"type": "output_text", "text": f"a{i}"}]
        lines.append(json.dumps({"timestamp": "2025-01-01T00:00:00Z", "type": "response_item",
                                 "payload": {"type": "message", "role": "assistant",
                                             "content": reply}}))  # fmt: skip
    [session], seconds = _timed("\n".join(lines).encode(), "codex")
    assert len(session.messages) == 100_000
    assert seconds < LIMIT_SECONDS


def test_ndjson_and_plain_text_100k_messages():
    events = "\n".join(
        json.dumps({"ts": 1704067200 + i, "session_id": f"s{i % 7}", "sender": "user",
                    "text": f"t{i}"})
        for i in range(100_000)
    )  # fmt: skip
    sessions, seconds = _timed(events.encode(), "ndjson_events")
    assert sum(len(s.messages) for s in sessions) == 100_000
    assert seconds < LIMIT_SECONDS
    text = "\n".join(f"User: q{i}\nAssistant: a{i}" for i in range(50_000))
    [session], seconds = _timed(text.encode(), "plain_text")
    assert len(session.messages) == 100_000
    assert seconds < LIMIT_SECONDS


def test_aider_and_openai_100k_messages():
    blocks = ["# aider chat started at 2025-01-01 00:00:00\n"]
    for i in range(33_334):
        blocks.append(f"#### question {i}  \n\nanswer {i}\n\n> Tokens: 1k sent  \n")
    [session], seconds = _timed("\n".join(blocks).encode(), "aider")
    assert len(session.messages) == 100_002
    assert seconds < LIMIT_SECONDS
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"m{i}"}
                for i in range(100_000)]  # fmt: skip
    [session], seconds = _timed(json.dumps(messages).encode(), "openai_chat")
    assert len(session.messages) == 100_000
    assert seconds < LIMIT_SECONDS
