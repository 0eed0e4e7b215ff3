import pytest

from transcripts._render import format_command, render_arguments, render_tool_input


@pytest.mark.parametrize(
    ("name", "value", "text", "extra"),
    [
        ("Bash", {"command": "ls -la", "description": "List"}, "ls -la", {"description": "List"}),
        ("shell", {"command": ["bash", "-lc", "git status"], "workdir": "/w"}, "git status",
         {"workdir": "/w"}),
        ("exec_command", {"cmd": "pwd"}, "pwd", {}),
        ("Write", {"file_path": "a.py", "content": "x = 1\n"}, "Write a.py\nx = 1\n", {}),
        ("Read", {"file_path": "a.py", "limit": 20}, "Read a.py", {"limit": 20}),
        ("Edit", {"file_path": "a.py", "old_string": "a\nb", "new_string": "c",
                  "replace_all": True},
         "Edit a.py (all occurrences)\n-a\n-b\n+c", {}),
        ("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"},
                                                      {"old_string": "", "new_string": "c"}]},
         "Edit a.py\n@@\n-a\n+b\n@@\n+c", {}),
        ("TodoWrite", {"todos": [{"content": "write tests", "status": "completed"},
                                 {"content": "ship", "status": "pending"}]},
         "[x] write tests\n[ ] ship", {}),
        ("Grep", {"pattern": "TODO", "path": "src", "-n": True},
         "pattern: TODO\npath: src\n-n: true", {}),
        ("Task", {"description": "Find", "prompt": "Look for\nusages"},
         "description: Find\nprompt:\nLook for\nusages", {}),
        ("mcp__x__y", {}, "", {}),
        ("apply_patch", "*** Begin Patch", "*** Begin Patch", {}),
        ("weird", [1, "two"], '[\n  1,\n  "two"\n]', {}),
    ],
)  # fmt: skip
def test_render_tool_input(name, value, text, extra):
    assert render_tool_input(name, value) == (text, extra)


def test_format_command():
    assert format_command(["ls", "-la", "my dir"]) == "ls -la 'my dir'"
    assert format_command(["/bin/zsh", "-lc", "echo hi"]) == "echo hi"
    assert format_command("echo hi") == "echo hi"


def test_render_arguments_json_string_and_broken_json():
    assert render_arguments("get", '{"user_id": "mia", "verbose": false}') == (
        "user_id: mia\nverbose: false",
        {},
    )
    assert render_arguments("get", '{"user_id": ') == ('{"user_id": ', {})
    assert render_arguments("get", "plain text") == ("plain text", {})
