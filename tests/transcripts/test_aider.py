from datetime import UTC, datetime

import pytest

from transcripts.base import ImportFormatError
from transcripts.formats.aider import parse_aider

from .helpers import check_invariants, roles, sample

HISTORY = "aider/metadata-aider.chat.history.md"
INPUTS = "aider/metadata-aider.input.history"


def test_sample_without_input_history():
    # One "# aider chat started at" header; 12 "####" inputs, 12 replies, 14 blocks of "> ".
    [session] = parse_aider(sample(HISTORY))
    check_invariants(session)
    assert len(session.messages) == 38
    assert roles(session) == {"user": 12, "assistant": 12, "tool": 14}
    assert session.external_id == "aider:2025-12-03T14:43:45"
    assert session.agent_name == "aider"
    start = datetime(2025, 12, 3, 14, 43, 45, tzinfo=UTC)
    assert session.started_at == start
    assert {m.timestamp for m in session.messages} == {start}

    banner = session.messages[0]
    assert banner.role == "tool" and banner.tool_name == "aider" and banner.tool_call_id == ""
    assert banner.content.splitlines()[4] == "Aider v0.86.1"
    assert session.metadata["aider_version"] == "0.86.1"
    assert session.metadata["model"] == "openrouter/openai/gpt-4o-mini"
    assert session.metadata["edit_format"] == "diff"
    assert len(session.metadata["commits"]) == 14
    assert session.metadata["commits"][0] == {
        "sha": "1b2614a",
        "message": "feat: create .aidar.json file to track project directory and files",
    }
    assert session.artifacts[:2] == [".aidar.json", "src/train.py"]
    assert "README.md" in session.artifacts and len(session.artifacts) == 10

    first_input, first_reply, first_output = session.messages[1:4]
    assert first_input.content == (
        "Please create an .aidar.json file in the root directory of the project to track the "
        "entire project directory"
    )
    assert first_input.client_id == "L15"
    assert first_reply.role == "assistant"
    assert first_reply.author == "openrouter/openai/gpt-4o-mini"
    assert first_reply.content.startswith("To create the `.aidar.json` file")
    assert "<<<<<<< SEARCH" in first_reply.content
    assert first_reply.content.endswith(
        "Please confirm if you would like to proceed with this change."
    )
    assert first_output.metadata["commits"][0]["sha"] == "1b2614a"
    assert first_output.metadata["edited_files"] == [".aidar.json"]
    assert first_output.metadata["tokens"].startswith("Tokens: 2.4k sent, 104 received.")

    # Multi-line input: the prefix and aider's two-space hard breaks are gone, the user's
    # own tab and trailing space are not.
    structure = session.messages[4].content
    assert structure.splitlines()[:3] == [
        "Please create a clean project structure for a PyTorch IoT project. It should have a:",
        "",
        "-a src/ folder which has:",
    ]
    assert "\t-generate_data.py \n" in structure
    assert structure.endswith("Don\u2019t write any code yet")
    # Output printed between an input and its reply stays in place.
    debug = [m.role for m in session.messages[-7:-3]]
    assert debug == ["user", "tool", "assistant", "tool"]


def test_sample_with_input_history_gives_input_times():
    [session] = parse_aider(sample(HISTORY), input_history=sample(INPUTS))
    check_invariants(session)
    assert roles(session) == {"user": 12, "assistant": 12, "tool": 14}
    users = [m for m in session.messages if m.role == "user"]
    assert users[0].timestamp == datetime(2025, 12, 3, 14, 46, 2, 414589, tzinfo=UTC)
    assert users[-1].timestamp == datetime(2025, 12, 3, 21, 28, 43, 197159, tzinfo=UTC)
    # replies and output take the time of the input before them
    assert session.messages[2].timestamp == users[0].timestamp
    stamps = [m.timestamp for m in session.messages]
    assert stamps == sorted(stamps)
    assert session.ended_at == users[-1].timestamp


HB = "  "  # the Markdown hard break aider writes after every input and output line
CHAT = "\n".join(
    [
        "",
        "# aider chat started at 2025-01-05 09:00:00",
        "",
        f"> Aider v0.70.0{HB}",
        f"> Main model: claude-3-5-sonnet-20241022 with diff edit format, infinite output{HB}",
        "",
        f"#### explain the plan{HB}",
        f"#### in two steps{HB}",
        "",
        "Here is the plan.",
        "",
        "#### Step 1",
        "Read the code.",
        "",
        "> A quoted remark, part of the reply.",
        "",
        "#### Step 2",
        "Write the fix.",
        "",
        f"> Tokens: 1.2k sent, 300 received.{HB}",
        "> Lint errors in app.py:",
        f"app.py:3:1: F401 'os' imported but unused{HB}",
        "",
        "# aider chat started at 2025-01-05 09:00:00",
        "",
        f"#### /add app.py{HB}",
        f"> Added app.py to the chat{HB}",
        "",
    ]
)

INPUT_HISTORY = """
# 2025-01-05 09:00:05.100000
+explain the plan
+in two steps

# 2025-01-05 09:00:40.000000
+/add app.py
"""


def test_headings_quotes_continuations_and_sessions():
    sessions = parse_aider(CHAT.encode())
    assert len(sessions) == 2
    first, second = sessions
    check_invariants(first)
    assert [m.role for m in first.messages] == ["tool", "user", "assistant", "tool"]
    assert first.messages[1].content == "explain the plan\nin two steps"
    reply = first.messages[2].content
    # "####" lines without aider's hard break are headings of the reply, "> " lines too
    assert reply == (
        "Here is the plan.\n\n#### Step 1\nRead the code.\n\n"
        "> A quoted remark, part of the reply.\n\n#### Step 2\nWrite the fix."
    )
    assert first.messages[3].content == (
        "Tokens: 1.2k sent, 300 received.\nLint errors in app.py:\n"
        "app.py:3:1: F401 'os' imported but unused"
    )
    assert first.metadata["model"] == "claude-3-5-sonnet-20241022"
    # two sessions started in the same second keep distinct ids
    assert (first.external_id, second.external_id) == (
        "aider:2025-01-05T09:00:00",
        "aider:2025-01-05T09:00:00#2",
    )
    assert [(m.role, m.content) for m in second.messages] == [
        ("user", "/add app.py"),
        ("tool", "Added app.py to the chat"),
    ]


def test_input_history_decides_when_trailing_spaces_were_stripped():
    stripped = "\n".join(line.rstrip() for line in CHAT.splitlines()).encode()
    # without the marks and without input history every "####" block is an input
    first = parse_aider(stripped)[0]
    assert [m.content for m in first.messages if m.role == "user"] == [
        "explain the plan\nin two steps",
        "Step 1",
        "Step 2",
    ]
    first, second = parse_aider(stripped, input_history=INPUT_HISTORY.encode())
    assert [m.content for m in first.messages if m.role == "user"] == [
        "explain the plan\nin two steps"
    ]
    assert first.messages[1].timestamp == datetime(2025, 1, 5, 9, 0, 5, 100000, tzinfo=UTC)
    assert "#### Step 1\nRead the code." in first.messages[2].content
    assert second.messages[0].timestamp == datetime(2025, 1, 5, 9, 0, 40, tzinfo=UTC)


def test_reply_starting_with_a_heading_keeps_its_prefix():
    chat = f"#### plan it{HB}\n\n#### Plan\n1. read\n\n#### Risks\nnone\n"
    [session] = parse_aider(chat.encode())
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "plan it"),
        ("assistant", "#### Plan\n1. read\n\n#### Risks\nnone"),
    ]


def test_text_before_the_first_header_is_a_session_without_start():
    sessions = parse_aider(b"#### hello  \n\nHi there!\n")
    assert len(sessions) == 1
    assert sessions[0].started_at is None
    assert [m.role for m in sessions[0].messages] == ["user", "assistant"]


def test_not_an_aider_history():
    with pytest.raises(ImportFormatError, match="does not look like an aider chat history"):
        parse_aider(b"just some notes\n")


def test_invalid_utf8_reports_the_line():
    data = b"# aider chat started at 2025-01-05 09:00:00\n\n#### caf\xe9  \n"
    with pytest.raises(ImportFormatError) as caught:
        parse_aider(data)
    assert caught.value.line == 3
    assert "invalid UTF-8" in caught.value.message
