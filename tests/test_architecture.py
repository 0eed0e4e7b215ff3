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
    "core",
    "mcp_server",
    "memoryapp",
    "memoryapp_client",
    "memories",
    "protocol",
    "search",
    "sessions",
    "teams",
    "transcripts",
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


# The apps, above the bottom package (core) and below the wiring (memoryapp).
APPS = ("mcp_server", "memories", "search", "sessions", "teams", "web")


def _imports(import_graph, sources, targets) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, found in import_graph.items()
        if module.split(".")[0] in sources
        for target in found
        if target.split(".")[0] in targets
    )


def test_the_bottom_package_imports_no_app_and_no_wiring(import_graph):
    """core is what every app uses (errors, input, OpenAPI helpers, env, the quick broker):
    it stands below them all, so a domain error says its own status and code
    (core.errors.DomainError) instead of the handler importing each app's exceptions."""
    upward = _imports(import_graph, ("core",), (*APPS, "memoryapp", "memoryapp_client"))
    assert not upward, "core imports from above:\n" + "\n".join(upward)


def test_no_app_imports_the_wiring(import_graph):
    """memoryapp is settings, urls, celery and the local runtime: Django and the entry
    points load it, no app does (Celery's app is celery.current_app to them)."""
    upward = _imports(import_graph, (*APPS, "core"), ("memoryapp",))
    assert not upward, "imports of memoryapp from the apps:\n" + "\n".join(upward)


# What of core the Django-free packages may use: the errors, in plain Python.
PLAIN_CORE = {"core.errors", "core.error_codes"}


def test_transcripts_and_protocol_stand_below_the_server_and_the_client(import_graph):
    """Both sides import them (the client must run without the server's code), so they
    import neither: no Django, no app, no client; of core only its plain-Python errors."""
    bottom = ("transcripts", "protocol")
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph.items()
        if module.split(".")[0] in bottom
        for target in targets
        if target.split(".")[0] not in bottom and target not in PLAIN_CORE
    )
    assert not upward, "imports from the bottom packages upwards:\n" + "\n".join(upward)


def test_no_server_package_imports_the_client(import_graph):
    # mcp_server serves the client's own MCP tools (one definition for both transports).
    server = ("core", "memoryapp", *(a for a in APPS if a != "mcp_server"), "transcripts")
    found = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph.items()
        if module.split(".")[0] in server
        for target in targets
        if target.split(".")[0] == "memoryapp_client"
    )
    assert not found, "the server imports the client:\n" + "\n".join(found)


# Each app's stage folders, in the order a session's data flows through them: a stage
# imports the stages before it (and the app's own modules: models, decay, derived, poke),
# never one after it.
STAGES = ("capture", "enrich", "retrieve", "forget")
# The one exception: a capture over the project's session quota compacts the session's
# oldest messages (forget/compaction.py) before it refuses, inside the capture's own
# transaction, as the project's lifecycle policy says.
STAGE_EXCEPTIONS = {("sessions.capture.service", "sessions.forget.compaction")}


def test_stage_folders_import_only_the_stages_before_them(import_graph):
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph.items()
        for target in targets
        if (module, target) not in STAGE_EXCEPTIONS
        and _stage(module)
        and _stage(target)
        and module.split(".")[0] == target.split(".")[0]
        and STAGES.index(_stage(target)) > STAGES.index(_stage(module))
    )
    assert not upward, "imports of a later stage:\n" + "\n".join(upward)


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in STAGES else None


# The packages as floors of a house, lowest first: each imports only its own floor's and
# those below (docs/architecture.md draws it). The client stands beside the server.
FLOORS = (
    ("core", "transcripts", "protocol"),
    ("teams",),
    ("sessions",),
    ("search",),
    ("memories",),
    ("web", "mcp_server"),
    ("memoryapp",),
)


def test_packages_import_only_their_floor_and_those_below(import_graph):
    floor = {package: level for level, names in enumerate(FLOORS) for package in names}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph.items()
        for target in targets
        if module.split(".")[0] in floor
        and target.split(".")[0] in floor
        and floor[target.split(".")[0]] > floor[module.split(".")[0]]
    )
    assert not upward, "imports of a higher floor:\n" + "\n".join(upward)
