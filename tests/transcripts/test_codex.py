import json
from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.codex import parse_codex

from .helpers import check_invariants, fixture, roles, sample


def _line(kind: str, payload: dict, second: int = 0) -> dict:
    return {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload}


def _jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def test_firststep_sample():
    # 80 lines: 1 user_message event, 2 response_item user messages (AGENTS.md + the prompt
    # again), 1 developer message, 5 assistant messages (each repeated as an agent_message
    # event), 18 function calls, 17 outputs, encrypted reasoning, token counts, exec events.
    [session] = parse_codex(sample("codex/firststep.jsonl"))
    check_invariants(session)
    assert len(session.messages) == 43
    assert roles(session) == {"system": 2, "user": 1, "assistant": 23, "tool": 17}
    assert session.external_id == "019ddc6d-d001-7de0-9a02-82256002768b"
    assert session.title == "Apply for Superteam grant"
    assert session.agent_name == "codex"
    assert session.metadata == {
        "session_id": "019ddc6d-d001-7de0-9a02-82256002768b",
        "cwd": "/mnt/c/Projects/FirstStep",
        "originator": "codex_vscode",
        "cli_version": "0.126.0-alpha.8",
        "source": "vscode",
        "model_provider": "openai",
        "models": ["gpt-5.4"],
    }
    assert session.started_at == datetime(2026, 4, 30, 3, 27, 57, 543000, tzinfo=UTC)

    developer, agents_md, prompt, first_reply = session.messages[:4]
    assert developer.role == "system"
    assert developer.metadata == {"injected": True, "source_role": "developer"}
    assert agents_md.role == "system"
    assert agents_md.content.startswith("# AGENTS.md instructions for /mnt/c/Projects/FirstStep")
    assert prompt.role == "user"
    assert prompt.content == "help me apply for the agentic engineering grant by Superteam\n"
    assert [m.content for m in session.messages].count(prompt.content) == 1
    assert first_reply.role == "assistant"
    assert first_reply.content.startswith("I\u2019m using the `apply-grant` skill")
    assert first_reply.metadata["model"] == "gpt-5.4"
    assert first_reply.metadata["phase"] == "commentary"
    # the 5 agent_message events repeat the 5 assistant response items: no duplicates
    texts = [m.content for m in session.messages if m.role == "assistant" and not m.tool_name]
    assert len(texts) == len(set(texts)) == 5

    calls = {m.tool_call_id: m for m in session.messages if m.tool_name and m.role == "assistant"}
    outputs = [m for m in session.messages if m.role == "tool"]
    assert len(calls) == 18
    assert all(o.tool_call_id in calls and o.tool_name == "exec_command" for o in outputs)
    pwd = calls["call_MWByTfVtCGaUggGrPdVbOl1a"]
    assert pwd.content == "pwd"
    assert pwd.metadata["input_extra"] == {
        "workdir": "/mnt/c/Projects/FirstStep",
        "max_output_tokens": 200,
    }
    git_status = next(o for o in outputs if o.tool_call_id == "call_4BbRGro2RpOf9mL5pKO5sL0A")
    assert git_status.metadata["exit_code"] == 128
    assert git_status.client_id == "call_4BbRGro2RpOf9mL5pKO5sL0A:output"
    # the last call (cp ...) has no output in the file
    assert "call_HhWMu1Dvla7PKtl7hDYxaZoR" not in {o.tool_call_id for o in outputs}
    assert not any("gAAAAA" in m.content for m in session.messages)  # encrypted reasoning


def test_legacy_rollout_without_envelope():
    [session] = parse_codex(fixture("codex_legacy.jsonl"))
    check_invariants(session)
    assert session.external_id == "0196f1a2-3b4c-7d5e-8f90-a1b2c3d4e5f6"
    assert session.metadata["git"]["branch"] == "main"
    assert [(m.role, m.content) for m in session.messages] == [
        (
            "system",
            "<environment_context>\n  <cwd>/home/dev/calc</cwd>\n"
            "  <approval_policy>on-request</approval_policy>\n</environment_context>",
        ),
        ("user", "list the files"),
        ("assistant", "ls -a"),
        ("tool", ".\n..\ncalc.py\ntests\n"),
        ("assistant", "The folder holds `calc.py` and `tests/`."),
    ]
    call, output = session.messages[2], session.messages[3]
    assert call.metadata["reasoning"] == "**Listing files**"
    assert call.client_id == "fc_01"
    assert output.metadata == {"exit_code": 0, "duration_seconds": 0.1}
    assert output.tool_call_id == call.tool_call_id == "call_01"
    assert output.tool_name == "shell"


def test_custom_and_local_shell_calls_and_agent_message_fallback():
    patch = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
    data = _jsonl(
        _line("session_meta", {"id": "sess-1", "cwd": "/w", "cli_version": "0.50.0"}),
        _line("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}),
        _line("event_msg", {"type": "user_message", "message": "bump x", "images": ["data:..."]}),
        _line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                "input": patch, "call_id": "c1", "status": "completed"}),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "c1",
                                "output": "Success. Updated a.py"}),
        _line("response_item", {"type": "local_shell_call", "call_id": "c2", "status": "completed",
                                "action": {"type": "exec", "command": ["bash", "-lc", "pytest"],
                                           "working_directory": "/w"}}),
        _line("response_item", {"type": "function_call_output", "call_id": "c2",
                                "output": [{"type": "input_text", "text": "2 passed"}]}),
        _line("event_msg", {"type": "agent_message", "message": "Done: x is 2."}),
        _line("response_item", {"type": "web_search_call", "id": "ws_1", "status": "completed",
                                "action": {"type": "search", "query": "python 3.14 release"}}),
        _line("something_new", {"type": "whatever"}),
    )  # fmt: skip
    [session] = parse_codex(data)
    check_invariants(session)
    assert [(m.role, m.tool_name, m.content) for m in session.messages] == [
        ("user", "", "bump x\n[image]"),
        ("assistant", "apply_patch", patch),
        ("tool", "apply_patch", "Success. Updated a.py"),
        ("assistant", "local_shell", "pytest"),
        ("tool", "local_shell", "2 passed"),
        ("assistant", "", "Done: x is 2."),  # no response item said it: the event is used
        ("assistant", "web_search", "python 3.14 release"),
    ]
    assert session.messages[0].metadata == {"images": 1}
    assert session.messages[3].metadata["input_extra"] == {"working_directory": "/w"}
    assert session.messages[5].author == "gpt-5-codex"


def test_payload_must_be_an_object():
    data = _jsonl(_line("session_meta", {"id": "s"}), {"type": "response_item", "payload": "x"})
    with pytest.raises(ImportFormatError) as caught:
        parse_codex(data)
    assert (caught.value.line, caught.value.field) == (2, "payload")


def test_message_content_type_is_checked():
    data = _jsonl(
        _line("session_meta", {"id": "s"}),
        _line("response_item", {"type": "message", "role": "assistant", "content": 7}),
    )
    with pytest.raises(ImportFormatError) as caught:
        parse_codex(data)
    assert (caught.value.line, caught.value.field) == (2, "payload.content")


def test_non_codex_jsonl_is_refused():
    with pytest.raises(ImportFormatError, match="does not look like a Codex rollout"):
        parse_codex(b'{"type": "user", "message": {"content": "hi"}}\n')
