"""People (docs/people.md): the short-term buffer's latency against the session list's, and the
daily distillation's throughput.

One person with ``--sessions`` sessions of 10 messages each over 5 characters (among
other people's sessions), on fresh embedded servers. Timed in the same run, alternating
call by call: ``GET /api/v1/people/{person}/recent?lastn=20`` and, as the baseline,
``GET /api/v1/sessions?person=…&limit=20`` (p50/p95 and the ratio of medians). Then one
day of ``--day-sessions`` sessions across 10 people × 5 characters distilled twice (the
first run writes, the second updates): entries per second.

    .venv/bin/python bench/people.py [--sessions 1000] [--calls 200] [--day-sessions 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

CHARACTERS = ("cathy", "rex", "winston", "ada", "lin")


def sessions_of(project, person: str, count: int, start: datetime, step: timedelta):
    from sessions.models import Message, Session

    rows = [
        Session(
            team_id=project.team_id,
            project=project,
            public_id=f"{start:%Y-%m-%d}-{person}-{i:06d}",
            agent_name=CHARACTERS[i % len(CHARACTERS)],
            user_name=person,
            title=f"Chat {i} with {person}",
            started_at=start + i * step,
            message_count=10,
        )
        for i in range(count)
    ]
    Session.objects.bulk_create(rows, batch_size=1000)
    messages = [
        Message(
            team_id=project.team_id,
            session=session,
            seq=seq,
            role="user" if seq % 2 == 0 else "assistant",
            content=f"Message {seq} of {session.title}: we talked about the trip and the train.",
            timestamp=session.started_at + timedelta(seconds=seq),
        )
        for session in rows
        for seq in range(10)
    ]
    Message.objects.bulk_create(messages, batch_size=5000)


def timed(client, url: str) -> float:
    started = time.perf_counter()
    answer = client.get(url)
    elapsed = (time.perf_counter() - started) * 1000
    assert answer.status_code == 200, answer.content[:200]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000, help="the person's sessions")
    parser.add_argument("--calls", type=int, default=200, help="calls timed per endpoint")
    parser.add_argument("--day-sessions", type=int, default=200, help="sessions of the day")
    args = parser.parse_args()
    os.environ.setdefault("SECRET_KEY", "bench-only")
    with django_on_embedded_servers():
        from rest_framework.test import APIClient

        from memories.diary.distill import distill_day
        from teams.models import ApiToken, Project, Team

        team = Team.objects.create(name="Bench", slug="bench")
        project = Project.objects.create(team=team, name="Chat", slug="chat")
        start = datetime(2026, 1, 1, tzinfo=UTC)
        sessions_of(project, "sam", args.sessions, start, timedelta(minutes=30))
        sessions_of(project, "kim", args.sessions, start, timedelta(minutes=30))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(project)[1]}")
        urls = {
            "recent": "/api/v1/people/sam/recent?lastn=20",
            "session list": "/api/v1/sessions?person=sam&limit=20",
        }
        for url in urls.values():
            timed(client, url)  # warm
        times: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(args.calls):
            for name, url in urls.items():
                times[name].append(timed(client, url))
        print(f"a person with {args.sessions} sessions of 10 messages; {args.calls} calls each")
        for name, values in times.items():
            print(
                f"  {name:12}  p50 {statistics.median(values):6.1f} ms"
                f"  p95 {percentile(values, 0.95):6.1f} ms"
            )
        ratio = statistics.median(times["recent"]) / statistics.median(times["session list"])
        print(f"  recent/session list median ratio {ratio:.2f}")

        day = date(2026, 3, 1)
        per_person = args.day_sessions // 10
        for n in range(10):
            sessions_of(
                project,
                f"person{n}",
                per_person,
                datetime(2026, 3, 1, tzinfo=UTC),
                timedelta(minutes=5),
            )
        for label in ("first run (writes)", "re-run (updates)"):
            started = time.perf_counter()
            written = distill_day(day)
            seconds = time.perf_counter() - started
            print(
                f"  distill {label}: {written} entries from {10 * per_person} sessions in "
                f"{seconds:.2f} s ({written / seconds:.1f} entries/s)"
            )
        print(f"  load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
