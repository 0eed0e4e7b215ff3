"""Odd records must give ImportFormatError or a result, never a bare TypeError/KeyError.

Each case takes a real file (or one of our fixtures) and replaces random values with values
of other JSON types, with fixed seeds so a failure is reproducible.
"""

import json
import random

import pytest

from transcripts import ImportFormatError, parse

from .helpers import FIXTURES, SAMPLES

ANTHROPIC = next((FIXTURES / "anthropic_session").iterdir()) / "transcript.jsonl"
FILES = [
    ("claude_code", SAMPLES / "claude_code" / "raze.jsonl"),
    ("claude_code", FIXTURES / "claude_code_branches.jsonl"),
    ("codex", SAMPLES / "codex" / "firststep.jsonl"),
    ("codex", FIXTURES / "codex_legacy.jsonl"),
    ("chatgpt", FIXTURES / "chatgpt_conversations.json"),
    ("openai_chat", SAMPLES / "openai_chat" / "tau-bench-airline-first10.json"),
    ("anthropic_session", ANTHROPIC),
    ("anthropic_managed_agent", FIXTURES / "managed_agent" / "session-events.jsonl"),
    ("gemini_cli", FIXTURES / "gemini_cli" / "session-2025-10-18T14-57-f3c1e2d4.json"),
    ("gemini_cli", FIXTURES / "gemini_cli" / "checkpoint-rename.json"),
    ("opencode", FIXTURES / "opencode" / "ses_6b1f0c2a3ffeQ9tWmZ4kV8nR2d.json"),
]
ODD = [None, 0, 2.5, True, "x", [], {}, [1], {"type": None}, ["a", {"type": "text"}]]


def _count(value) -> int:
    if isinstance(value, dict):
        return 1 + sum(_count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_count(v) for v in value)
    return 1


def _mutate(value, rng: random.Random, rate: float):
    if isinstance(value, dict):
        return {k: rng.choice(ODD) if rng.random() < rate else _mutate(v, rng, rate)
                for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [rng.choice(ODD) if rng.random() < rate else _mutate(v, rng, rate) for v in value]
    return value


@pytest.mark.parametrize(("name", "path"), FILES, ids=[f"{n}-{p.name}" for n, p in FILES])
def test_type_confusion_never_escapes_as_another_exception(name, path):
    text = path.read_text(encoding="utf-8")
    parsed = refused = 0
    if path.suffix == ".jsonl":
        document = [json.loads(line) for line in text.split("\n") if line.strip()]
    else:
        document = json.loads(text)
    size = _count(document)
    for seed in range(30):
        rng = random.Random(seed)
        rate = (1, 3, 10)[seed % 3] / size  # about 1, 3 or 10 odd values per file
        mutated = _mutate(document, rng, rate)
        if path.suffix == ".jsonl":
            data = "\n".join(json.dumps(line) for line in mutated)
        else:
            data = json.dumps(mutated)
        for fmt in (name, None):
            try:
                parse(data.encode(), format=fmt)
                parsed += 1
            except ImportFormatError as error:
                assert str(error)  # a message a person can act on
                refused += 1
    # lenient where it can be, strict where it must: both outcomes occur
    assert parsed and refused
