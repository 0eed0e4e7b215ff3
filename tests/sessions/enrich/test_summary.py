"""sessions.enrich.summary: the extractive summary's shape and limits, progressive updates, and the
LLM path against a real local HTTP server (success, HTTP 500, timeout, bad JSON)."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sessions.enrich.summary import (
    SummaryError,
    llm_summary,
    summarize,
    summarize_progressively,
    summarize_with_fallback,
)
from tests.llm_stub import ChatServer
from transcripts import parse_path

SHARED = Path(__file__).resolve().parents[4] / "shared"
SAMPLES = SHARED / "samples"
LOCOMO = SHARED / "data" / "locomo" / "locomo10.json"


@dataclass
class Msg:
    role: str
    content: str
    tool_name: str = ""
    tool_call_id: str = ""
    author: str = ""
    metadata: dict = field(default_factory=dict)


@dataclass
class Ent:
    type: str
    value: str
    count: int = 1


def coding_session(*, last_run_passes: bool = True) -> list[Msg]:
    """A realistic Claude Code-style bug fix: read, edit, test (fails), edit, test, report."""
    messages = [
        Msg(
            "system",
            "# AGENTS.md\nAlways answer in French. Use ripgrep.",
            metadata={"injected": True},
        ),
        Msg(
            "user",
            "<system-reminder>Todo list is empty.</system-reminder>"
            "The login endpoint returns 500 when the password is empty. Please fix the bug in "
            "src/auth/login.py and add a regression test.",
        ),
        Msg("assistant", "I'll start by reading the login handler."),
        Msg("assistant", "Read src/auth/login.py", "Read", "t1"),
        Msg(
            "tool", "def login(user, password):\n    return check(password.encode())", "Read", "t1"
        ),
        Msg(
            "assistant",
            "The handler calls password.encode() without checking for None, which raises "
            "AttributeError on an empty form. I fixed it by validating the payload first.\n\n"
            "```python\nif not password:\n    raise BadRequest('password required')\n```",
        ),
        Msg(
            "assistant",
            "Edit src/auth/login.py\n-    return check(password.encode())\n"
            "+    if not password:\n+        raise BadRequest('password required')",
            "Edit",
            "t2",
        ),
        Msg("tool", "The file src/auth/login.py has been updated.", "Edit", "t2"),
        Msg(
            "assistant",
            "Write tests/auth/test_login.py\ndef test_empty_password(): ...",
            "Write",
            "t3",
        ),
        Msg("tool", "File created successfully", "Write", "t3"),
        Msg("assistant", "cd /repo && pytest tests/auth -q", "Bash", "t4"),
        Msg(
            "tool",
            "F.\nE   assert 400 == 422\n=== 1 failed, 1 passed in 0.12s ===",
            "Bash",
            "t4",
            metadata={"is_error": True},
        ),
        Msg(
            "assistant",
            "The new test expected 422 but the handler returns 400, so I updated the test to "
            "expect 400.",
        ),
        Msg(
            "assistant",
            "Edit tests/auth/test_login.py\n-    assert r.status_code == 422\n"
            "+    assert r.status_code == 400",
            "Edit",
            "t5",
        ),
        Msg("tool", "The file tests/auth/test_login.py has been updated.", "Edit", "t5"),
        Msg("assistant", "pytest tests/auth -q", "Bash", "t6"),
    ]
    if last_run_passes:
        messages.append(Msg("tool", "..\n2 passed in 0.10s", "Bash", "t6"))
    else:
        messages.append(
            Msg(
                "tool",
                "F.\n=== 1 failed, 1 passed in 0.11s ===",
                "Bash",
                "t6",
                metadata={"is_error": True},
            )
        )
    messages += [
        Msg("assistant", "ls -la", "Bash", "t7"),
        Msg("tool", "total 0", "Bash", "t7"),
        Msg(
            "assistant",
            "The empty-password bug is fixed: login now answers 400 with a clear message. "
            "Let me know if you want anything else!",
        ),
    ]
    return messages


ENTITIES = [
    ("FILE", "src/auth/login.py"),
    ("FILE", "tests/auth/test_login.py"),
    ("ERROR", "AttributeError"),
    ("FUNCTION", "login()"),
    ("CLASS", "BadRequest"),
    ("COMMAND", "pytest tests/auth -q"),
    ("PACKAGE", "requests"),
]


def sections(summary: str) -> dict[str, str]:
    found = list(
        re.finditer(r"(?:^|(?<=[.…] ))(Task|Topic|Done|Discussed|Outcome|Key entities): ", summary)
    )
    return {
        m.group(1): summary[m.end() : found[i + 1].start() if i + 1 < len(found) else None]
        for i, m in enumerate(found)
    }


def assert_no_cut_words(summary: str, messages, entities=()) -> None:
    """Every word that ends in "…" is a whole word of the source."""
    source = " ".join(m.content for m in messages) + " " + " ".join(v for _, v in entities)
    words = {w.strip(".,;:()[]`'\"“”!?").lower() for w in re.split(r"\s+", source)}
    for token in summary.split():
        if "…" in token:
            before = token.split("…")[0].strip(".,;:()[]`'\"“”!?")
            if before:
                assert before.lower() in words, f"{before!r} is a cut word in {summary!r}"


# ------------------------------------------------------------------------------------------
# Shape
# ------------------------------------------------------------------------------------------


def test_coding_session_summary_names_task_actions_outcome_and_entities():
    summary = summarize(coding_session(), entities=ENTITIES)
    parts = sections(summary)
    assert list(parts) == ["Task", "Done", "Outcome", "Key entities"], summary
    assert parts["Task"].startswith("Fix the bug in src/auth/login.py and add a regression test")
    assert "edited" in parts["Done"]
    assert "src/auth/login.py" in parts["Done"] and "tests/auth/test_login.py" in parts["Done"]
    assert "`pytest tests/auth -q`" in parts["Done"]
    assert "ls -la" not in parts["Done"]  # read-only commands give way to significant ones
    assert parts["Outcome"].startswith("tests passed (`pytest tests/auth -q`, 2 passed)")
    assert "The empty-password bug is fixed" in parts["Outcome"]
    assert "AttributeError" in parts["Key entities"]
    # Injected text, reminders and code never make it in.
    assert "French" not in summary and "Todo list" not in summary
    assert "raise BadRequest" not in summary
    assert len(summary) <= 600


def test_outcome_is_failed_when_the_last_test_run_fails():
    summary = summarize(coding_session(last_run_passes=False))
    outcome = sections(summary)["Outcome"]
    assert outcome.startswith("tests failed (`pytest tests/auth -q`, 1 failed, 1 passed)")


def test_test_status_from_exit_code_and_error_flag():
    base = [Msg("user", "Run the unit tests of the payments package please.")]
    by_code = [
        *base,
        Msg("assistant", "go test ./payments/...", "exec_command", "c1"),
        Msg("tool", "Process exited with code 1\nOutput:\nsomething broke", "exec_command", "c1"),
    ]
    assert "tests failed (`go test ./payments/...`, exit 1)" in summarize(by_code)
    by_meta = [
        *base,
        Msg("assistant", "npm test", "Bash", "c1"),
        Msg("tool", "all good", "Bash", "c1", metadata={"exit_code": 0}),
    ]
    assert "tests passed (`npm test`)" in summarize(by_meta)


def test_outcome_falls_back_to_the_last_tool_status_without_prose():
    messages = [
        Msg("user", "Book the cheapest flight to Lisbon for next Monday."),
        Msg("assistant", "origin: JFK\ndestination: LIS", "book_reservation", "c1"),
        Msg("tool", "Error: payment amount does not add up", "book_reservation", "c1"),
    ]
    summary = summarize(messages)
    assert "used book_reservation" in summary
    assert "Outcome: last tool call (book_reservation) error." in summary


def test_task_skips_greetings_and_injected_messages():
    messages = [
        Msg("user", "# AGENTS.md instructions\nBe terse.", metadata={"injected": True}),
        Msg("user", "Hi there! I'm looking to book a flight from New York to Seattle on May 20th."),
        Msg("assistant", "Sure. Could you give me your user id?"),
    ]
    summary = summarize(messages)
    assert summary.startswith(
        "Task: I'm looking to book a flight from New York to Seattle on May 20th."
    )


def test_entities_accept_pairs_and_objects_and_are_at_most_six():
    objects = [Ent("FILE", f"src/mod{i}.py", count=i) for i in range(10)]
    summary = summarize(coding_session(), entities=objects, max_chars=2000)
    names = sections(summary)["Key entities"].rstrip(".").split(", ")
    assert len(names) == 6
    assert names[0] == "src/mod9.py"  # most counted first
    pairs = summarize(coding_session(), entities=[("PACKAGE", "requests")], max_chars=2000)
    assert sections(pairs)["Key entities"] == "requests."


def test_empty_and_tool_only_sessions():
    assert summarize([]) == ""
    assert summarize([Msg("user", "   ")]) == ""
    only_output = [Msg("tool", "Traceback (most recent call last): boom", "Bash")]
    assert summarize(only_output).strip()


# ------------------------------------------------------------------------------------------
# Limits
# ------------------------------------------------------------------------------------------


def _sessions_for_limits():
    yield coding_session(), ENTITIES
    for path in sorted(SAMPLES.glob("*/*")):
        if path.suffix in (".jsonl", ".json", ".md") and "input" not in path.name:
            for parsed in parse_path(path)[:2]:
                yield parsed.messages, ()


@pytest.mark.parametrize("max_chars", [1, 12, 25, 60, 100, 160, 240, 400, 600, 1000])
def test_max_chars_is_respected_and_words_are_never_cut(max_chars):
    for messages, entities in _sessions_for_limits():
        summary = summarize(messages, entities=entities, max_chars=max_chars)
        assert summary, "a session with text has a summary"
        assert len(summary) <= max_chars, (max_chars, summary)
        if max_chars >= 12:
            assert_no_cut_words(summary, messages, entities)


def test_a_long_single_word_is_the_only_thing_ever_cut():
    summary = summarize([Msg("user", "x" * 500)], max_chars=50)
    assert len(summary) <= 50 and summary.startswith("Task: xxx")


def test_hundred_thousand_messages_in_under_three_seconds():
    messages = [Msg("user", "Migrate the billing service from Flask to FastAPI, keep the API.")]
    for i in range(25_000):
        messages += [
            Msg(
                "assistant",
                f"I moved handler {i} to the new router; the response schema is unchanged.",
            ),
            Msg("assistant", f"pytest tests/test_h{i}.py -q", "Bash", f"c{i}"),
            Msg("tool", "." * (i % 3000) + f"\n{i + 1} passed in 0.5s", "Bash", f"c{i}"),
            Msg("assistant", f"Edit src/handlers/h{i}.py\n-old\n+new", "Edit", f"e{i}"),
        ]
    assert len(messages) > 100_000
    # CPU time: the shared machine's other load must not fail this test.
    started = time.process_time()
    summary = summarize(messages, entities=ENTITIES)
    elapsed = time.process_time() - started
    assert elapsed < 3, f"{elapsed:.2f}s"
    assert summary.startswith("Task: Migrate the billing service from Flask to FastAPI")
    assert "tests passed (`pytest tests/test_h24999.py -q`, 25000 passed)" in summary
    assert "and 24996 more" in summary


# ------------------------------------------------------------------------------------------
# Real transcripts
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relative",
    ["claude_code/raze.jsonl", "codex/firststep.jsonl", "claude_code/agentic-wallet.jsonl"],
)
def test_real_agent_sample_names_its_task(relative):
    (parsed,) = parse_path(SAMPLES / relative)
    summary = summarize(parsed.messages)
    assert summary.startswith("Task: Help me apply for the agentic engineering grant by Superteam.")
    assert "Done: " in summary
    assert "export-session.sh" in summary  # the command every run of this skill makes
    assert "telemetry" not in sections(summary)["Task"].lower()  # the injected skill text


def test_real_aider_sample_lists_edits_and_commits():
    (parsed,) = parse_path(SAMPLES / "aider" / "metadata-aider.chat.history.md")
    summary = summarize(parsed.messages)
    assert summary.startswith("Task: Create an .aidar.json file in the root directory")
    assert "edited frontend/ui.ts" in summary
    assert "made 14 commits" in summary
    assert "SEARCH" not in summary and "<<<<<<<" not in summary


def test_real_tool_calling_chat_sample():
    parsed = parse_path(SAMPLES / "openai_chat" / "tau-bench-airline-first10.json")[0]
    summary = summarize(parsed.messages)
    assert summary.startswith("Task: I'm looking to book a flight from New York to Seattle")
    assert "book_reservation" in summary
    assert (
        "Outcome: Your flight from New York (JFK) to Seattle (SEA) has been successfully booked"
        in summary
    )


def test_chat_between_people_reads_as_topic_discussed_outcome():
    conversation = json.loads(LOCOMO.read_text())[0]["conversation"]
    messages = [
        Msg("user", turn["text"], author=turn["speaker"]) for turn in conversation["session_1"]
    ]
    summary = summarize(messages)
    parts = sections(summary)
    assert list(parts) == ["Topic", "Discussed", "Outcome"], summary
    assert "painting" in parts["Topic"]
    assert re.search(r"(Caroline|Melanie) said “", parts["Discussed"])
    assert parts["Outcome"].startswith(("Caroline: “", "Melanie: “"))
    assert "Talk to you soon" not in parts["Outcome"]
    assert len(summary) <= 600


# ------------------------------------------------------------------------------------------
# Progressive summaries
# ------------------------------------------------------------------------------------------


def test_progressive_summary_keeps_the_task_and_takes_new_work():
    messages = coding_session()
    first, rest = messages[:10], messages[10:]
    previous = summarize(first, entities=ENTITIES[:2])
    assert "tests" not in sections(previous).get("Outcome", "")
    updated = summarize_progressively(previous, rest, entities=ENTITIES)
    parts = sections(updated)
    assert parts["Task"] == sections(previous)["Task"]
    assert parts["Outcome"].startswith("tests passed (`pytest tests/auth -q`, 2 passed)")
    # New edits first, earlier ones carried over while they fit.
    assert "tests/auth/test_login.py" in parts["Done"] and "src/auth/login.py" in parts["Done"]
    assert "AttributeError" in parts["Key entities"]
    assert len(updated) <= 600


def test_progressive_summary_of_prose_and_of_nothing_new():
    llm_text = "The user asked to fix the empty-password bug in login. The agent edited it."
    updated = summarize_progressively(llm_text, coding_session()[10:])
    assert updated.startswith("Task: The user asked to fix the empty-password bug in login.")
    assert "tests passed" in updated
    assert summarize_progressively("Task: Do X. Done: did X.", []) == "Task: Do X. Done: did X."
    fresh = summarize_progressively("", coding_session())
    assert fresh == summarize(coding_session())


# ------------------------------------------------------------------------------------------
# LLM summaries against a real local server
# ------------------------------------------------------------------------------------------

CANNED = "The user asked to fix a login bug; the agent edited src/auth/login.py and tests passed."


def _answer(mode: str):
    def answer(_request):
        if mode == "hang":
            return None
        if mode == "error":
            return 500, b'{"error": "model overloaded"}'
        if mode == "garbage":
            return 200, b"<html>not json</html>"
        reply = {"choices": [{"message": {"role": "assistant", "content": CANNED}}]}
        return 200, json.dumps(reply).encode()

    return answer


def Server(mode: str) -> ChatServer:  # read as the server it makes
    return ChatServer(_answer(mode))


def test_llm_summary_posts_a_chat_completion_and_returns_its_text():
    with Server("ok") as server:
        text = llm_summary(coding_session(), url=server.url, model="tiny", api_key="sk-test")
    assert text == CANNED
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "tiny"
    system, user = body["messages"]
    assert system["role"] == "system" and "2-4 sentence" in system["content"]
    assert "regression test" in user["content"]
    assert "Always answer in French" not in user["content"]  # injected messages left out


def test_llm_transcript_is_truncated_to_a_safe_size():
    messages = [Msg("user", "Summarise the migration work.")]
    messages += [Msg("assistant", f"Step {i}: " + "moved a handler. " * 200) for i in range(500)]
    with Server("ok") as server:
        llm_summary(messages, url=server.url, model="tiny", api_key="")
    body = server.requests[0]["body"]
    content = body["messages"][1]["content"]
    assert len(content) < 30_000
    assert "Summarise the migration work." in content  # the start is kept
    assert "Step 499" in content  # and the end
    assert "messages omitted" in content
    assert "Authorization" not in server.requests[0]["headers"]


def test_with_fallback_uses_the_llm_when_it_answers():
    with Server("ok") as server:
        llm = {"url": server.url, "model": "tiny", "api_key": "k"}
        assert summarize_with_fallback(coding_session(), llm=llm) == (CANNED, "llm")


def test_http_500_falls_back_to_the_extractive_summary(caplog):
    with Server("error") as server:
        with pytest.raises(SummaryError, match="HTTP 500"):
            llm_summary(coding_session(), url=server.url, model="tiny", api_key="k")
        llm = {"url": server.url, "model": "tiny", "api_key": "k"}
        with caplog.at_level(logging.WARNING, logger="sessions.enrich.summary"):
            summary, method = summarize_with_fallback(coding_session(), entities=ENTITIES, llm=llm)
    assert method == "extractive"
    assert summary == summarize(coding_session(), entities=ENTITIES)
    assert any(
        r.levelno == logging.WARNING and "HTTP 500" in r.getMessage() for r in caplog.records
    )


def test_a_hanging_server_times_out_and_falls_back():
    with Server("hang") as server:
        started = time.perf_counter()
        with pytest.raises(SummaryError, match=r"within 0\.5s"):
            llm_summary(coding_session(), url=server.url, model="m", api_key="k", timeout=0.5)
        llm = {"url": server.url, "model": "m", "api_key": "k", "timeout": 0.5}
        summary, method = summarize_with_fallback(coding_session(), llm=llm)
        elapsed = time.perf_counter() - started
    assert method == "extractive" and summary.startswith("Task: Fix the bug")
    assert elapsed < 5


def test_bad_json_and_unreachable_server_raise_summary_error():
    with Server("garbage") as server, pytest.raises(SummaryError, match="did not answer JSON"):
        llm_summary(coding_session(), url=server.url, model="m", api_key="k")
    with Server("ok") as server:
        dead = server.url
    with pytest.raises(SummaryError, match=r"cannot reach|within"):
        llm_summary(coding_session(), url=dead, model="m", api_key="k", timeout=2)
    assert summarize_with_fallback(coding_session(), llm=None)[1] == "extractive"


def test_textrank_scores_do_not_depend_on_the_hash_seed():
    """Word sets iterate in an order set by PYTHONHASHSEED; the scores (float sums) must not
    follow it, or one session's summary changes from one worker process to the next."""
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    code = (
        "from sessions.enrich.summary.textrank import textrank\n"
        "words = 'database migration deploy staging billing invoice retry queue worker "
        "token search index vector cache latency rollback schema'.split()\n"
        "sentences = [' '.join(words[(i * 7 + k) % len(words)] for k in range(3 + i % 5))"
        " for i in range(60)]\n"
        "print(repr(textrank(sentences)))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert len(outputs) == 1
