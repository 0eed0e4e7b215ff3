"""Speaker focus (search/speakers.py) and the context's choice of messages
(search/excerpts.py) as pure functions."""

from hypothesis import given
from hypothesis import strategies as st

from search import excerpts, speakers
from search.excerpts import Window

items = st.lists(
    st.tuples(st.floats(0, 1, allow_nan=False), st.sampled_from(["Ann", "Bo", "Cy", ""])),
    max_size=30,
)


def test_named_speakers_are_the_authors_whose_first_name_the_query_uses():
    authors = {"Melanie", "Caroline", "John Smith", "gpt-4o"}
    assert speakers.named("What are Melanie's hobbies?", authors) == {"Melanie"}
    assert speakers.named("does john work full-time?", authors) == {"John Smith"}
    assert speakers.named("Which cities have both been to?", authors) == set()
    assert speakers.named("🚀", authors) == set()


def test_a_handle_is_named_by_its_first_part_and_a_common_word_names_nobody():
    authors = {"kate_m", "jon.snow", "omar_davis_3817", "The Architect", "42_bot"}
    assert speakers.named("Does Kate work full-time?", authors) == {"kate_m"}
    assert speakers.named("where has jon camped?", authors) == {"jon.snow"}
    # A question that writes the handle itself names it too.
    assert speakers.named("what did omar_davis_3817 call about?", authors) == {"omar_davis_3817"}
    assert speakers.named("what did the architect decide?", authors) == set()
    assert speakers.named("which 42 tests failed?", authors) == set()


@given(items, st.sets(st.sampled_from(["Ann", "Bo", "Cy"])), st.floats(0, 1))
def test_focus_is_a_permutation_sorted_by_a_score_that_only_falls(pairs, named, factor):
    ranked = sorted(enumerate(pairs), key=lambda p: -p[1][0])
    out = speakers.focus(ranked, lambda p: p[1][0], lambda p: p[1][1], named, factor)
    assert sorted(p[0] for p, _ in out) == sorted(p[0] for p in ranked)
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    for (_, (before, author)), after in out:
        assert after == before if author in named else after <= before


@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.sampled_from(["Ann", "Bo"]), st.booleans())
    ),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_focus_lifts_only_the_named_speakers_self_statements_within_0_1(rows, factor, lift):
    ranked = sorted(enumerate(rows), key=lambda p: -p[1][0])
    out = speakers.focus(
        ranked, lambda p: p[1][0], lambda p: p[1][1], {"Ann"}, factor, lambda p: p[1][2], lift
    )
    assert sorted(p[0] for p, _ in out) == sorted(p[0] for p in ranked)
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    for (_, (before, author, states_self)), after in out:
        if author == "Ann" and states_self:
            assert before <= after <= 1.0
        else:
            assert after <= before


def test_focus_puts_the_named_speaker_above_an_equal_match_by_someone_else():
    ranked = [("other", 1.0, "Bo"), ("named", 0.9, "Ann")]
    out = speakers.focus(ranked, lambda r: r[1], lambda r: r[2], {"Ann"}, 0.8)
    assert [r[0] for r, _ in out] == ["named", "other"]


def test_windows_hold_the_message_before_and_after():
    (window,) = excerpts.windows([(0, 5)], before=1, after=1)
    assert window == Window(0, 5, (4, 6))
    (first,) = excerpts.windows([(0, 0)], before=1, after=1)
    assert first.neighbours == (1,)


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12)), max_size=25),
    st.dictionaries(
        st.tuples(st.integers(0, 3), st.integers(0, 12)), st.integers(1, 300), max_size=40
    ),
    st.dictionaries(st.integers(0, 3), st.integers(0, 120)),
    st.integers(0, 2000),
)
def test_allocate_never_spends_more_than_the_budget(matches, tokens, frames, budget):
    chosen = excerpts.allocate(excerpts.windows(matches), tokens, frames, budget, gap_tokens=1)
    # What the context shows: each session's frame, its messages, and a "…" between two
    # runs of consecutive seqs (search/context.py).
    gaps = sum(
        sum(1 for seq in seqs if seq - 1 not in seqs) - 1 for seqs in chosen.values() if seqs
    )
    spent = (
        sum(frames.get(s, 0) for s in chosen)
        + sum(tokens[(s, seq)] for s, seqs in chosen.items() for seq in seqs)
        + gaps
    )
    assert spent <= budget
    for s, seqs in chosen.items():
        assert all((s, seq) in tokens for seq in seqs)


def test_allocate_takes_the_best_match_of_every_session_before_a_weaker_one():
    tokens = {(s, q): 10 for s in range(3) for q in range(10)}
    found = excerpts.windows([(0, 5), (1, 2), (2, 7), (0, 8)], before=1, after=1)
    # Room for three windows and frames: the three sessions' best, not session 0's second.
    chosen = excerpts.allocate(found, tokens, {0: 5, 1: 5, 2: 5}, 3 * (30 + 1) + 15)
    assert chosen == {0: {4, 5, 6}, 1: {1, 2, 3}, 2: {6, 7, 8}}


def test_a_window_too_big_whole_is_taken_as_its_match_alone():
    tokens = {(0, 4): 500, (0, 5): 10, (0, 6): 500}
    chosen = excerpts.allocate(excerpts.windows([(0, 5)], 1, 1), tokens, {0: 5}, 100)
    assert chosen == {0: {5}}
