"""Any sequence of what people do on a memory page (read, pin, unpin, edit, resolve,
delete, and again after it is deleted) leaves the memory as the pages said: never an error
page, resolved once, deleted once, the priority always what its fields give."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from memories.capture.record import MemoryDraft, record
from memories.decay import priority_of
from memories.models import Memory, MemoryStatus, MemoryType
from teams.models import Role
from tests.factories import MembershipFactory, ProjectFactory

WORDINGS = [
    "The cache never expires",
    "The cache entries never expire after a deploy",
    "Sessions outlive their users",
]


class MemoryPage(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        membership = MembershipFactory(role=Role.ADMIN)
        self.client = Client()
        self.client.force_login(membership.user)
        project = ProjectFactory(team=membership.team)
        self.memory = record(
            project,
            MemoryDraft(
                type=MemoryType.FINDING, content=WORDINGS[0], embedding=[1.0] + [0.0] * 383
            ),
        ).memory
        self.pinned = self.resolved = self.deleted = False
        self.content = WORDINGS[0]
        self.reads = 0

    def url(self, name):
        return reverse(f"web:{name}", args=[self.memory.project_id, self.memory.public_id])

    @rule()
    def read(self):
        response = self.client.get(self.url("memory"))
        assert response.status_code == (404 if self.deleted else 200)
        self.reads += 0 if self.deleted else 1

    @rule(pinned=st.booleans())
    def pin(self, pinned):
        response = self.client.post(self.url("memory-pin"), {"pinned": str(pinned).lower()})
        assert response.status_code == 302
        if not self.deleted:
            self.pinned = pinned

    @rule(content=st.sampled_from(WORDINGS))
    def edit(self, content):
        response = self.client.post(self.url("memory-edit"), {"content": content, "tags": "cache"})
        assert response.status_code == 302
        if not self.deleted:
            self.content = content

    @rule()
    def resolve(self):
        response = self.client.post(self.url("memory-resolve"), {"action_taken": "set a TTL"})
        assert response.status_code == 302
        if not self.deleted:
            self.resolved = True

    @rule()
    def delete(self):
        response = self.client.post(self.url("memory-delete"), {"reason": "not a finding"})
        assert response.status_code == 302 and response["Location"] == "/memories"
        self.deleted = True

    @invariant()
    def the_memory_is_as_the_pages_said(self):
        row = Memory.objects.get(pk=self.memory.pk)
        assert row.status == (MemoryStatus.DELETED if self.deleted else MemoryStatus.ACTIVE)
        assert (row.pinned, row.content, row.access_count) == (
            self.pinned,
            self.content,
            self.reads,
        )
        assert row.resolution == ("resolved" if self.resolved else "open")
        if not self.deleted:
            assert row.priority == pytest.approx(priority_of(row, timezone.now()), abs=1e-3)

    @invariant()
    def the_list_shows_it_until_it_is_deleted(self):
        body = self.client.get("/memories?status=any").content.decode()
        assert (f'href="{self.url("memory")}"' in body) != self.deleted


@pytest.mark.django_db
def test_memory_page_action_sequences():
    run_state_machine_as_test(
        MemoryPage, settings=settings(max_examples=15, stateful_step_count=10, deadline=None)
    )
