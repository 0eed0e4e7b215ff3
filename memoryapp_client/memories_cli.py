"""`memoryapp memories …`: list, show, add, resolve and search the team's memories (the
decisions, findings, preferences and learnings agents and people recorded); delete them
(one, or by filter with a dry run), list the trash and restore from it."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from memoryapp_client.api import MemoryError

TYPES = ["decision", "finding", "preference", "learning", "fact", "agent_state"]

EXAMPLES = """\
examples:
  memoryapp memories list --type decision --tag security
  memoryapp memories list --type finding --open            # findings not resolved yet
  memoryapp memories search "how do we authenticate API calls"
  memoryapp memories show DEC-001
  memoryapp memories add decision "Use OAuth 2.0 with JWT tokens" \\
      --rationale "Industry standard" --confidence high --tag auth --tag security
  memoryapp memories add finding "No MFA requirement specified" --severity critical \\
      --field 'location={"artifact": "docs/requirements.md", "section": "3.2"}'
  memoryapp memories resolve FIND-001 --action "Added MFA for admins" --resolved-by DEC-002
  memoryapp memories delete DEC-003 --reason "extracted by mistake"
  memoryapp memories delete --topic mfa_requirements --dry-run   # how many would go
  memoryapp memories delete --since 2026-01-01 --until 2026-02-01 --reason "January test"
  memoryapp memories trash                                       # deleted, with deadlines
  memoryapp memories restore DEC-003

Ids (DEC-001, FIND-002, PREF-003…) are per project; an API token looks in its own.
"""


def format_memories(memories: list[dict]) -> str:
    """One row per memory (id, type, priority, state, agent, date) and its content under it."""
    if not memories:
        return ""
    rows = [("ID", "TYPE", "PRIO", "STATE", "AGENT", "DATE")] + [
        (
            m["id"],
            m["type"],
            f"{m['priority']:.2f}",
            m.get("resolution") or m["status"],
            m.get("agent") or "-",
            (m.get("occurred_at") or "")[:10],
        )
        for m in memories
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(rows[0], widths, strict=True)).rstrip()]
    for row, memory in zip(rows[1:], memories, strict=True):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        out += textwrap.wrap(memory["content"], 96, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(out) + "\n"


def format_memory(memory: dict) -> str:
    """A memory in full: its fields, its type's own fields, evidence and relationships."""
    lines = [f"{memory['id']} ({memory['type']}, {memory['status']})", memory["content"], ""]
    for name in ("project", "topic", "confidence", "severity", "resolution", "agent", "session"):
        if memory.get(name):
            lines.append(f"{name}: {memory[name]}")
    if memory.get("tags"):
        lines.append(f"tags: {', '.join(memory['tags'])}")
    lines.append(f"priority: {memory['priority']:.2f} (read {memory['access_count']} times)")
    for name, value in (memory.get("details") or {}).items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{name}: {shown}")
    for evidence in memory.get("evidence") or []:
        lines.append(f"evidence: session {evidence['session']} message #{evidence['seq']}")
    for link in memory.get("links") or []:
        arrow = (
            f"{link['kind']} {link['memory']}"
            if link["direction"] == "out"
            else (f"{link['memory']} {link['kind']} this")
        )
        lines.append(f"link: {arrow}")
    return "\n".join(lines) + "\n"


def parse_fields(pairs: list[str]) -> dict:
    """``--field name=value``: the value read as JSON when it is JSON, else as text."""
    fields = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--field {pair!r}: write it as name=value")
        try:
            fields[name.strip()] = json.loads(value)
        except ValueError:
            fields[name.strip()] = value
    return fields


def format_trash(memories: list[dict]) -> str:
    """One row per deleted memory (id, type, deleted, by, restorable until) and its reason
    and content under it."""
    if not memories:
        return ""
    rows = [("ID", "TYPE", "DELETED", "BY", "RESTORABLE UNTIL")] + [
        (
            m["id"],
            m["type"],
            m["deleted_at"][:16].replace("T", " "),
            m["deleted_by"],
            m["recovery_deadline"][:10],
        )
        for m in memories
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(rows[0], widths, strict=True)).rstrip()]
    for row, memory in zip(rows[1:], memories, strict=True):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        out.append(f"    why: {memory['reason']}")
        out += textwrap.wrap(memory["content"], 96, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(out) + "\n"


def format_bulk(body: dict) -> str:
    """What a bulk delete did, or would do (a dry run), and a sample of its matches."""
    count = body["memories"]
    noun = "memory" if count == 1 else "memories"
    if body["dry_run"]:
        lines = [f"{count} {noun} would move to the trash (dry run: nothing changed)."]
    else:
        lines = [f"Moved {count} {noun} to the trash (deletion records {body['records']})."]
    if body.get("already_in_trash"):
        lines.append(f"{body['already_in_trash']} matching already in the trash.")
    if body["dry_run"] and count > body["limit"]:
        lines.append(f"At most {body['limit']} go per request: narrow the filters.")
    for sample in body.get("sample") or []:
        lines.append(f"  {sample['id']}  {sample['occurred_at'][:10]}  {sample['content'][:80]}")
    if body["dry_run"] and count:
        lines.append("Run it again without --dry-run (and with --reason) to delete them.")
    return "\n".join(lines) + "\n"


def run(args, client) -> int:
    """Run ``memoryapp memories ACTION`` with ``client``; the exit code."""
    try:
        body = ACTIONS[args.action](args, client)
    except (MemoryError, ValueError) as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(body, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif args.action == "trash":
        text = format_trash(body["results"])
        sys.stdout.write(text)
        if not text:
            print("memoryapp: the trash has no memories", file=sys.stderr)
    elif args.action == "delete" and body is None:
        print(f"Deleted {args.id}: restore it with `memoryapp memories restore {args.id}`.")
    elif args.action == "delete":
        sys.stdout.write(format_bulk(body))
    elif isinstance(body, dict) and "results" in body:
        text = format_memories(body["results"])
        sys.stdout.write(text)
        if not text:
            print("memoryapp: no memories match", file=sys.stderr)
    else:
        sys.stdout.write(format_memory(body))
        if body.get("outcome") == "merged":
            print("memoryapp: merged into an existing memory saying the same", file=sys.stderr)
        for old in body.get("superseded") or []:
            print(f"memoryapp: supersedes {old}", file=sys.stderr)
    return 0


FILTERS = ("type", "tag", "topic", "agent", "session", "status", "min_priority", "limit")
ADD_FIELDS = ("rationale", "severity", "confidence", "category", "topic", "agent", "session")


def _options(args, names) -> dict:
    """The options of ``names`` given on the command line (a list left empty is not)."""
    return {name: getattr(args, name) or None for name in (*names, "project")}


def _filters(args) -> dict:
    return {
        **_options(args, FILTERS),
        "resolution": "open" if args.open else None,
        "include_decayed": True if args.include_decayed else None,
    }


def _list(args, client):
    return client.memories(sort=args.sort, **_filters(args))


def _search(args, client):
    return client.memories(q=" ".join(args.query), **_filters(args))


def _show(args, client):
    return client.memory(args.id, project=args.project)


def _add(args, client):
    fields = {
        **_options(args, ADD_FIELDS),
        "tags": args.tag or None,
        "evidence": args.evidence or None,
        "supersedes": args.supersedes or None,
        **parse_fields(args.field),
    }
    return client.record_memory(args.type, " ".join(args.content), **fields)


def _resolve(args, client):
    return client.resolve_finding(
        args.id,
        project=args.project,
        action_taken=args.action_taken,
        verification=args.verification,
        by=args.by,
        resolved_by=args.resolved_by,
    )


def _trash(args, client):
    return client.deleted_memories(project=args.project, limit=args.limit)


def _restore(args, client):
    return client.restore_memory(args.id, project=args.project)


def _delete(args, client):
    """One memory by its id, or every memory matching the filters (a dry run first)."""
    filters = {
        name: getattr(args, name) or None
        for name in ("topic", "type", "agent", "person", "since", "until")
    }
    if args.id:
        if any(filters.values()) or args.all:
            raise ValueError("give a memory id or filters, not both")
        if args.dry_run:
            raise ValueError("--dry-run is for deleting by filter; `memories show ID` shows one")
        if not args.reason:
            raise ValueError("say why with --reason (kept with the deleted memory)")
        client.delete_memory(args.id, args.reason, project=args.project)
        return None
    if not args.dry_run and not args.reason:
        raise ValueError("say why with --reason, or look first with --dry-run")
    return client.delete_memories(
        dry_run=args.dry_run,
        project=args.project,
        reason=args.reason,
        all=True if args.all else None,
        **filters,
    )


ACTIONS = {
    "list": _list,
    "search": _search,
    "show": _show,
    "add": _add,
    "resolve": _resolve,
    "delete": _delete,
    "trash": _trash,
    "restore": _restore,
}


def add_parser(sub, formatter) -> argparse.ArgumentParser:
    """The `memories` command and its actions, on the main parser's subparsers."""
    memories = sub.add_parser(
        "memories",
        help="list, show, add, resolve, search, delete and restore memories",
        description="The team's memories: decisions, findings, preferences, learnings and "
        "facts that agents and people recorded or that were read from sessions.",
        epilog=EXAMPLES,
        formatter_class=formatter,
    )
    actions = memories.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list",
        help="list memories, most important first",
        description="List memories with filters; decayed ones (priority below 0.3) only "
        "with --include-decayed.",
    )
    _add_filters(listing)
    listing.add_argument(
        "--sort",
        choices=["-priority", "priority", "-time", "time"],
        help="-priority (default), priority, -time (newest first) or time",
    )
    find = actions.add_parser(
        "search", help="search memories by meaning and keyword", description="Best matches first."
    )
    find.add_argument("query", nargs="+", help="what to look for")
    _add_filters(find)
    show = actions.add_parser("show", help="show one memory with its evidence and links")
    show.add_argument("id", help="its id, e.g. DEC-001")
    _add_common(show)
    add = actions.add_parser(
        "add",
        help="record a memory",
        description="Record a memory. A restatement of one already recorded merges into it; "
        "one that says otherwise about the same topic supersedes it.",
    )
    add.add_argument("type", choices=TYPES[:-1], help="what kind of memory")
    add.add_argument("content", nargs="+", help="the statement (several words need no quotes)")
    add.add_argument("--rationale", help="a decision's why")
    add.add_argument("--severity", choices=["critical", "important", "minor"], help="a finding's")
    add.add_argument(
        "--confidence", help="high|medium|low|uncertain; a preference's explicit|inferred|uncertain"
    )
    add.add_argument("--category", help="e.g. missing_requirement (finding), workflow (preference)")
    add.add_argument("--topic", help="what it is about, as a key (mfa_requirements)")
    add.add_argument("--agent", help="the agent that made, found or holds it")
    add.add_argument("--session", help="the id of the session it came from")
    add.add_argument("--tag", action="append", help="a tag (repeat for more)")
    add.add_argument(
        "--evidence", type=int, action="append", help="a message number of --session (repeat)"
    )
    add.add_argument("--supersedes", action="append", help="the id of a memory it replaces")
    add.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other field of the type; VALUE is read as JSON when it is JSON",
    )
    _add_common(add)
    resolve = actions.add_parser("resolve", help="mark a finding resolved")
    resolve.add_argument("id", help="the finding's id, e.g. FIND-001")
    resolve.add_argument("--action", dest="action_taken", help="what was done")
    resolve.add_argument("--verification", help="how it was checked")
    resolve.add_argument("--by", help="who resolved it (default: you)")
    resolve.add_argument("--resolved-by", help="the id of the memory that resolves it")
    _add_common(resolve)
    _add_trash_actions(actions)
    return memories


def _add_trash_actions(actions) -> None:
    delete = actions.add_parser(
        "delete",
        help="delete a memory, or every memory matching filters (to the trash)",
        description="Move memories to the trash: one by its id, or every memory matching the "
        "filters (topic, type, agent, person, a date range on when it was said). Try "
        "--dry-run first: it says how many would go and shows a few, and changes nothing. "
        "Deleted memories can be restored until their project's recovery deadline "
        "(`memoryapp memories trash` lists them); the daily purge deletes them for good "
        "after. At most 2000 go per request: narrow a larger match with --since/--until. "
        "Admins, or a token with the delete permission.",
    )
    delete.add_argument("id", nargs="?", help="one memory's id, e.g. DEC-001 (else: filters)")
    delete.add_argument("--topic", help="memories of this topic key")
    delete.add_argument("--type", action="append", choices=TYPES, help="of this type (repeat)")
    delete.add_argument("--agent", help="this agent's memories")
    delete.add_argument("--person", help="memories of this person (user_name)")
    delete.add_argument("--since", help="said at or after this time (ISO 8601: 2026-01-01)")
    delete.add_argument("--until", help="said before this time (ISO 8601; after --since)")
    delete.add_argument(
        "--all",
        action="store_true",
        help="no filter: every memory you may delete (or of --project)",
    )
    delete.add_argument("--reason", help="why (kept in the deletion record); needed to delete")
    delete.add_argument(
        "--dry-run", action="store_true", help="only say how many would go; change nothing"
    )
    _add_common(delete)
    listing = actions.add_parser(
        "trash",
        help="list deleted memories with their recovery deadline",
        description="Deleted memories, newest deletion first: who deleted each, why, and "
        "until when `memoryapp memories restore ID` brings it back.",
    )
    listing.add_argument("--limit", type=int, help="at most this many (default 50)")
    _add_common(listing)
    restore = actions.add_parser(
        "restore",
        help="bring a deleted memory back from the trash",
        description="Restore a deleted memory before its recovery deadline (after it the "
        "server refuses: code MEM_E007).",
    )
    restore.add_argument("id", help="its id, e.g. DEC-001")
    _add_common(restore)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", help="'team/project' (people with several projects; a token has its own)"
    )
    parser.add_argument("--json", action="store_true", help="print the server's JSON response")


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", action="append", choices=TYPES, help="only this type (repeat)")
    parser.add_argument("--tag", help="only memories with this tag")
    parser.add_argument("--topic", help="only memories of this topic key")
    parser.add_argument("--agent", help="only this agent's")
    parser.add_argument("--session", help="only memories from this session (its id)")
    parser.add_argument(
        "--status", choices=["active", "superseded", "all"], help="active (default)"
    )
    parser.add_argument("--open", action="store_true", help="only findings not resolved yet")
    parser.add_argument("--min-priority", type=float, help="only memories at least this important")
    parser.add_argument(
        "--include-decayed", action="store_true", help="also memories that decayed below 0.3"
    )
    parser.add_argument("--limit", type=int, help="at most this many (default 50)")
    _add_common(parser)
