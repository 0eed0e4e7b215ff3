"""What the sessions app tells the apps that stand on it (``memories``), without importing
them: each is sent once the change it reports is committed. (Forgetting is not a signal:
``sessions/derived.py`` calls what is derived, inside the erasure's transaction.)
"""

from django.dispatch import Signal

# A session's enrichment moved forward: its messages up to ``through_seq`` are summarised.
# Arguments: ``session_id``, ``team_id``, ``through_seq``. Sent after the commit.
session_enriched = Signal()

# The periodic decay run updated the sessions' priorities; other decaying rows follow.
# Arguments: ``now``.
decay_due = Signal()
