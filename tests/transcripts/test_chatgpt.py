import json
from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.chatgpt import parse_chatgpt

from .helpers import check_invariants, fixture


def test_export_with_branches_tools_code_and_images():
    sessions = parse_chatgpt(fixture("chatgpt_conversations.json"))
    assert len(sessions) == 2
    plot = sessions[0]
    for session in sessions:
        check_invariants(session)
        assert session.agent_name == "chatgpt"

    assert plot.external_id == "6650a1b2-0000-4000-8000-000000000001"
    assert plot.title == "Plot a sine wave"
    assert plot.started_at == datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)
    assert plot.ended_at == datetime(2024, 6, 10, 6, 18, 20, 500000, tzinfo=UTC)
    assert plot.metadata["models"] == ["gpt-4o", "gpt-4o-mini"]
    assert plot.metadata["default_model_slug"] == "gpt-4o"
    # the edited prompt's branch ("u1b") is the visible one; "u1"/"a1" are not imported;
    # the empty hidden system node is skipped; custom instructions become a system message
    assert [(m.client_id, m.role) for m in plot.messages] == [
        ("ctx", "system"),
        ("u1b", "user"),
        ("a2", "assistant"),
        ("t1", "tool"),
        ("a3", "assistant"),
        ("u2", "user"),
        ("a4", "assistant"),
    ]
    context, prompt, code, output, reply, image_question, answer = plot.messages
    assert context.content == "The user is a physics teacher.\n\nAnswer briefly."
    assert context.metadata["injected"] is True
    assert prompt.content == "Plot a sine wave from 0 to 2π with matplotlib"
    assert prompt.timestamp == datetime(2024, 6, 10, 6, 13, 30, tzinfo=UTC)
    assert code.tool_name == "python"
    assert code.tool_call_id == "a2"
    assert code.content.startswith("import numpy as np\n")
    assert code.metadata["language"] == "python"
    assert code.author == "gpt-4o"
    assert output.tool_call_id == "a2"
    assert output.tool_name == "python"
    assert output.content == "<Figure size 640x480 with 1 Axes>"
    assert reply.tool_name == ""
    assert image_question.content == "[image]\nWhat does this chart show?"
    assert image_question.metadata["attachments"] == ["file-service://file-AbC123"]
    assert answer.content == "One full period of the sine function 🌊. בעברית: גל סינוס."
    assert answer.metadata["model"] == "gpt-4o-mini"


def test_conversation_without_current_node_uses_latest_leaf_and_keeps_thoughts():
    weather = parse_chatgpt(fixture("chatgpt_conversations.json"))[1]
    assert [(m.role, m.tool_name, m.content) for m in weather.messages] == [
        ("user", "", "Is it raining in Paris right now?"),
        ("assistant", "web", '{"query": "Paris weather now"}'),
        ("tool", "web", "Paris: light rain, 14°C"),
        ("assistant", "", "Yes, light rain and 14°C."),
    ]
    call = weather.messages[1]
    assert call.metadata["thoughts"] == "Checking the weather\n\nI should search the web."
    assert weather.messages[2].tool_call_id == call.tool_call_id == "call"


def test_single_conversation_object_is_accepted():
    export = json.loads(fixture("chatgpt_conversations.json"))
    [session] = parse_chatgpt(json.dumps(export[1]).encode())
    assert session.title == "Weather in Paris"


def test_empty_export_gives_no_sessions():
    assert parse_chatgpt(b"[]") == []


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ([{"title": "x", "mapping": []}], "[0].mapping"),
        ([{"mapping": {"n": {"id": "n", "parent": None, "message": {"author": {"role": "user"},
                                                                "content": "hi"}}},
           "current_node": "n"}], "[0].mapping.n.message.content"),
        (["not a conversation"], "[0]"),
    ],
)  # fmt: skip
def test_wrong_field_types_name_the_field(document, field):
    with pytest.raises(ImportFormatError) as caught:
        parse_chatgpt(json.dumps(document).encode())
    assert caught.value.field == field


def test_invalid_json_gives_the_line():
    with pytest.raises(ImportFormatError) as caught:
        parse_chatgpt(b'[\n {"title": "a",\n  "mapping": {\n  }\n  "x": 1}\n]')
    assert caught.value.line == 5
    assert "invalid JSON in the ChatGPT export" in caught.value.message


def test_tool_message_without_a_call_is_not_linked():
    conversation = {
        "title": "Upload",
        "current_node": "t",
        "mapping": {
            "u": {"id": "u", "parent": None, "children": ["t"], "message": {
                "id": "u", "author": {"role": "user"}, "create_time": 1718000000,
                "content": {"content_type": "text", "parts": ["Summarise the PDF"]}}},
            "t": {"id": "t", "parent": "u", "children": [], "message": {
                "id": "t", "author": {"role": "tool", "name": "myfiles_browser"},
                "create_time": 1718000001, "recipient": "all",
                "content": {"content_type": "tether_quote", "url": "file-1", "title": "report.pdf",
                            "text": "Revenue grew 12%."}}},
        },
    }  # fmt: skip
    [session] = parse_chatgpt(json.dumps([conversation]).encode())
    tool = session.messages[1]
    assert (tool.role, tool.tool_name, tool.tool_call_id, tool.content) == (
        "tool",
        "myfiles_browser",
        "",
        "report.pdf\nRevenue grew 12%.",
    )
