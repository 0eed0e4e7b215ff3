"""The lifecycle runs by itself: whatever the order of time passing, reads, new messages,
trash and (overlapping) runs of the daily check, every session is in the state the project's
thresholds say — or further along, never back, until it is used again.

Time passes by moving every stored time of the test's sessions into the past, so the code
under test runs on the real clock, as in production.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from sessions.capture.service import append_messages
from sessions.forget import read_counts
from sessions.forget.archive import archive_check
from sessions.forget.lifecycle import soft_delete
from sessions.models import Lifecycle, Session
from tests.factories import ProjectFactory, SessionFactory
from tests.reads import flush_reads, forget_reads
from transcripts.base import ParsedMessage

ORDER = [Lifecycle.ACTIVE, Lifecycle.IDLE, Lifecycle.DECAYING, Lifecycle.ARCHIVED]
SESSIONS = 3
IDLE_HOURS, DECAYING_DAYS, ARCHIVE_DAYS = 24, 7, 30


def due(age_hours: int) -> str:
    """The state a session whose clock is this old should reach."""
    if age_hours >= ARCHIVE_DAYS * 24:
        return Lifecycle.ARCHIVED
    if age_hours >= DECAYING_DAYS * 24:
        return Lifecycle.DECAYING
    if age_hours >= IDLE_HOURS:
        return Lifecycle.IDLE
    return Lifecycle.ACTIVE


def later(a: str, b: str) -> str:
    return max(a, b, key=ORDER.index)


class Lifecycles(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        forget_reads()
        self.project = ProjectFactory(
            idle_after_hours=IDLE_HOURS,
            decaying_after_days=DECAYING_DAYS,
            archive_after_days=ARCHIVE_DAYS,
        )
        self.sessions = [SessionFactory(project=self.project) for _ in range(SESSIONS)]
        self.age = [0] * SESSIONS  # hours since the lifecycle clock last moved
        self.state = [Lifecycle.ACTIVE] * SESSIONS
        self.trashed = [False] * SESSIONS

    def teardown(self):
        Session.objects.filter(project=self.project).delete()
        self.project.delete()

    @rule(hours=st.sampled_from([1, 5, 23, 24, 100, 24 * 7, 24 * 20, 24 * 31]))
    def time_passes(self, hours):
        shift = timedelta(hours=hours)
        Session.objects.filter(project=self.project).update(
            created_at=F("created_at") - shift,
            last_active_at=F("last_active_at") - shift,
            last_accessed_at=F("last_accessed_at") - shift,
        )
        self.age = [a + hours for a in self.age]

    @rule(i=st.integers(0, SESSIONS - 1))
    def counted_read(self, i):
        """A read that counts (context, export): wakes idle and decaying sessions."""
        read_counts.record_access([self.sessions[i].pk])
        flush_reads()
        self.age[i] = 0
        if not self.trashed[i] and self.state[i] != Lifecycle.ARCHIVED:
            self.state[i] = Lifecycle.ACTIVE

    @rule(i=st.integers(0, SESSIONS - 1))
    def opened(self, i):
        """Opening a session (its page, its messages) also brings an archived one back."""
        if self.trashed[i]:
            return
        session = Session.objects.get(pk=self.sessions[i].pk)
        read_counts.opened(session)
        flush_reads()
        self.age[i] = 0
        self.state[i] = Lifecycle.ACTIVE

    @rule(i=st.integers(0, SESSIONS - 1))
    def new_message(self, i):
        if self.trashed[i]:
            return
        append_messages(self.sessions[i], [ParsedMessage(role="user", content="still here")])
        self.age[i] = 0
        self.state[i] = Lifecycle.ACTIVE

    @rule(i=st.integers(0, SESSIONS - 1))
    def trash(self, i):
        if not self.trashed[i]:
            soft_delete(self.sessions[i])
            self.trashed[i] = True

    def _checked(self):
        for i in range(SESSIONS):
            if not self.trashed[i]:
                self.state[i] = later(self.state[i], due(self.age[i]))

    @rule()
    def daily_check(self):
        archive_check()
        self._checked()

    @rule()
    def overlapping_checks(self):
        errors = []

        def run():
            try:
                archive_check()
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=run) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        self._checked()

    @invariant()
    def states_follow_the_thresholds(self):
        stored = dict(Session.objects.filter(project=self.project).values_list("pk", "lifecycle"))
        assert [stored[s.pk] for s in self.sessions] == self.state


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_lifecycle_state_machine():
    Lifecycles.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None)

    run_state_machine_as_test(Lifecycles, settings=Lifecycles.TestCase.settings)
