"""The entity extractor (sessions/enrich/entities/): pure functions, no database."""

from __future__ import annotations

import time
from pathlib import Path

from sessions.enrich.entities import (
    CLASS,
    COMMAND,
    ERROR,
    FILE,
    FUNCTION,
    MAX_VALUE,
    PACKAGE,
    URL,
    extract_from_message,
    extract_from_text,
    extract_session,
    normalize,
)
from transcripts import parse_path
from transcripts._render import render_arguments, render_tool_input
from transcripts.base import ParsedMessage

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples"


def values(found, type):
    return [value for kind, value, _start, _end in found if kind == type]


def text_values(text, type):
    return values(extract_from_text(text), type)


def message_values(type, role, content, tool_name="", metadata=None):
    return values(extract_from_message(role, content, tool_name, metadata), type)


# --- FILE ------------------------------------------------------------------------------------


def test_file_paths_in_prose():
    text = (
        "Fix the login bug in src/auth.py and tests/test_auth.py, then update README.md, "
        "./setup.py, ~/.bashrc, /etc/nginx/nginx.conf, the Dockerfile, `.env` and "
        r"C:\Users\me\proj\main.py (see frontend/ui.ts:42)."
    )
    assert text_values(text, FILE) == [
        "src/auth.py",
        "tests/test_auth.py",
        "README.md",
        "./setup.py",
        "~/.bashrc",
        "/etc/nginx/nginx.conf",
        "Dockerfile",
        ".env",
        r"C:\Users\me\proj\main.py",
        "frontend/ui.ts",
    ]


def test_offsets_point_at_the_value():
    text = "Edit **src/app/models.py**, then run it."
    [(kind, value, start, end)] = extract_from_text(text)
    assert (kind, value, text[start:end]) == (FILE, "src/app/models.py", "src/app/models.py")


def test_things_that_are_not_files():
    text = (
        "Upgrade to version 1.2.3 (v0.86.1, 0.126.0-alpha.8), e.g. on example.com or "
        "www.solana.new, i.e. mail bob.smith@example.com; Node.js and Next.js apps; "
        "see https://docs.python.org/3/library/re.html and github.com/user/repo; "
        "GET /api/v1/sessions; self.lock, process.env, response.json() and and/or, 80/20, "
        "JS/TS; the torch.log and mock.patch helpers; a.m. and p.m.; sed 's/a/b/'"
    )
    assert text_values(text, FILE) == []


def test_code_files_need_quotes_or_a_directory():
    code = "```python\nx = self.config.json\nopen('config.yaml')\nload(data/iot.csv)\n```"
    assert text_values(code, FILE) == ["config.yaml", "data/iot.csv"]


def test_files_in_tool_output():
    diff = (
        "diff --git a/sessions/models.py b/sessions/models.py\n--- a/sessions/models.py\n"
        "+++ b/sessions/models.py\n+from django.conf import settings\n"
    )
    found = extract_from_message("tool", diff, "Bash")
    assert values(found, FILE) == ["sessions/models.py"] * 3  # no b/sessions/models.py
    assert values(found, PACKAGE) == ["django"]  # and django.conf is a module, not a file
    tsc = "src/app.tsx(12,5): error TS2322: Type 'string' is not assignable to type 'number'."
    found = extract_from_message("tool", tsc, "Bash")
    assert values(found, FILE) == ["src/app.tsx"]
    assert values(found, ERROR) == ["TS2322"]
    aider = "Run shell command? (Y)es/(N)o/(S)kip all/(D)on't ask again [Yes]: n"
    assert message_values(FILE, "tool", aider, "aider") == []


def test_config_blocks_take_unquoted_paths():
    text = "```dockerfile\nCOPY requirements.txt .\n```\n```yaml\nenv_file: .env\n```"
    assert text_values(text, FILE) == ["requirements.txt", ".env"]


def test_directories_with_a_root_or_a_trailing_slash():
    text = "Create a src/ folder; logs go to /var/log/app and ~/.cache/x; not Y/N or x.com/."
    assert text_values(text, FILE) == ["src/", "/var/log/app", "~/.cache/x"]


# --- URL -------------------------------------------------------------------------------------


def test_urls_without_trailing_punctuation():
    text = (
        "Docs: https://docs.djangoproject.com/en/5.2/ref/models/. See [the guide]"
        "(https://example.com/guide#setup), and (http://localhost:8000/api)."
    )
    assert text_values(text, URL) == [
        "https://docs.djangoproject.com/en/5.2/ref/models/",
        "https://example.com/guide#setup",
        "http://localhost:8000/api",
    ]
    assert text_values("git clone https://github.com/a/b.git", FILE) == []


# --- ERROR -----------------------------------------------------------------------------------


def test_errors():
    text = (
        'Traceback (most recent call last):\n  File "app.py", line 3\n'
        "KeyError: 'user'\nthen it raised ImportFormatError and HTTPError; the API said "
        "404 Not Found and 500 Internal Server Error; error[E0382]: borrow of moved value; "
        "spawn ENOENT\npanic: runtime error: index out of range [5] with length 3"
    )
    assert text_values(text, ERROR) == [
        "Traceback",
        "KeyError",
        "ImportFormatError",
        "HTTPError",
        "404 Not Found",
        "500 Internal Server Error",
        "E0382",
        "ENOENT",
        "panic: runtime error: index out of range [5] with length 3",
    ]


def test_not_errors():
    text = "Add error handling: an Error, an Exception, onError, setError, ErrorBoundary."
    assert text_values(text, ERROR) == []


def test_error_lines_printed_by_tools():
    output = "fatal: not a git repository (or any parent up to mount point /mnt)\n"
    assert message_values(ERROR, "tool", output) == [output.strip()]
    # The same words in the assistant's prose are not a tool's error line.
    assert message_values(ERROR, "assistant", output) == []


# --- FUNCTION --------------------------------------------------------------------------------


def test_function_definitions():
    text = (
        "```python\ndef load_data(path):\n    pass\nasync def fetch_user(id):\n    pass\n"
        "def __init__(self):\n    pass\n```\n"
        "```ts\nfunction drawChart(values) {}\nconst loadResults = async () => {};\n```"
    )
    assert text_values(text, FUNCTION) == ["load_data", "fetch_user", "drawChart", "loadResults"]


def test_function_mentions_in_prose():
    text = (
        "Call `login()` then authenticate() and `firststep.init({ appId })`; "
        "print() and len() are builtins, `vector(384)` is a type."
    )
    assert text_values(text, FUNCTION) == ["login", "authenticate", "firststep.init"]


def test_calls_in_code_and_tool_output_are_not_mentions():
    code = "```python\nprint(len(x))\nif (ready): run_job()\nresult = compute()\n```"
    assert text_values(code, FUNCTION) == []
    assert message_values(FUNCTION, "tool", "model.train()\nloss.backward()") == []
    assert message_values(FUNCTION, "tool", "def forward(self, x):\n    return x") == ["forward"]


def test_pytest_node_ids():
    found = extract_from_message("tool", "tests/test_api.py::TestAuth::test_login PASSED")
    assert values(found, FILE) == ["tests/test_api.py"]
    assert values(found, CLASS) == ["TestAuth"]
    assert values(found, FUNCTION) == ["test_login"]


# --- CLASS -----------------------------------------------------------------------------------


def test_classes():
    text = (
        "```python\nclass SimpleModel(nn.Module):\n    pass\n"
        "class ImportFormatError(ValueError):\n    pass\n```\n"
        "The UserService calls the AuthController; the `Session` model."
    )
    assert text_values(text, CLASS) == ["SimpleModel", "UserService", "AuthController", "Session"]
    # An error class is an ERROR, not a CLASS.
    assert "ImportFormatError" in text_values(text, ERROR)


def test_not_classes():
    text = (
        "Written in `TypeScript` with `PyTorch`; call `AskUserQuestion`, then `Bash`. "
        "A Model and a Service; in class we learned a lot; Economy class."
    )
    assert text_values(text, CLASS) == []


# --- COMMAND ---------------------------------------------------------------------------------


def test_commands_in_shell_blocks():
    text = (
        "```bash\n# install\npip install -r requirements.txt\nexport DEBUG=1\n"
        'FOO="$(date)"\nif [ -f x ]; then\nfi\nDEBUG=1 pytest tests/ -q   # quick\n'
        "docker run \\\n  -p 80:80 nginx\n```"
    )
    assert text_values(text, COMMAND) == [
        "pip install -r requirements.txt",
        "export DEBUG=1",
        "pytest tests/ -q",
        "docker run -p 80:80 nginx",
    ]


def test_console_blocks_take_only_prompted_lines():
    text = "```console\n$ git status\nOn branch main\n$ npm test\n> jest\n```"
    assert text_values(text, COMMAND) == ["git status", "npm test"]


def test_inline_commands():
    text = (
        "Run `pytest tests/ -q` or `npm run build`; avoid an `rm` or `git reset`; "
        "`go ahead` and `python 3.11` are not commands; `$ make test` is."
    )
    assert text_values(text, COMMAND) == [
        "pytest tests/ -q",
        "npm run build",
        "git reset",
        "make test",
    ]


def test_crlf_fences_close():
    # A README printed by a tool, with Windows line endings: the text after the block is prose.
    text = "```bash\r\ncd solana-new\r\n```\r\n\r\nSecurity note\r\n\r\nRun it with care.\r\n"
    assert message_values(COMMAND, "tool", text) == ["cd solana-new"]


def test_aider_console():
    output = (
        "Applied edit to src/train.py\nAdded .aider* to .gitignore\n"
        "mkdir data\nRun shell command? (Y)es/(N)o [Yes]: n\n"
    )
    found = extract_from_message("tool", output, "aider")
    assert values(found, FILE) == ["src/train.py", ".gitignore"]
    assert values(found, COMMAND) == ["mkdir data"]


# --- PACKAGE ---------------------------------------------------------------------------------


def test_python_imports():
    text = (
        "```python\nimport os\nimport numpy as np, requests\nfrom django.db import models\n"
        "from . import views\nfrom .models import Session\nfrom __future__ import annotations\n"
        "import json, sys\n```"
    )
    assert text_values(text, PACKAGE) == ["numpy", "requests", "django"]


def test_javascript_imports():
    text = (
        "```ts\nconst express = require('express');\nconst fs = require('fs');\n"
        "import React, { useState } from 'react';\nimport {\n  z,\n} from \"zod\";\n"
        "import x from './local';\nimport '@scope/pkg/styles.css';\nimport path from 'node:path';\n"
        "```"
    )
    assert text_values(text, PACKAGE) == ["express", "react", "zod", "@scope/pkg"]


def test_installed_packages():
    text = (
        "```sh\npip install 'requests==2.31' flask[async] -r requirements.txt\n"
        "npm install --save-dev @types/node lodash@4\nuv add httpx\ncargo add serde\n"
        "go get github.com/spf13/cobra@v1.8.0\npip install -e .\n```"
    )
    assert text_values(text, PACKAGE) == [
        "requests",
        "flask",
        "@types/node",
        "lodash",
        "httpx",
        "serde",
        "github.com/spf13/cobra",
    ]


def test_prose_is_not_an_import():
    text = "import the data from the CSV\nfrom there import it into the dashboard"
    assert text_values(text, PACKAGE) == []


# --- tool calls ------------------------------------------------------------------------------


def test_edit_call_names_its_file_and_its_code():
    content, extra = render_tool_input(
        "Edit",
        {
            "file_path": "/repo/src/auth.py",
            "old_string": "import os",
            "new_string": "import jwt\n\ndef login(user):\n    raise PermissionError()",
        },
    )
    found = extract_from_message("assistant", content, "Edit", {"input_extra": extra})
    assert values(found, FILE) == ["/repo/src/auth.py"]
    assert values(found, PACKAGE) == ["jwt"]
    assert values(found, FUNCTION) == ["login"]
    assert values(found, ERROR) == ["PermissionError"]


def test_write_read_multiedit_and_notebook_calls():
    write, _ = render_tool_input(
        "Write", {"file_path": "requirements.txt", "content": "Django>=5.2\nrequests==2.31\n"}
    )
    assert message_values(FILE, "assistant", write, "Write") == ["requirements.txt"]
    assert message_values(PACKAGE, "assistant", write, "Write") == ["Django", "requests"]
    read, _ = render_tool_input("Read", {"file_path": "/work/main/Makefile", "limit": 20})
    assert message_values(FILE, "assistant", read, "Read") == ["/work/main/Makefile"]
    multi, _ = render_tool_input(
        "MultiEdit",
        {"file_path": "web/app.tsx", "edits": [{"old_string": "a", "new_string": "b"}]},
    )
    assert message_values(FILE, "assistant", multi, "MultiEdit") == ["web/app.tsx"]
    notebook, _ = render_tool_input(
        "NotebookEdit", {"notebook_path": "nb/eda.ipynb", "new_source": "import pandas"}
    )
    found = extract_from_message("assistant", notebook, "NotebookEdit")
    assert values(found, FILE) == ["nb/eda.ipynb"]
    assert values(found, PACKAGE) == ["pandas"]


def test_path_from_metadata_when_the_content_has_none():
    found = extract_from_message("assistant", "", "Read", {"input_extra": {"path": "a/b.py"}})
    assert found == [(FILE, "a/b.py", -1, -1)]


def test_bash_call_is_a_command_with_its_packages_and_files():
    content, extra = render_tool_input(
        "Bash",
        {"command": "pip install requests && python scripts/migrate.py", "description": "x"},
    )
    found = extract_from_message("assistant", content, "Bash", {"input_extra": extra})
    assert values(found, COMMAND) == ["pip install requests && python scripts/migrate.py"]
    assert values(found, PACKAGE) == ["requests"]
    assert values(found, FILE) == ["scripts/migrate.py"]


def test_shell_call_first_line_and_heredoc_body():
    content = (
        "# write the app\ncat > app.py <<'EOF'\nimport fastapi\nself.lock = None\nEOF\n"
        "npm i -D vitest\n"
    )
    found = extract_from_message("assistant", content, "exec_command")
    assert values(found, COMMAND) == ["cat > app.py <<'EOF'"]
    assert values(found, PACKAGE) == ["fastapi", "vitest"]
    assert values(found, FILE) == ["app.py"]


def test_codex_shell_call_rendered_from_argv():
    content, _ = render_arguments(
        "shell", '{"command": ["bash", "-lc", "uv add httpx"], "workdir": "/repo"}'
    )
    found = extract_from_message("assistant", content, "shell")
    assert values(found, COMMAND) == ["uv add httpx"]
    assert values(found, PACKAGE) == ["httpx"]


def test_web_fetch_url():
    content, _ = render_tool_input("WebFetch", {"url": "https://example.com/docs", "prompt": "x"})
    assert message_values(URL, "assistant", content, "WebFetch") == ["https://example.com/docs"]


# --- sessions --------------------------------------------------------------------------------


def test_session_dedup_counts_and_context():
    filler = "word " * 60
    messages = [
        ParsedMessage(role="user", content="Please look at ./src/auth.py today."),
        ParsedMessage(role="assistant", content=f"{filler}I changed src/auth.py and\nsrc/auth.py "),
        ParsedMessage(role="assistant", content="pytest tests/", tool_name="Bash"),
        ParsedMessage(role="tool", content="1 passed", tool_name="Bash"),
    ]
    entities = {(e.type, e.normalized): e for e in extract_session(messages)}
    auth = entities[(FILE, "src/auth.py")]
    assert (auth.value, auth.count, auth.first_index) == ("./src/auth.py", 3, 0)
    assert auth.context == "Please look at ./src/auth.py today."
    command = entities[(COMMAND, "pytest tests/")]
    assert (command.count, command.first_index, command.context) == (1, 2, "pytest tests/")
    # A long message: about 160 characters around the first occurrence, whole words, one line.
    [second] = extract_session([messages[1]])
    assert second.count == 2
    assert 120 <= len(second.context) <= 170
    assert "\n" not in second.context and second.context.endswith("src/auth.py and src/auth.py")
    assert second.context.startswith("word ")


def test_session_drops_its_own_modules_as_packages():
    messages = [
        {"role": "user", "content": "Edit src/dataset.py"},
        {"role": "assistant", "content": "```python\nfrom dataset import load\nimport torch\n```"},
    ]
    packages = [e.value for e in extract_session(messages) if e.type == PACKAGE]
    assert packages == ["torch"]


# --- normalize -------------------------------------------------------------------------------


def test_normalize_rules():
    assert normalize(FILE, r"./src\Auth.py.") == "src/auth.py"
    assert normalize(FILE, "./src/") == "src"
    assert normalize(FUNCTION, "def login()") == "login"
    assert normalize(FUNCTION, "async def fetchUser(id)") == "fetchuser"
    assert normalize(FUNCTION, "function drawChart") == "drawchart"
    assert normalize(URL, "HTTPS://Example.COM/docs/#intro).") == "https://example.com/docs"
    assert normalize(URL, "https://example.com/") == "https://example.com/"
    assert normalize(PACKAGE, "Django_Rest.Framework") == "django-rest-framework"
    assert normalize(PACKAGE, "@Types/Node") == "@types/node"
    assert normalize(COMMAND, "  pytest   -q\ttests/ ") == "pytest -q tests/"
    assert normalize(ERROR, "ValueError") == "valueerror"
    assert normalize(CLASS, "UserService") == "userservice"
    assert len(normalize(FILE, "a/" * 400 + "b.py")) == MAX_VALUE


def test_normalize_is_idempotent_and_matches_what_the_api_filters_by():
    found = extract_from_text(
        "See ./src/Auth.py, https://Example.com/a#b and `pip install Py_YAML`"
    )
    for kind, value, _start, _end in found:
        key = normalize(kind, value)
        assert normalize(kind, key) == key
        # sessions/filters.py compares normalized with the query's .strip().lower().
        assert key == key.strip().lower()


# --- robustness ------------------------------------------------------------------------------


def test_values_fit_the_model():
    long_command = "echo " + "x" * 1_000
    found = extract_from_message("assistant", long_command, "Bash")
    assert values(found, COMMAND) and all(len(v) <= 200 for v in values(found, COMMAND))
    found = extract_from_text("https://example.com/" + "a" * 600 + " and /tmp/" + "b/" * 300)
    assert all(len(value) <= MAX_VALUE for _kind, value, _s, _e in found)


def test_five_megabytes_of_adversarial_text_is_fast():
    chunks = [
        "a" * 200_000,
        "a/" * 100_000,
        "a." * 100_000,
        "`a" * 100_000,
        "x()" * 70_000,
        "def def " * 25_000,
        "import " * 30_000,
        "http://a " * 20_000,
        "a@" * 100_000,
        "```\n" * 50_000,
        "$ a\n" * 50_000,
        "AbcService " * 20_000,
        "<<EOF\n" * 30_000,
        "404 " * 50_000,
        "Run shell command?\n" * 10_000,
        "src/a.py::" * 20_000,
        "( " * 100_000,
    ]
    text = "".join(chunks)
    text = (text * (5_000_000 // len(text) + 1))[:5_000_000]
    for role, tool in (("user", ""), ("tool", "Bash"), ("assistant", "Bash")):
        # CPU time: the shared machine's other load must not fail this test.
        started = time.process_time()
        extract_from_message(role, text, tool)
        assert time.process_time() - started < 3.0, (role, tool)


def test_real_samples_have_files_commands_urls_and_packages():
    paths = sorted(
        p
        for pattern in ("claude_code/*.jsonl", "codex/*.jsonl", "aider/*.md", "openai_chat/*.json")
        for p in SAMPLES.glob(pattern)
    )
    assert len(paths) >= 5
    types = set()
    for path in paths:
        for session in parse_path(path):
            types |= {e.type for e in extract_session(session.messages)}
    assert {FILE, COMMAND, URL, PACKAGE} <= types
