"""The contract of the lifts a question's intent applies after the one score
(search/temporal.py, search/asked_for.py): the output is a permutation of the input; only
the candidates the lift is for rise, by at most its share of what they lack, and stay
within 0..1; the rest keep their relevance; the output is best first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search import asked_for, temporal, tuning
from search.query_intent import QueryIntent
from search.ranking import Candidate

LIFTS = {
    "a question that asks when lifts what says when": (
        (temporal, "TEMPORAL_LIFT"),
        "asks_when",
        lambda c: c.says_when,
    ),
    "a question about a request lifts a user's prose": (
        (asked_for, "ASKED_FOR_LIFT"),
        "asks_for_request",
        lambda c: c.role == "user" and c.kind == "prose",
    ),
}

candidates = st.lists(
    st.tuples(
        st.floats(0, 1),
        st.booleans(),
        st.sampled_from(["user", "assistant", "tool", "system"]),
        st.sampled_from(["prose", "injected", "console", "tool_output"]),
    ),
    max_size=20,
).map(
    lambda items: [
        Candidate(message_id=i, relevance=r, says_when=when, role=role, kind=kind)
        for i, (r, when, role, kind) in enumerate(items)
    ]
)


@pytest.mark.parametrize("name", LIFTS)
@given(ranked=candidates, asks=st.booleans(), share=st.floats(0, 1))
def test_a_lift_raises_only_what_it_is_for_and_keeps_the_list_best_first(name, ranked, asks, share):
    (module, constant), intent_field, lifted = LIFTS[name]
    before = {c.message_id: (c.relevance, lifted(c)) for c in ranked}
    saved = getattr(tuning, constant)
    setattr(tuning, constant, share)
    try:
        out = module.lift(ranked, QueryIntent(**{intent_field: asks}))
    finally:
        setattr(tuning, constant, saved)
    assert sorted(c.message_id for c in out) == sorted(before)
    for c in out:
        old, for_it = before[c.message_id]
        if asks and for_it:
            assert old <= c.relevance <= 1.0
            assert c.relevance - old <= share * (1 - old) + 1e-12
        else:
            assert c.relevance == old
    if asks and share:
        assert [c.relevance for c in out] == sorted((c.relevance for c in out), reverse=True)
