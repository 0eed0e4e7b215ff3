"""What per-session visibility costs search (issue 38): hybrid search and context p50/p95
with a share of every team's sessions private (``--private-share``, default 30 %), against
every session 'team', in one run, on ``bench/search_speed.py``'s data.

**Data**: ``bench/search_speed.py``'s (its loader, sizes and real-text vectors; Zipf-like team
sizes, one project per team), its big teams' own indexes built and the buffers warmed as a
starting worker does. Each team gets two people: an *owner* and a *reader* (a member), and a
token that acts for the reader (``ApiToken.person``), so every search carries the full
scoping condition (``visibility = 'team' OR owner_id = <reader>``: docs/visibility.md).

**Variants**, switched in place by one UPDATE of the sessions (then ``ANALYZE``), so that
everything else is the same data, the same indexes, the same warm server:

- ``team``: every session 'team' (what an upgraded server holds);
- ``private``: a deterministic ``--private-share`` of every team's sessions (by a hash of
  their id) private to the team's owner; the reader searches the rest.

**Queries**: LoCoMo questions, one per team in turn (as ``bench/search_speed.py`` asks them),
``--warmup`` untimed rounds of one search per team first; then ``--rounds`` rounds, each
timing every query in both variants, the variants' order alternating between rounds (a
drift of the shared machine falls on both): ``GET /api/v1/search?q=…&limit=10`` and
``POST /api/v1/context`` (4,000 tokens), query embedding included. The keyword side's cache of
a scope's size is emptied at each switch (it would otherwise serve the other variant's
count for up to 30 s). After each private pass, no result may come from a private session.

Reported: p50/p95 of search and context per variant, their ratios (private / team), the
vector paths taken, and the load average (2 shared cores: compare within a run only).

    .venv/bin/python bench/visibility_cost.py [--messages 200000] [--teams 20] [--queries 100]
        [--rounds 2] [--warmup 3] [--private-share 0.3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile
from bench.search_speed import (
    Instruments,
    Row,
    Team,
    prepare,
    questions,
    team_indexes,
    team_sizes,
    timed_context,
    timed_search,
)

VARIANTS = ("team", "private")


def readers(projects, sizes) -> tuple[list[Team], dict[int, int]]:
    """One ``Team`` per project, its client a token acting for the team's reader, and
    team id → the owner of its private sessions."""
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from teams.models import ApiToken, Membership, Role

    users = get_user_model()
    teams, owners = [], {}
    for index, (project, size) in enumerate(zip(projects, sizes, strict=True)):
        people = {}
        for who in ("owner", "reader"):
            user, _ = users.objects.get_or_create(username=f"bench-{who}-{project.team_id}")
            Membership.objects.get_or_create(
                team_id=project.team_id, user=user, defaults={"role": Role.MEMBER}
            )
            people[who] = user
        _, raw = ApiToken.issue(project, name="visibility bench", person=people["reader"])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        teams.append(Team(index, project, size, client))
        owners[project.team_id] = people["owner"].pk
    return sorted(teams, key=lambda t: t.size), owners


def switch(variant: str, share: float, owners: dict[int, int]) -> float:
    """Make ``share`` of every team's sessions private to its owner (``private``) or every
    session the team's again (``team``); returns the share of messages now private."""
    from django.db import connection

    from search import keyword

    private = f"abs(hashtext(s.id::text)) % 1000 < {int(share * 1000)}"
    visibility = f"CASE WHEN {private} THEN 'private' ELSE 'team' END"
    if variant == "team":
        visibility = "'team'"
    owners_sql = ", ".join(f"({int(t)}, {int(o)})" for t, o in owners.items())
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE agent_sessions_session s SET visibility = {visibility}, owner_id = o.owner"
            f" FROM (VALUES {owners_sql}) o(team_id, owner) WHERE s.team_id = o.team_id"
        )
        cursor.execute("ANALYZE agent_sessions_session")
        cursor.execute(
            "SELECT coalesce(sum(message_count) FILTER (WHERE visibility = 'private'), 0)::float"
            " / greatest(sum(message_count), 1) FROM agent_sessions_session"
        )
        private_messages = cursor.fetchone()[0]
    keyword._documents_cache.clear()
    return private_messages


def private_results(found: set[str]) -> int:
    """How many of the sessions searches found are private (must be 0)."""
    from sessions.models import Session

    return Session.objects.filter(public_id__in=found, visibility="private").count()


def search_kept(instruments, row: Row) -> set[str]:
    """``timed_search``'s measure, keeping the sessions the results come from."""
    instruments.fresh()
    started = time.perf_counter()
    response = row.team.client.get("/api/v1/search", {"q": row.query, "limit": 10})
    row.ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
    body = response.json()
    row.path, row.hits = body.get("vector_path", "?"), len(body["results"])
    return {hit["session"]["id"] for hit in body["results"]}


def timed_pass(instruments, teams, texts, variant, rounds_rows) -> tuple[list[Row], set[str]]:
    """Every question once as search, then once as context; the rows and the sessions the
    searches found."""
    rows = [Row(teams[i % len(teams)], q) for i, q in enumerate(texts)]
    found = set()
    for row in rows:
        found |= search_kept(instruments, row)
    for row in rows:
        timed_context(instruments, row)
    rounds_rows[variant].extend(rows)
    return rows, found


def report(rows: dict[str, list[Row]], args, info: dict) -> None:
    def figures(values):
        return percentile(values, 0.5), percentile(values, 0.95)

    print()
    print(
        f"## Visibility scoping cost: {args.messages} messages in {args.teams} teams, "
        f"{args.queries} questions x {args.rounds} rounds per variant"
    )
    print(
        f"private variant: {args.private_share:.0%} of sessions private "
        f"({info['private_messages']:.1%} of messages); load average "
        f"{info['loadavg'][0]:.1f} → {info['loadavg'][1]:.1f}"
    )
    print()
    print("| variant | search p50 | search p95 | context p50 | context p95 | vector paths |")
    print("|---|---|---|---|---|---|")
    measured = {}
    for variant in VARIANTS:
        search = figures([r.ms for r in rows[variant]])
        context = figures([r.context_ms for r in rows[variant]])
        measured[variant] = (*search, *context)
        paths = Counter(r.path for r in rows[variant])
        print(
            f"| {variant} | {search[0]:.1f} ms | {search[1]:.1f} ms | {context[0]:.1f} ms | "
            f"{context[1]:.1f} ms | {', '.join(f'{p} {n}' for p, n in sorted(paths.items()))} |"
        )
    ratios = [p / t for p, t in zip(measured["private"], measured["team"], strict=True)]
    print(
        f"| private / team | {ratios[0]:.2f} | {ratios[1]:.2f} | {ratios[2]:.2f} | "
        f"{ratios[3]:.2f} | |"
    )
    paired = {
        kind: statistics.median(
            p / t
            for p, t in zip(
                (getattr(r, field) for r in rows["private"]),
                (getattr(r, field) for r in rows["team"]),
                strict=True,
            )
        )
        for kind, field in (("search", "ms"), ("context", "context_ms"))
    }
    print(
        f"| private / team, same question (median of the ratios) | {paired['search']:.2f} | | "
        f"{paired['context']:.2f} | | |"
    )
    print()
    print("p50 of each round (search, context):")
    for variant in VARIANTS:
        per_round = [
            rows[variant][i : i + args.queries] for i in range(0, len(rows[variant]), args.queries)
        ]
        figures_of = ", ".join(
            f"{percentile([r.ms for r in part], 0.5):.0f}/"
            f"{percentile([r.context_ms for r in part], 0.5):.0f}"
            for part in per_round
        )
        print(f"- {variant}: {figures_of} ms")
    print()
    print(f"results from a private session in the private passes: {info['leaks']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--teams", type=int, default=20)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--private-share", type=float, default=0.3)
    parser.add_argument("--sizes", choices=["zipf", "equal"], default="zipf")
    parser.add_argument("--keep", type=Path, help="database folder to reuse")
    args = parser.parse_args()
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)

    with django_on_embedded_servers(args.keep) as folder:
        projects, info = prepare(folder, args)
        print(team_indexes("build", True), flush=True)
        teams, owners = readers(projects, team_sizes(args.messages, args.teams, args.sizes))
        texts = questions()
        timed, rest = texts[: args.queries], texts[args.queries :]
        rows: dict[str, list[Row]] = {v: [] for v in VARIANTS}
        leaks = 0
        load_before = os.getloadavg()[0]
        with Instruments() as instruments:
            for variant in VARIANTS:
                switch(variant, args.private_share, owners)
                print(f"warming up ({variant}) …", flush=True)
                for i, q in enumerate(rest[: len(teams) * args.warmup]):
                    timed_search(instruments, Row(teams[i % len(teams)], q))
            for round_index in range(args.rounds):
                order = VARIANTS if round_index % 2 == 0 else VARIANTS[::-1]
                for variant in order:
                    share = switch(variant, args.private_share, owners)
                    if variant == "private":
                        info["private_messages"] = share
                    started = time.perf_counter()
                    done, found = timed_pass(instruments, teams, timed, variant, rows)
                    if variant == "private":
                        leaks += private_results(found)
                    print(
                        f"round {round_index + 1}, {variant}: {len(done)} searches and contexts"
                        f" in {time.perf_counter() - started:.0f} s",
                        flush=True,
                    )
            switch("team", args.private_share, owners)
        info["loadavg"] = (load_before, os.getloadavg()[0])
        info["leaks"] = leaks
        report(rows, args, info)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
