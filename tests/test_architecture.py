"""The shape of the code: no import cycles, and Celery task names that never move.

An import cycle hides which module a concept belongs to (and breaks as soon as one side
imports the other at module level); grimp builds the graph from every import statement,
function-local ones included, so "import it inside the function" does not hide a cycle.
"""

from __future__ import annotations

import grimp
import pytest
from django.conf import settings

from memoryapp.celery import app

PACKAGES = (
    "mcp_server",
    "memoryapp",
    "memoryapp_client",
    "memories",
    "search",
    "sessions",
    "teams",
    "web",
)

# Messages already queued in Redis, and the beat schedule, name tasks by these strings: a
# task whose name changed would leave them unrunnable ("Received unregistered task").
# (sessions.tasks.refresh_session_stats was removed, not renamed: nothing but the tests
# ever enqueued it, so no queued message names it.)
PINNED_TASK_NAMES = {
    "sessions.tasks.embed_pending",
    "sessions.tasks.enrich_sessions",
    "sessions.tasks.sweep",
    "sessions.tasks.purge_trash",
    "sessions.tasks.enforce_retention",
    "sessions.tasks.flush_access",
    "sessions.tasks.update_decay",
    "sessions.tasks.archive_check",
    "sessions.tasks.anonymize_project",
    "search.tasks.build_team_indexes",
    "search.tasks.warm_buffers",
    "memories.tasks.extract_pending",
    "memories.tasks.sweep",
    "memories.tasks.distill_diaries",
    "memories.tasks.distill_due_diaries",
}


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm: the groups of modules that reach each other (cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_strongly_connected_finds_a_cycle_and_only_that():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.fixture(scope="module")
def import_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    return {
        module: graph.find_modules_directly_imported_by(module)
        for module in graph.modules
        if ".migrations." not in module
    }


def test_no_import_cycles_between_project_modules(import_graph):
    cycles = strongly_connected(import_graph)
    assert not cycles, "import cycles:\n" + "\n".join(
        " <-> ".join(sorted(group)) for group in cycles
    )


def test_celery_task_names_are_pinned():
    app.loader.import_default_modules()
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert registered == PINNED_TASK_NAMES


def test_the_beat_schedule_names_registered_tasks():
    app.loader.import_default_modules()
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks


def test_sessions_and_search_stand_below_memories(import_graph):
    """Memories stand on sessions and search, never the other way round: those apps tell
    memories what happened through signals (sessions/signals.py)."""
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph.items()
        if module.split(".")[0] in ("sessions", "search", "teams")
        for target in targets
        if target.split(".")[0] == "memories"
    )
    assert not upward, "imports of memories from below:\n" + "\n".join(upward)
