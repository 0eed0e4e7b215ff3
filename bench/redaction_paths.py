"""What redaction adds to a write on the paths that are not messages (issue 34): recording a
memory, editing one, updating an agent state, changing a session's text (the PATCH).

Two projects of one team on fresh embedded servers: one with every switch on (secrets,
e-mail addresses, phone numbers), one with every switch off. Each kind of write runs
``--writes`` times in each project, alternating between them write by write (so drift of
the machine touches both alike), with the same inputs; the time is the service call's wall
time (``record``, ``edit``, ``update_agent_state``, ``SessionPatchSerializer.save``),
database round trips and, for memories, the query embedding included, as the API pays it.
Also timed: the redaction alone (``redact_draft``, ``redact_for``, ``redact_session_text``)
on the same inputs in the project with every switch on. On a shared machine the difference
of the medians of whole writes moves by a few milliseconds from run to run (the query
embedding and the database dominate); the redaction alone is the cost it adds.

Inputs: a paragraph of engineering prose (``PROSE``, ~600 characters) with a write number in
it (so no two memories are restatements); one write in four also carries a GitHub token, an
e-mail address and a phone number (what the switches are for), the others carry none (most
writes).

    .venv/bin/python bench/redaction_paths.py [--writes 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

PROSE = (
    "We moved the session store to PostgreSQL after the Redis outage on Tuesday; the "
    "migration keeps the old keys readable for a week. Token refresh now happens in the "
    "middleware, not in each view, and the tests cover the expiry edge. Deploys go through "
    "the staging pipeline first; the smoke suite checks login, search and the export. The "
    "decision was to keep JWTs short-lived (15 minutes) with refresh tokens stored hashed, "
    "rotated on use. Open question: whether the mobile client can live with the shorter "
    "lifetime, Winston to check with the team on Thursday. Write number {n}."
)
SECRETS = (
    " The CI token was ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8, ask ana.lima@example.com "
    "or call +1 202 456 1111."
)


def text(n: int) -> str:
    return PROSE.format(n=n) + (SECRETS if n % 4 == 0 else "")


def summary(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.3f} ms, p95 {percentile(values, 0.95):.3f} ms "
        f"({len(values)} writes)"
    )


def timed(call, *args) -> float:
    start = time.perf_counter()
    call(*args)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    with django_on_embedded_servers():
        from memories.capture.edit import edit
        from memories.capture.record import (
            MemoryDraft,
            record,
            redact_draft,
            update_agent_state,
        )
        from sessions.api.serializers import SessionPatchSerializer
        from sessions.capture.redaction import redact_for
        from sessions.capture.service import capture_session
        from sessions.capture.session_text import redact_session_text
        from sessions.embedding.query import embed_query
        from teams.models import Project
        from teams.services import ensure_team_and_project
        from transcripts.base import ParsedMessage, ParsedSession

        team, on, _ = ensure_team_and_project("bench", "redaction-on")
        off = Project.objects.create(team=team, name="redaction-off", slug="redaction-off")
        Project.objects.filter(pk=on.pk).update(
            redact_secrets=True, redact_emails=True, redact_phones=True
        )
        Project.objects.filter(pk=off.pk).update(
            redact_secrets=False, redact_emails=False, redact_phones=False
        )
        on.refresh_from_db()
        off.refresh_from_db()
        projects = {"on": on, "off": off}
        embed_query("warm the model up")

        def draft(n):
            return MemoryDraft(
                type="decision",
                content=text(n),
                details={"rationale": text(n), "alternatives_considered": ["cookies"]},
                topic=f"session-store-{n}",
                tags=["auth", "deploy"],
                reconcile=False,
            )

        sessions = {
            name: capture_session(
                project,
                ParsedSession(
                    source_format="api",
                    agent_name="bench",
                    messages=[ParsedMessage(role="user", content="hello")],
                ),
            ).session
            for name, project in projects.items()
        }
        memories = {name: record(project, draft(-1)).memory for name, project in projects.items()}

        def patch(name, n):
            serializer = SessionPatchSerializer(
                sessions[name],
                data={"title": text(n)[:200], "topics": ["auth"], "metadata": {"note": text(n)}},
                partial=True,
            )
            serializer.is_valid(raise_exception=True)
            serializer.save()

        writes = {
            "record a memory": lambda name, n: record(projects[name], draft(n)),
            "edit a memory": lambda name, n: edit(
                memories[name], content=text(n), details={"rationale": text(n)}
            ),
            "agent state": lambda name, n: update_agent_state(
                projects[name],
                agent="bench",
                session=None,
                state={"current_context": {"current_task": text(n)}, "working_memory": {}},
            ),
            "session PATCH": patch,
        }
        alone = {
            "record a memory": lambda name, n: redact_draft(projects[name], draft(n)),
            "edit a memory": lambda name, n: (
                redact_for(projects[name], text(n)),
                redact_for(projects[name], {"rationale": text(n)}),
            ),
            "agent state": lambda name, n: redact_for(
                projects[name], {"current_context": {"current_task": text(n)}}
            ),
            "session PATCH": lambda name, n: redact_session_text(
                projects[name],
                {"title": text(n)[:200], "topics": ["auth"], "metadata": {"note": text(n)}},
            ),
        }
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for kind, write in writes.items():
            times: dict[str, list[float]] = {"on": [], "off": []}
            for n in range(args.writes):
                for name in ("on", "off") if n % 2 else ("off", "on"):
                    times[name].append(timed(write, name, n))
            added = statistics.median(times["on"]) - statistics.median(times["off"])
            print(f"\n{kind}")
            print(f"  redaction on:  {summary(times['on'])}")
            print(f"  redaction off: {summary(times['off'])}")
            print(f"  added (difference of medians): {added:+.3f} ms")
            only = [timed(alone[kind], "on", n) for n in range(args.writes)]
            print(f"  the redaction alone: {summary(only)}")


if __name__ == "__main__":
    main()
