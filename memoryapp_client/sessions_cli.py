"""`memoryapp sessions list` and `memoryapp similar SESSION`: the sessions of this project
(by the working directory, docs/api.md), of another one, or of all, and the sessions nearest
to one; `memoryapp visibility SESSION... V`: who reads them (docs/visibility.md)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from memoryapp_client.api import VISIBILITIES, MemoryError
from memoryapp_client.projects import project_reference

LIST_EXAMPLES = """\
examples:
  memoryapp sessions list                          # this directory's project, newest first
  memoryapp sessions list --all-projects           # every project the token sees
  memoryapp sessions list --project ~/repos/web    # another directory's project
  memoryapp sessions list --project acme/web       # a project by name
  memoryapp sessions list --agent architect --since 2025-01-01 --sort message_count
  memoryapp sessions list --status completed --topic auth --limit 100 --json

The project is the working directory's (/home/me/repos/myapp is -home-me-repos-myapp) for a
team-level token; a project token always lists its own project.
"""

SIMILAR_EXAMPLES = """\
examples:
  memoryapp similar 2025-01-15-architect-1a2b3c
  memoryapp similar 2025-01-15-architect-1a2b3c --limit 10 --json

Similarity (0-100%) compares the sessions' summaries by meaning (or their messages until
a summary is written). Session ids are in `memoryapp sessions list` and `memoryapp search`.
"""

VISIBILITY_EXAMPLES = """\
examples:
  memoryapp visibility 2025-01-15-architect-1a2b3c private
  memoryapp visibility 2025-01-15-architect-1a2b3c 2025-01-16-dev-4d5e6f summary
  memoryapp visibility $(memoryapp sessions list --json | jq -r '.results[].id') team

private: only its owner reads it (the team's admins see that it exists, may delete it);
summary: the team reads its title, summary, topics and accepted memories, not its messages;
team:    the whole team reads it.
Its owner gives any visibility the project allows; an admin of the team may only make a
session less visible. All the sessions change, or none (the error says why). The token must
act for the owner (the tokens page, or create_api_token --for USER) and may write.
"""

SORTS = ["started_at", "ended_at", "message_count", "size_bytes"]
# The session list's filters (sessions/filters.py), as options: (flag, API name, help).
FILTERS = [
    ("--agent", "agent", "only this agent's sessions, e.g. architect"),
    ("--workflow", "workflow", "only sessions of this workflow, e.g. create-prd"),
    ("--person", "person", "only sessions with this person"),
    ("--role", "role", "only sessions where this role spoke (user, assistant, tool …)"),
    ("--status", "status", "active, completed, interrupted or error"),
    ("--lifecycle", "lifecycle", "active, idle, decaying or archived"),
    ("--source-format", "source_format", "how it came in, e.g. claude_code, codex"),
    ("--topic", "topic", "only sessions with this topic"),
    ("--entity", "entity", "only sessions that touched this, e.g. src/auth.py"),
    ("--entity-type", "entity_type", "FILE, FUNCTION, CLASS, ERROR, COMMAND, URL or PACKAGE"),
    ("--since", "started_after", "started at or after this date or time (2025-01-15)"),
    ("--until", "started_before", "started before this date or time"),
]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _table(header: tuple, rows: list[tuple], right: frozenset[int] = frozenset()) -> str:
    """Columns padded to their widest cell (those in ``right`` aligned right), the last
    one left as it is."""
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for row in table:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _title(session: dict, width: int = 60) -> str:
    title = " ".join((session.get("title") or session.get("summary") or "").split())
    return title if len(title) <= width else title[: width - 1] + "…"


def format_sessions(sessions: list[dict], *, with_project: bool) -> str:
    """One row per session: id, start, agent, messages, size, owner, visibility (and
    project), title."""
    if not sessions:
        return ""
    header = ("SESSION", "STARTED", "AGENT", "MSGS", "SIZE", "OWNER", "VISIBILITY")
    header += ("PROJECT", "TITLE") if with_project else ("TITLE",)
    rows = []
    for s in sessions:
        row = (
            s["id"],
            (s.get("started_at") or "")[:16].replace("T", " "),
            s.get("agent_name", ""),
            str(s.get("message_count", 0)),
            _size(s.get("size_bytes", 0)),
            s.get("owner") or "(team)",
            s.get("visibility", "team"),
        )
        row += (s.get("project", ""), _title(s)) if with_project else (_title(s),)
        rows.append(row)
    return _table(header, rows, right=frozenset({3, 4}))


def format_similar(body: dict) -> str:
    rows = [
        (
            f"{round(entry['similarity'] * 100)}%",
            entry["session"]["id"],
            (entry["session"].get("started_at") or "")[:10],
            entry["session"].get("agent_name", ""),
            _title(entry["session"]),
        )
        for entry in body.get("similar", [])
    ]
    if not rows:
        return ""
    return _table(("SIM", "SESSION", "DATE", "AGENT", "TITLE"), rows, right=frozenset({0}))


def _print_json(body) -> None:
    json.dump(body, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def list_sessions(args, client) -> int:
    params = {api: getattr(args, api) for _, api, _ in FILTERS}
    params.update(
        project=project_reference(args.project),
        ordering=("" if args.reverse else "-") + args.sort,
        limit=args.limit,
        deleted=True if args.trash else None,
    )
    body = client.sessions(**params)
    if args.json:
        _print_json(body)
        return 0
    sessions = body.get("results", [])
    if not sessions:
        print(f"memoryapp: no sessions in {_where(args, client)}", file=sys.stderr)
        return 0
    with_project = args.all_projects or len({s.get("project") for s in sessions}) > 1
    sys.stdout.write(format_sessions(sessions, with_project=with_project))
    more = " (more: --limit)" if body.get("next") else ""
    print(f"memoryapp: {len(sessions)} session(s) in {_where(args, client)}{more}", file=sys.stderr)
    return 0


def _where(args, client) -> str:
    if args.project:
        return f"project {args.project}"
    if client.directory:
        return f"this directory's project ({client.directory})"
    return "all projects"


def similar(args, client) -> int:
    body = client.similar(args.session_id, limit=args.limit)
    if args.json:
        _print_json(body)
        return 0
    text = format_similar(body)
    if not text:
        print(
            f"memoryapp: nothing similar to {body.get('session', args.session_id)} yet: a "
            "session is compared once its messages are embedded (the worker does it soon "
            "after capture), and only with others of the same scope that are.",
            file=sys.stderr,
        )
        return 0
    sys.stdout.write(text)
    return 0


def set_visibility(args, client) -> int:
    """Give the sessions named one visibility, all or nothing; says which changed."""
    body = client.set_visibility(args.session_ids, args.visibility)
    if args.json:
        _print_json(body)
        return 0
    for session_id in body.get("changed", []):
        print(f"{session_id}: now {body['visibility']}")
    for session_id in body.get("unchanged", []):
        print(f"{session_id}: already {body['visibility']}")
    return 0


COMMANDS = {"similar": similar, "visibility": set_visibility}


def run(args, client) -> int:
    """``memoryapp sessions list``, ``similar`` or ``visibility``; the exit code."""
    try:
        return COMMANDS.get(args.command, list_sessions)(args, client)
    except MemoryError as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
        return 1


def add_parsers(sub, formatter) -> None:
    """The `sessions` and `similar` commands, on the main parser's subparsers."""
    sessions = sub.add_parser(
        "sessions",
        help="list this project's sessions (or another's, or all)",
        description="The sessions of the project of the working directory, newest first.",
        formatter_class=formatter,
    )
    actions = sessions.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list",
        help="list sessions as a table",
        description=textwrap.fill(
            "List sessions: this directory's project by default, another with --project, "
            "every project the token sees with --all-projects.",
            width=80,
        ),
        epilog=LIST_EXAMPLES,
        formatter_class=formatter,
    )
    where = listing.add_mutually_exclusive_group()
    where.add_argument(
        "--all-projects", action="store_true", help="every project the token can see"
    )
    where.add_argument(
        "--project",
        metavar="PATH_OR_NAME",
        help="a directory (its project, as if run there) or 'team/project'",
    )
    for flag, api, text in FILTERS:
        metavar = "DATE" if api.startswith("started") else flag[2:].upper().replace("-", "_")
        listing.add_argument(flag, dest=api, metavar=metavar, help=text)
    listing.add_argument(
        "--sort",
        choices=SORTS,
        default="started_at",
        metavar="FIELD",
        help=f"order by {', '.join(SORTS)}: newest or largest first (default started_at)",
    )
    listing.add_argument("--reverse", action="store_true", help="oldest or smallest first instead")
    listing.add_argument(
        "--limit", type=int, default=50, help="at most this many (default 50, max 500)"
    )
    listing.add_argument("--trash", action="store_true", help="list the trash instead")
    listing.add_argument("--json", action="store_true", help="print the server's JSON response")

    near = sub.add_parser(
        "similar",
        help="sessions similar to one, by meaning",
        description="The sessions nearest to SESSION by meaning, most similar first.",
        epilog=SIMILAR_EXAMPLES,
        formatter_class=formatter,
    )
    near.add_argument("session_id", metavar="SESSION", help="a session id")
    near.add_argument("--limit", type=int, default=5, help="how many (default 5, max 50)")
    near.add_argument("--json", action="store_true", help="print the server's JSON response")

    who = sub.add_parser(
        "visibility",
        help="choose who reads sessions: private, summary or team",
        description=textwrap.fill(
            "Give one or more sessions a visibility: who reads them (docs/visibility.md). "
            "All change, or none.",
            width=80,
        ),
        epilog=VISIBILITY_EXAMPLES,
        formatter_class=formatter,
    )
    who.add_argument(
        "session_ids", metavar="SESSION", nargs="+", help="session ids (memoryapp sessions list)"
    )
    who.add_argument(
        "visibility",
        choices=VISIBILITIES,
        metavar="VISIBILITY",
        help="private, summary or team",
    )
    who.add_argument("--json", action="store_true", help="print the server's JSON response")


def wants_directory(args: argparse.Namespace) -> bool:
    """Whether the command works in the working directory's project (not across all)."""
    return not getattr(args, "all_projects", False)
