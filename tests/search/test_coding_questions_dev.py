"""The held-out coding question set (bench/coding_questions_dev.yaml, issue 39) resolves against
the real memory_dev transcripts: every gold names exactly one imported message, so a benchmark
run (``bench/retrieval.py --sets coding-dev``) can score it.

The questions are fixed; this test only guards their format, their spread (every transcript,
enough about what was decided and how something was fixed) and that the importers still
produce the messages the golds point into.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml

from transcripts import parse_path

REPO_ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = REPO_ROOT / "bench" / "coding_questions_dev.yaml"
# The real memory_dev transcripts sit beside the checkout (../shared/data/memory_dev).
TRANSCRIPTS = REPO_ROOT.parent / "shared" / "data" / "memory_dev" / "transcripts"

CATEGORIES = {"fix", "decision", "howto", "error", "command", "request"}
MIN_QUESTIONS = 100
MIN_PER_TRANSCRIPT = 12
GOLD_LENGTH = range(20, 81)

pytestmark = pytest.mark.skipif(
    not TRANSCRIPTS.is_dir(), reason=f"{TRANSCRIPTS} is absent: the golds live in the transcripts"
)


@cache
def questions() -> list[dict]:
    return yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))


@cache
def message_texts(source: str) -> tuple[str, ...]:
    sessions = parse_path(TRANSCRIPTS / source)
    return tuple(message.content for session in sessions for message in session.messages)


def test_the_set_is_big_enough_with_unique_ids_and_known_categories():
    entries = questions()
    assert len(entries) >= MIN_QUESTIONS
    ids = Counter(entry["id"] for entry in entries)
    assert [i for i, n in ids.items() if n > 1] == []
    assert all(re.fullmatch(r"cqd-\d{3}", i) for i in ids)
    assert {entry["category"] for entry in entries} == CATEGORIES
    for entry in entries:
        assert set(entry) == {"id", "category", "question", "source", "gold"}, entry["id"]
        assert entry["question"].strip(), entry["id"]
        assert entry["gold"], entry["id"]


def test_a_quarter_or_more_ask_what_was_decided_or_how_something_was_fixed():
    categories = Counter(entry["category"] for entry in questions())
    assert categories["decision"] + categories["fix"] >= len(questions()) / 4


def test_every_question_source_file_exists():
    sources = {entry["source"] for entry in questions()}
    assert sorted(s for s in sources if not (TRANSCRIPTS / s).is_file()) == []


def test_every_dev_transcript_has_enough_questions():
    per_source = Counter(entry["source"] for entry in questions())
    transcripts = {
        str(path.relative_to(TRANSCRIPTS))
        for path in TRANSCRIPTS.rglob("*")
        if path.is_file() and path.suffix in {".jsonl", ".json", ".md"}
    }
    assert transcripts - set(per_source) == set()
    assert {s: n for s, n in per_source.items() if n < MIN_PER_TRANSCRIPT} == {}


def test_the_benchmark_loads_the_set_against_the_dev_transcripts():
    from bench.retrieval_sets import (
        CODING_DEV_QUESTIONS,
        DEV_TRANSCRIPTS,
        load_coding_questions,
        sample_transcripts,
    )

    assert CODING_DEV_QUESTIONS == QUESTIONS
    assert len(load_coding_questions(CODING_DEV_QUESTIONS, DEV_TRANSCRIPTS)) == len(questions())
    imported = {str(p.relative_to(DEV_TRANSCRIPTS)) for p in sample_transcripts(DEV_TRANSCRIPTS)}
    assert {entry["source"] for entry in questions()} <= imported


@pytest.mark.parametrize(
    "entry", questions() if TRANSCRIPTS.is_dir() else [], ids=lambda e: e["id"]
)
def test_each_gold_names_a_span_that_matches_exactly_one_imported_message(entry):
    """Each gold is a reference (message, span, hash), never the transcript's text: the span
    it names still hashes the same, and it is found in exactly one message."""
    from bench.retrieval_sets import GOLD_REFERENCE, resolve_gold

    texts = message_texts(entry["source"])
    for reference in entry["gold"]:
        assert GOLD_REFERENCE.fullmatch(reference), f"{reference!r} is not a reference"
        gold = resolve_gold(reference, TRANSCRIPTS / entry["source"], entry["id"])
        assert len(gold) in GOLD_LENGTH, f"{gold!r} should be 20-80 characters"
        matches = [i for i, text in enumerate(texts) if gold in text]
        assert len(matches) == 1, f"{gold!r} matches messages {matches} of {entry['source']}"
