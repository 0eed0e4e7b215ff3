"""Every constant that tunes ranking and retrieval, in one place.

Search reads them as ``tuning.NAME`` when it runs (never copied at import), so a bench sets
one on this module and the next search follows it: ``bench/constant_variants.py`` does,
with no Django involved (this module imports nothing). What each one does is said where it
is used; why it has its value is said here.
"""

from __future__ import annotations

# --- The one score of a search (search/ranking.py) ---------------------------------------
# Chosen on LoCoMo conversations 0-4 against the reciprocal-rank fusion it replaced, checked
# on 5-9 and the other sets (docs/benchmarks.md).
KEYWORD_STRENGTH = 1.0
RELEVANCE_SCALE = 0.35
SIMILARITY_FLOOR = 0.1
SESSION_SUPPORT = 0.4  # how much a session's best matches lift each of its messages
SESSION_BEST = 3  # how many of a session's best matches its support adds up
# Memories' keys to a message lift it by at most this much of what it lacks (search/extra_keys.py).
EXTRA_LIFT = 0.2
RRF_K = 20  # the EXTRA_LIFT a memory's key gives scales as RRF_K/(RRF_K + its rank - 1)
# What a message that is not prose keeps of its relevance, when the question does not ask
# for that kind (search/query_intent.py). Chosen on principle (search/ranking.py says why).
NOISE_FACTORS = {"injected": 0.95, "console": 0.95, "tool_output": 0.95}
RECENCY_WEIGHT = 0.3
# A decaying session keeps its matches, below an equally good match of a session in use.
DECAYING_FACTOR = 0.8
MMR_LAMBDA = 0.7

# --- What a question's intent lifts ------------------------------------------------------
# A message that says when, for a question asking when (search/temporal.py). Chosen on
# LoCoMo 0-4: turn R@10 0.805 for any lift from 0.3 to 0.7, and 0.5 is the middle; checked
# on 5-9 and the other sets (docs/benchmarks.md).
TEMPORAL_LIFT = 0.5
# A user's prose, for a question about what was asked for (search/asked_for.py). Chosen on
# the coding set's questions (bench/coding_questions.yaml; the only set whose questions of
# this kind have answers by role): 0.3, 0.5 and 0.8 gave its MRR 0.525, 0.529 and 0.543
# (0.514 without); LoCoMo and the LongMemEval sample do not move (docs/benchmarks.md).
ASKED_FOR_LIFT = 0.8
# A named speaker's focus (search/speakers.py): what the others' messages keep, and how
# much a named speaker's self-statements are lifted. SELF_LIFT chosen on LoCoMo 0-4,
# checked on 5-9 and the other sets (docs/benchmarks.md).
OTHERS_FACTOR = 0.8
SELF_LIFT = 0.2
SELF_NOT_QUESTION = True  # a message ending with a question mark is not a self-statement

# --- The keyword side (search/keyword.py) -------------------------------------------------
# A word of a message's context counts CONTEXT_WEIGHT of one of its own: of a question and
# its answer, the one that holds the words ranks first. 0.75 did best on LoCoMo's tuning
# conversations, 0-4 (bench/locomo.py measures it).
CONTEXT_WEIGHT = 0.75
MIN_POOL = 50  # candidates taken from each side, at least (messages and memories)

# --- The vector side (search/semantic.py; memories/retrieve/) ----------------------------
# The exact scan's cost grows with the messages in scope, the quantized one's far more
# slowly, with nearly the exact recall (bench/search_speed.py measures both); a filtered
# HNSW scan reads about (rows wanted / the scope's share of the table) tuples, so it pays
# only where a scope is a large share of a very large table.
EXACT_SCAN_MAX_CHUNKS = 2_000
QUANTIZED_MAX_CHUNKS = 200_000
QUANTIZED_RERANK = 400  # chunks re-ranked by exact cosine, at least (4x the chunks wanted)
# How widely HNSW looks before the scope's filters apply (pgvector's iterative scan keeps
# looking when the filters leave too few), for messages and memories alike.
HNSW_EF_SEARCH = 100
HNSW_EF_SEARCH_MAX = 1_000  # pgvector's ceiling; the iterative scan goes on past it
HNSW_MAX_SCAN_TUPLES = 40_000
HNSW_OVERFETCH = 3
TEAM_OVERFETCH_MARGIN = 1.25
# Up to this many memories in scope, memory search's vector side is an exact scan
# (memories/retrieve/search.py says why).
EXACT_SCAN_MAX_MEMORIES = 2_000
