"""A memory's lifecycle through the API as a sequence of actions (hypothesis' state
machine): delete, restore, resolve, supersede and unlink, in any order, always answer what
the memory's state says (204/200, or 409 with the state) and leave it in that state. Two
deletions racing: one wins, the other is a 409. And the list costs the same number of
queries whatever its length."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from memories.capture.record import Evidence, MemoryDraft, record
from memories.models import Memory
from sessions.models import Message
from teams.models import ApiToken
from tests.clients import client_for
from tests.factories import ProjectFactory
from tests.memories.conftest import ALL, decision, finding, token_client

URL = "/api/v1/memories"


@pytest.mark.django_db
def test_lifecycle_transitions_answer_as_the_state_says():
    class Lifecycle(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            # A project of its own per run: the runs share the test's transaction.
            project = self.project = ProjectFactory()
            self.agent = agent = token_client(project, *ALL)
            self.older = agent.post(URL, decision(), format="json").json()["id"]
            self.newer = agent.post(URL, finding(), format="json").json()["id"]
            # What the model expects: deleted?, superseded?, resolved?
            self.deleted = {self.older: False, self.newer: False}
            self.superseded = False
            self.resolved = False

        @rule(which=st.sampled_from(["older", "newer"]))
        def delete(self, which):
            ref = getattr(self, which)
            response = self.agent.delete(f"{URL}/{ref}?reason=tidy")
            assert response.status_code == (409 if self.deleted[ref] else 204)
            self.deleted[ref] = True

        @rule(which=st.sampled_from(["older", "newer"]))
        def restore(self, which):
            ref = getattr(self, which)
            response = self.agent.post(f"{URL}/{ref}/restore")
            assert response.status_code == (200 if self.deleted[ref] else 409)
            self.deleted[ref] = False

        @rule()
        def resolve(self):
            response = self.agent.post(f"{URL}/{self.newer}/resolve", {}, format="json")
            expected = 409 if self.deleted[self.newer] or self.resolved else 200
            assert response.status_code == expected, response.json()
            self.resolved = self.resolved or expected == 200

        @rule()
        def supersede(self):
            response = self.agent.post(
                f"{URL}/{self.newer}/links",
                {"kind": "supersedes", "target": self.older},
                format="json",
            )
            expected = 409 if any(self.deleted.values()) else 201
            assert response.status_code == expected, response.json()
            self.superseded = self.superseded or expected == 201

        @rule()
        def unlink(self):
            response = self.agent.delete(
                f"{URL}/{self.newer}/links?kind=supersedes&target={self.older}"
            )
            assert response.status_code == (204 if self.superseded else 404)
            self.superseded = False

        @invariant()
        def stored_state_agrees(self):
            older = Memory.objects.get(project=self.project, public_id=self.older)
            if self.deleted[self.older]:
                assert older.status == "deleted" and older.delete_reason == "tidy"
            else:
                assert older.status == ("superseded" if self.superseded else "active")
            newer = Memory.objects.get(project=self.project, public_id=self.newer)
            assert newer.status == ("deleted" if self.deleted[self.newer] else "active")
            assert newer.resolution == ("resolved" if self.resolved else "open")

    run_state_machine_as_test(
        Lifecycle,
        settings=settings(
            max_examples=10,
            stateful_step_count=10,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.mark.django_db(transaction=True)
def test_two_deletions_racing_one_wins_and_the_other_is_a_409():
    project = ProjectFactory()
    raw = ApiToken.issue(project, name="t", permissions=ALL)[1]
    ref = client_for(token=raw).post(URL, decision(), format="json").json()["id"]

    def delete(reason):
        try:
            return client_for(token=raw).delete(f"{URL}/{ref}?reason={reason}").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        codes = sorted(pool.map(delete, ["first", "second"]))
    assert codes == [204, 409]
    memory = Memory.objects.get(project=project, public_id=ref)
    assert memory.status == "deleted" and memory.delete_reason in ("first", "second")


@pytest.mark.django_db
def test_the_list_costs_the_same_queries_for_2_or_20_memories(
    agent, session, django_assert_num_queries
):
    messages = [Evidence(m) for m in Message.objects.filter(session=session, seq__in=[0, 1])]

    def listed(count: int) -> int:
        for n in range(Memory.objects.count(), count):
            draft = MemoryDraft(
                type="decision",
                content=f"Decision {n}",
                session=session,
                evidence=messages,
                reconcile=False,  # twenty memories, not one merged
            )
            record(session.project, draft)
        with django_assert_num_queries(QUERIES):
            body = agent.get(URL).json()
        return len(body["results"])

    agent.get(URL)  # the token's first use is written down once: not the list's cost
    assert listed(2) == 2
    assert listed(20) == 20


# Token, memories (with project, team, session, creator), their evidence (with its message
# and session, outside the trash).
QUERIES = 3
