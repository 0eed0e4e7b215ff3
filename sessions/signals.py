"""What the sessions app tells the apps that stand on it (``memories``), without importing
them: each is sent once the change it reports is committed (or, for ``message_removed``,
inside the transaction that removes the message, so a listener's cleanup commits with it).
"""

from django.dispatch import Signal

# A session's enrichment moved forward: its messages up to ``through_seq`` are summarised.
# Arguments: ``session_id``, ``team_id``, ``through_seq``. Sent after the commit.
session_enriched = Signal()

# A message became a tombstone: what was derived from it must go with its text.
# Arguments: ``message_id``, ``session_id``. Sent inside the removal's transaction.
message_removed = Signal()

# The periodic decay run updated the sessions' priorities; other decaying rows follow.
# Arguments: ``now``.
decay_due = Signal()
