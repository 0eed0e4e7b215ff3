"""The one erasure path: what is derived from sessions follows them when they are forgotten.

A session is not only its messages: workers derive vectors, keyword context, entities and a
summary (this app), speaker aliases (``sessions/enrich/aliases.py``), and, in the apps that
stand on this one, memories with their evidence quotes and diary entries. Every way a
session or message is forgotten calls the functions below, inside its own transaction, and
they call each kind of derived artefact:

- ``trashed(ids)``: sessions moved to the trash (by a person, a filter, retention): what is
  derived from them is hidden or withdrawn, recoverably;
- ``restored(ids)``: back from the trash: what was hidden comes back;
- ``purging(ids)``: about to be deleted for good (by hand, the daily purge, a project's
  deletion): what the cascade of their rows would not reach goes now;
- ``message_removed(session, message)``: one message became a tombstone;
- ``anonymise(session, anonymizer, write=)``: the session's text was anonymised: derived
  text is rewritten with the same anonymizer (the same placeholders), derived vectors are
  made again from the new text; with ``write=False`` it only counts (the preview);
- ``anonymise_rest(project, anonymizer, write=)``: after a whole project, what belongs to
  no session (memories recorded by agents or people) and names its people;
- ``captured(sessions)``: sessions (rows) got new messages: a past day's material changed
  (a late capture, an import);
- ``purge_expired(now)``: the daily purge; each kind empties its own trash;
- ``visibility_changed(session_ids)``: sessions got a new owner or visibility: what is
  derived from them follows (docs/visibility.md).

The apps that stand on this one (``memories``) register a ``Derived`` in their
``AppConfig.ready``; this app never imports them. Each hook returns how many rows of each
kind it changed (a ``Counter``), for logs and the anonymisation preview.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


class Derived:
    """What one app derives from sessions; each hook does nothing unless overridden."""

    def trashed(self, session_ids: list[int]) -> Counter:
        return Counter()

    def restored(self, session_ids: list[int]) -> Counter:
        return Counter()

    def purging(self, session_ids: list[int]) -> Counter:
        return Counter()

    def message_removed(self, session, message) -> Counter:
        return Counter()

    def anonymise(self, session, anonymizer, *, write: bool) -> Counter:
        return Counter()

    def anonymise_rest(self, project, anonymizer, *, write: bool) -> Counter:
        return Counter()

    def captured(self, sessions: list) -> Counter:
        return Counter()

    def purge_expired(self, now) -> Counter:
        return Counter()

    def visibility_changed(self, session_ids: list[int]) -> Counter:
        return Counter()


_registered: list[Derived] = []


def register(derived: Derived) -> None:
    if not any(type(d) is type(derived) for d in _registered):
        _registered.append(derived)


def _each(hook: str, *args, **kwargs) -> Counter:
    total = Counter()
    for derived in _registered:
        total.update(getattr(derived, hook)(*args, **kwargs))
    return total


def _ids(session_ids: Iterable[int]) -> list[int]:
    return sorted(set(session_ids))


def trashed(session_ids: Iterable[int]) -> Counter:
    from sessions.enrich import aliases

    ids = _ids(session_ids)
    if not ids:
        return Counter()
    return aliases.withdraw_all(ids) + _each("trashed", ids)


def restored(session_ids: Iterable[int]) -> Counter:
    from sessions.enrich import aliases

    ids = _ids(session_ids)
    if not ids:
        return Counter()
    return aliases.give_back_all(ids) + _each("restored", ids)


def purging(session_ids: Iterable[int]) -> Counter:
    # (Their aliases were withdrawn when they went to the trash: a name nobody else gives
    # evidence for was deleted then.)
    ids = _ids(session_ids)
    return _each("purging", ids) if ids else Counter()


def message_removed(session, message) -> Counter:
    return _each("message_removed", session, message)


def anonymise(session, anonymizer, *, write: bool) -> Counter:
    return _each("anonymise", session, anonymizer, write=write)


def anonymise_rest(project, anonymizer, *, write: bool) -> Counter:
    return _each("anonymise_rest", project, anonymizer, write=write)


def captured(sessions: list) -> Counter:
    return _each("captured", sessions) if sessions else Counter()


def purge_expired(now) -> Counter:
    return _each("purge_expired", now)


def visibility_changed(session_ids: Iterable[int]) -> Counter:
    from sessions.enrich import aliases

    ids = _ids(session_ids)
    if not ids:
        return Counter()
    return aliases.visibility_changed(ids) + _each("visibility_changed", ids)
