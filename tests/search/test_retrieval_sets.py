"""The retrieval benchmark's set loaders read their files into what the benchmark asks
(no ingestion: the files and the parsing only)."""

from __future__ import annotations

import pytest

from bench.retrieval_sets import (
    CODING_QUESTIONS,
    DERIVED,
    LOCOMO_CATEGORIES,
    load_coding_questions,
    locomo_units,
    longmemeval_units,
    sample_transcripts,
    session_key,
)


def test_locomo_units_hold_every_conversation_with_resolvable_gold(shared_dir):
    units = locomo_units(list(range(10)))

    assert [u.part for u in units.values()] == ["tune"] * 5 + ["holdout"] * 5
    questions = [q for u in units.values() for q in u.questions]
    # The 1,540 questions of categories 1-4, less the 4 without evidence and the one whose
    # only evidence id resolves to no turn.
    assert len(questions) == 1535
    assert {q.category for q in questions} == set(LOCOMO_CATEGORIES.values())
    for unit in units.values():
        client_ids = {m["client_id"] for s in unit.sessions for m in s["messages"]}
        assert client_ids == set(unit.texts) == set(unit.docs)
        for question in unit.questions:
            assert set(question.gold) <= client_ids
            assert question.gold_sessions == sorted({session_key(g) for g in question.gold})
    skipped = [s for u in units.values() for s in u.skipped]
    assert len(skipped) == 5  # the five evidence ids the data README lists


def test_longmemeval_units_are_one_project_per_haystack_with_session_gold(shared_dir):
    units = longmemeval_units()

    assert len(units) == 3
    assert sum(len(u.questions) for u in units) == 26
    for unit in units:
        session_keys = {session_key(m["client_id"]) for s in unit.sessions for m in s["messages"]}
        assert {m["role"] for s in unit.sessions for m in s["messages"]} <= {"user", "assistant"}
        for question in unit.questions:
            assert question.gold_sessions and set(question.gold_sessions) <= session_keys
            # Turn gold only for a haystack's original question, inside its gold sessions.
            assert bool(question.gold) == (question.category != DERIVED)
            assert {session_key(g) for g in question.gold} <= set(question.gold_sessions)
    originals = [q.category for u in units for q in u.questions if q.category != DERIVED]
    assert sorted(originals) == ["knowledge-update", "multi-session"]


def test_sample_transcripts_leave_out_the_aider_input_history(shared_dir):
    names = {p.name for p in sample_transcripts()}

    assert "metadata-aider.chat.history.md" in names
    assert not any(n.endswith("input.history") or n == "README.md" for n in names)
    assert "raze.jsonl" in names and "tau-bench-airline-first10.json" in names


@pytest.mark.skipif(not CODING_QUESTIONS.exists(), reason="no coding question set yet")
def test_the_coding_question_set_loads():
    questions = load_coding_questions()

    assert len({q["id"] for q in questions}) == len(questions)


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"id": None}, "no id"),
        ({"category": "guess"}, "category 'guess' not in"),
        ({"source": "nowhere.jsonl"}, "no sample file"),
        ({"gold": "one string"}, "list of non-empty strings"),
    ],
)
def test_a_broken_coding_question_stops_the_run(tmp_path, shared_dir, change, complaint):
    import yaml

    question = {
        "id": "cq-1",
        "category": "fix",
        "question": "how did we fix it?",
        "source": "claude_code/raze.jsonl",
        "gold": ["apply-grant"],
    } | change
    path = tmp_path / "questions.yaml"
    path.write_text(yaml.safe_dump([question]))

    with pytest.raises(SystemExit, match=complaint):
        load_coding_questions(path)
