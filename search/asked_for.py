"""A question about what someone asked for ("what was the agent asked to do in the wallet
repo?", "what did uzaxirr want from Claude?", "what did omar_davis_3817 call about?") is
answered by what a person said: the user's request, not the assistant's account of the work
that followed, which often holds more of the question's words ("I'll set up the wallet
repo…").

So when the question asks what was asked for (``search/query_intent.py``: "asked",
"wanted", "requested", "called about", or "did … want/ask/request"), the candidates that are a
user's prose are lifted by ``LIFT`` (``tuning.ASKED_FOR_LIFT``) of what they lack
(``relevance + (1 − relevance) × LIFT``) and the list is sorted again; the lifted relevance
is the one shown. Among themselves they keep their order; what an assistant said, a tool
printed or a harness injected keeps its relevance. In a chat where every speaker is a user
(LoCoMo), all candidates rise alike and the order does not change.

Contract (``lift``): the output is a permutation of the input; a relevance only rises, by
at most ``LIFT`` of what it lacks, and stays within 0..1; the output is best first.
"""

from __future__ import annotations

from search import tuning
from search.query_intent import QueryIntent
from search.ranking import Candidate, lifted


def lift(candidates: list[Candidate], intent: QueryIntent) -> list[Candidate]:
    """Best first, with a user's prose lifted when the question asks what was asked for."""
    if not tuning.ASKED_FOR_LIFT or not intent.asks_for_request:
        return candidates
    return lifted(
        candidates, tuning.ASKED_FOR_LIFT, lambda c: c.role == "user" and c.kind == "prose"
    )
