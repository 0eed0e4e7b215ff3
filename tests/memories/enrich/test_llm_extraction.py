"""The optional LLM extractor against a local HTTP server: its answer becomes memories
linked to the messages it names; any failure (HTTP error, no answer in time, not the agreed
JSON, a message it was not sent) falls back to the offline rules and says why.

``llm_answers/`` holds answers in the shapes Ollama, vLLM and llama.cpp's server give them;
each is served by ``llm_stub.StubLLM`` and checked for what it records.
"""

from __future__ import annotations

import json

import pytest

from bench import memory_dev
from memories.enrich import llm
from memories.enrich.llm_answer import LLMExtractionError, answer_of, verbatim
from memories.models import Memory, MemoryExtraction
from sessions.capture.service import capture_session
from tests.memories.enrich.llm_stub import ANSWERS, StubLLM, recorded
from tests.memories.enrich.test_extraction import FOUND, TASK, agent_session, extract_everything
from tests.sessions.enrich import test_summary
from tests.sessions.enrich.test_summary import Server

pytestmark = pytest.mark.django_db

ANSWER = {
    "memories": [
        {
            "type": "decision",
            "content": "Use a connection pool for the login database connections.",
            "message": 3,
            "quote": "We decided to use a connection pool",
            "topic": "db_connections",
            "confidence": "high",
            "details": {"rationale": "the database allows only 20 connections"},
        },
        {"type": "preference", "content": "Ask before adding dependencies.", "message": 0},
    ]
}
ASKED = "Please never add new dependencies without asking."
PROBLEM = "The problem was that src/auth/login.py opens a new database connection per request."
DECIDED = (
    "We decided to use a connection pool instead of per-request connections because the "
    "database allows only 20 connections."
)
OFFLINE_TYPES = {"preference", "finding", "decision"}  # what the rules find in TASK and FOUND

# recorded answer -> (type, evidence message, stored quote) of every memory recorded
RECORDED = {
    "clean_json": {("decision", 3, DECIDED), ("preference", 0, ASKED)},
    "fenced_json": {("finding", 3, PROBLEM)},
    "prose_before_json": {("decision", 3, DECIDED)},
    "think_then_json": {("preference", 0, ASKED), ("finding", 3, PROBLEM)},
    "message_as_string": {("decision", 3, DECIDED)},
    # a paraphrase loses its quote; a retyped one is stored as the message writes it
    "quote_not_in_message": {("decision", 3, ""), ("finding", 3, PROBLEM)},
    "empty_memories": set(),
}
# recorded answer -> what the reason for falling back says
FALLS_BACK = {
    "unknown_type": "answered memories of the wrong shape: 'observation' is not one of",
    "unsent_message": "a memory points at message 2, not sent (sent: 0, 3)",
    "truncated_length": "cut off at the token limit (finish_reason 'length')",
    "http_500": "HTTP 500 from http://127.0.0.1",
    "choices_empty": "answered no choices",
    "prose_only": "answered no JSON memories: 'I reviewed the transcript.",
}


@pytest.fixture
def configured(settings):
    def configure(server):
        settings.MEMORY_LLM_URL = server.url
        settings.MEMORY_LLM_MODEL = "tiny"
        settings.MEMORY_LLM_API_KEY = "sk-test"
        settings.MEMORY_LLM_TIMEOUT_SECONDS = 1

    return configure


@pytest.fixture
def extracted_through(project, configured, django_capture_on_commit_callbacks):
    """The session of TASK and FOUND, extracted through ``server``."""

    def run(server):
        session = agent_session(("user", TASK), ("assistant", FOUND))
        session = capture_session(project, session).session
        with server:
            configured(server)
            extract_everything(session, django_capture_on_commit_callbacks)
        return session, MemoryExtraction.objects.get(session=session)

    return run


def evidence_of(session) -> set[tuple[str, int, str]]:
    return {
        (memory.type, evidence.message.seq, evidence.quote)
        for memory in Memory.objects.filter(session=session)
        for evidence in memory.evidence.all()
    }


def test_every_recorded_answer_is_checked():
    assert {p.stem for p in ANSWERS.glob("*.json")} == set(RECORDED) | set(FALLS_BACK)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_usable_answer_is_recorded_with_its_evidence(extracted_through, name):
    session, extraction = extracted_through(StubLLM(*recorded(name)))
    assert (extraction.status, extraction.method, extraction.error) == ("done", "llm", "")
    assert evidence_of(session) == RECORDED[name]
    extractors = set(Memory.objects.filter(session=session).values_list("extractor", flat=True))
    assert extractors <= {"llm"}


@pytest.mark.parametrize("name", sorted(FALLS_BACK))
def test_an_unusable_answer_falls_back_to_the_rules_and_says_why(extracted_through, name):
    session, extraction = extracted_through(StubLLM(*recorded(name)))
    assert (extraction.status, extraction.method) == ("done", "fallback")
    assert extraction.error.startswith("LLM failed: ")
    assert FALLS_BACK[name] in extraction.error
    extracted = Memory.objects.filter(session=session)
    # nothing of the answer is kept, not even its valid memories: a step is one method
    assert set(extracted.values_list("extractor", flat=True)) == {"offline"}
    assert set(extracted.values_list("type", flat=True)) == OFFLINE_TYPES


def test_the_servers_own_words_are_in_the_reason(extracted_through):
    _, extraction = extracted_through(StubLLM(*recorded("http_500")))
    assert extraction.error.endswith(": Context size has been exceeded.")


def test_the_llms_memories_are_recorded_with_who_said_them(
    extracted_through, monkeypatch, settings
):
    monkeypatch.setattr(test_summary, "CANNED", json.dumps(ANSWER))
    session, extraction = extracted_through(Server("ok"))
    assert (extraction.status, extraction.method, extraction.error) == ("done", "llm", "")
    decision = Memory.objects.get(session=session, type="decision")
    assert (decision.extractor, decision.origin, decision.agent) == ("llm", "extractor", "coder")
    assert (decision.topic, decision.confidence) == ("db_connections", "high")
    [evidence] = decision.evidence.all()
    assert evidence.message.seq == 3 and evidence.quote == "We decided to use a connection pool"
    preference = Memory.objects.get(session=session, type="preference")
    # dana, the session's person, asked it of coder: coder holds it (docs/people.md)
    assert (preference.person, preference.agent) == ("dana", "coder")
    assert preference.evidence.get().message.seq == 0


def test_the_request_sends_the_prompt_and_the_numbered_messages(extracted_through):
    server = StubLLM(*recorded("empty_memories"))
    extracted_through(server)
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert (body["model"], body["temperature"]) == ("tiny", 0)
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["content"] == llm.SYSTEM_PROMPT
    assert user["content"] == f"[0] user: {TASK}\n[3] assistant: {FOUND}"  # no tool output


def test_the_prompt_asks_for_the_labelled_types_with_a_verbatim_quote():
    prompt = llm.SYSTEM_PROMPT
    for kind in ("decision:", "finding:", "preference:", "learning:"):
        assert f"- {kind}" in prompt
    for excluded in ("narration", "one-off requests", "generic advice", "plans not carried out"):
        assert excluded in prompt
    assert '"message": the number in brackets' in prompt
    assert "copied character for character" in prompt
    assert "JSON only" in prompt


@pytest.mark.parametrize(
    "mode, reason", [("error", "HTTP 500"), ("hang", "no answer from"), ("garbage", "no JSON")]
)
def test_a_failing_server_falls_back_to_the_rules(extracted_through, mode, reason):
    session, extraction = extracted_through(Server(mode))
    assert (extraction.status, extraction.method) == ("done", "fallback")
    assert extraction.error.startswith("LLM failed: ") and reason in extraction.error
    assert set(Memory.objects.filter(session=session).values_list("type", flat=True)) == (
        OFFLINE_TYPES
    )


def completion(content: str) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


def test_only_meaning_preserving_slips_are_coerced():
    item = {"type": " Decision", "content": "x", "message": "[3]"}
    answer = answer_of(completion(json.dumps({"memories": [item]})))
    assert answer["memories"][0]["type"] == "decision"
    assert answer["memories"][0]["message"] == 3
    for number in ("three", "3a", "3.5", ""):
        with pytest.raises(LLMExtractionError, match="wrong shape"):
            answer_of(completion(json.dumps({"memories": [dict(item, message=number)]})))


def test_an_unfinished_think_block_is_no_answer():
    with pytest.raises(LLMExtractionError, match="unfinished <think>"):
        answer_of(completion('<think>The user wants {"memories": []} so'))


@pytest.mark.parametrize(
    "quote, stored",
    [
        ("we decided to use a CONNECTION pool", "We decided to use a connection pool"),
        ("20 connections", "20 connections."),  # the sentence's own full stop comes along
        ("the database  allows\nonly 20 connections", "the database allows only 20 connections."),
        ("“The problem was”", "The problem was"),
        ("src/auth/login.py opens a new connection", ""),  # a word left out
        ("We decided to use a thread pool", ""),
        ("", ""),
    ],
)
def test_a_quote_is_stored_as_the_message_writes_it_or_not_at_all(quote, stored):
    assert verbatim(quote, FOUND) == stored


def test_the_bench_says_when_no_model_is_configured(settings, capsys):
    settings.MEMORY_LLM_URL = ""
    assert memory_dev.main(["--llm"]) == 2
    assert "--llm needs MEMORY_LLM_URL" in capsys.readouterr().err


def test_the_bench_says_when_the_model_is_not_reachable(settings, capsys):
    server = StubLLM(200, {})
    url = server.url
    server.httpd.server_close()  # the port is known and nothing listens on it
    settings.MEMORY_LLM_URL = url
    assert memory_dev.main(["--llm"]) == 2
    assert f"MEMORY_LLM_URL {url} is not reachable" in capsys.readouterr().err
