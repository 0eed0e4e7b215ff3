"""A question about what someone asked for ("what was the agent asked to do in the wallet
repo?", "what did uzaxirr want from Claude?", "what did omar_davis_3817 call about?") is
answered by what a person said: the user's request, not the assistant's account of the work
that followed, which often holds more of the question's words ("I'll set up the wallet
repo…").

So when the question asks what was asked for (``search/query_intent.py``: "asked",
"wanted", "requested", "called about", or "did … want/ask/request"), the candidates that are a
user's prose are lifted by ``LIFT`` of what they lack (``relevance + (1 − relevance) ×
LIFT``) and the list is sorted again; the lifted relevance is the one shown. Among
themselves they keep their order; what an assistant said, a tool printed or a harness
injected keeps its relevance. In a chat where every speaker is a user (LoCoMo), all
candidates rise alike and the order does not change.

Contract (``lift``): the output is a permutation of the input; a relevance only rises, by
at most ``LIFT`` of what it lacks, and stays within 0..1; the output is best first.
"""

from __future__ import annotations

from search.query_intent import QueryIntent
from search.ranking import Candidate, lifted

# Chosen on the coding set's questions (bench/coding_questions.yaml; the only set whose
# questions of this kind have answers by role): 0.3, 0.5 and 0.8 gave its MRR 0.525, 0.529
# and 0.543 (0.514 without); LoCoMo and the LongMemEval sample do not move
# (docs/benchmark-log.md).
LIFT = 0.8


def lift(candidates: list[Candidate], intent: QueryIntent) -> list[Candidate]:
    """Best first, with a user's prose lifted when the question asks what was asked for."""
    if not LIFT or not intent.asks_for_request:
        return candidates
    return lifted(candidates, LIFT, lambda c: c.role == "user" and c.kind == "prose")
