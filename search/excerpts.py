"""Which messages of the found sessions a context shows, within its token budget.

Each match brings a **window**: the message, the one before it (usually the question it
answers) and the one after it (the reply that says what a short answer meant). Windows are
taken best match first **across all sessions**, not session by session, so the budget goes
to the best matches wherever they are and a question whose answer is spread over several
sessions gets each of them. A session's frame (its heading and summary) is paid for with
its first window. A window that does not fit whole is tried as its match alone; then the
next one is tried, until the budget is spent.

``allocate`` is pure (token counts in, chosen messages out), so its promise — never more
than the budget — is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_BEFORE = 1
WINDOW_AFTER = 1


@dataclass(frozen=True)
class Window:
    session: int  # the session's position in the context
    seq: int  # the matching message
    neighbours: tuple[int, ...] = ()  # the messages around it, by seq


def windows(
    matches: list[tuple[int, int]], before: int | None = None, after: int | None = None
) -> list[Window]:
    """A window for each ``(session position, seq)`` match, in the order given, of
    ``before`` messages before it and ``after`` after it (by default ``WINDOW_BEFORE`` and
    ``WINDOW_AFTER``)."""
    before = WINDOW_BEFORE if before is None else before
    after = WINDOW_AFTER if after is None else after
    return [
        Window(
            session,
            seq,
            tuple(s for s in range(seq - before, seq + after + 1) if s != seq and s >= 0),
        )
        for session, seq in matches
    ]


def allocate(
    found: list[Window],
    message_tokens: dict[tuple[int, int], int],
    frame_tokens: dict[int, int],
    budget: int,
    gap_tokens: int = 1,
) -> dict[int, set[int]]:
    """The seqs each session shows: the windows in order while they fit ``budget``.

    ``message_tokens``: (session, seq) → the tokens of that message as shown (a missing
    neighbour, e.g. past a session's end, is skipped); ``frame_tokens``: session → what
    opening it costs (heading and summary); ``gap_tokens``: what the "…" between two
    windows of a session costs, counted once per window. The chosen messages and their
    sessions' frames never cost more than ``budget``."""
    chosen: dict[int, set[int]] = {}
    left = budget
    for window in found:
        if (window.session, window.seq) not in message_tokens:
            continue
        shown = chosen.get(window.session)
        opening = frame_tokens.get(window.session, 0) if shown is None else 0
        seen = shown or set()
        whole = [window.seq, *window.neighbours]
        for seqs in (whole, [window.seq]):
            new = [s for s in seqs if s not in seen and (window.session, s) in message_tokens]
            cost = opening + gap_tokens + sum(message_tokens[(window.session, s)] for s in new)
            if not new and shown is not None:
                break  # already shown whole
            if cost <= left:
                chosen.setdefault(window.session, set()).update(new)
                left -= cost
                break
    return chosen
