"""Dense pseudo-relevance feedback (Rocchio): a question about a person's hobbies or the
cities two people visited has its answer spread over messages that say little like the
question, but much like one another. After a first ranking, the query vector moves towards
the mean of its ``DOCS`` best candidates' vectors, ``q' = q + WEIGHT · mean`` (normalised),
and the candidates' similarities are measured again against ``q'`` (search/service.py).
``WEIGHT = 0`` turns it off.
"""

from __future__ import annotations

import numpy as np

DOCS = 5
WEIGHT = 0.25
COMBINE = "replace"
NAMED_ONLY = False


def enabled() -> bool:
    return DOCS > 0 and WEIGHT > 0


def expanded(query: np.ndarray, feedback: list[np.ndarray]) -> np.ndarray | None:
    """``query`` moved towards the mean of ``feedback`` and normalised; None without
    feedback."""
    if not feedback:
        return None
    moved = query + WEIGHT * np.mean(feedback, axis=0)
    norm = float(np.linalg.norm(moved))
    return moved / norm if norm else None
