"""The coding-transcript question set (bench/coding_questions.yaml) resolves against the real
transcripts: every gold names exactly one imported message, so a benchmark run can score it.

The questions are fixed; this test only guards their format and that the importers still
produce the messages the golds were copied from.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml

from transcripts import parse_path

REPO_ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = REPO_ROOT / "bench" / "coding_questions.yaml"
# The real sample files sit beside the checkout (../shared/samples), in CI too.
SAMPLES = REPO_ROOT.parent / "shared" / "samples"

CATEGORIES = {"fix", "decision", "howto", "error", "command", "request"}
MIN_QUESTIONS = 60
GOLD_LENGTH = range(20, 81)

pytestmark = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"{SAMPLES} is absent: the golds live in the real transcripts"
)


@cache
def questions() -> list[dict]:
    return yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))


@cache
def message_texts(source: str) -> tuple[str, ...]:
    sessions = parse_path(SAMPLES / source)
    return tuple(message.content for session in sessions for message in session.messages)


def test_the_set_is_big_enough_with_unique_ids_and_known_categories():
    entries = questions()
    assert len(entries) >= MIN_QUESTIONS
    ids = Counter(entry["id"] for entry in entries)
    assert [i for i, n in ids.items() if n > 1] == []
    assert {entry["category"] for entry in entries} <= CATEGORIES
    for entry in entries:
        assert set(entry) == {"id", "category", "question", "source", "gold"}, entry["id"]
        assert entry["question"].strip(), entry["id"]
        assert entry["gold"], entry["id"]


def test_every_question_set_source_file_exists():
    missing = sorted({e["source"] for e in questions() if not (SAMPLES / e["source"]).is_file()})
    assert missing == []


def test_every_sample_transcript_has_questions():
    sources = {entry["source"] for entry in questions()}
    transcripts = {
        str(path.relative_to(SAMPLES))
        for path in SAMPLES.rglob("*")
        if path.is_file() and path.suffix in {".jsonl", ".json", ".md"} and path.name != "README.md"
    }
    assert transcripts - sources == set()


@pytest.mark.parametrize("entry", questions() if SAMPLES.is_dir() else [], ids=lambda e: e["id"])
def test_each_gold_matches_exactly_one_imported_message(entry):
    texts = message_texts(entry["source"])
    for gold in entry["gold"]:
        assert len(gold) in GOLD_LENGTH, f"{gold!r} should be 20-80 characters"
        matches = [i for i, text in enumerate(texts) if gold in text]
        assert len(matches) == 1, f"{gold!r} matches messages {matches} of {entry['source']}"
