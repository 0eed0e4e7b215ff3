"""The `memoryapp` command: upload transcripts to memoryapp, search them, get context back.

    memoryapp capture FILE_OR_FOLDER...      upload transcripts (format detected)
    memoryapp capture --hook                 read a Claude Code hook's JSON on stdin and
                                             upload its transcript_path (SessionEnd hook)
    memoryapp search QUERY                   hybrid search over past sessions' messages
    memoryapp context QUERY                  past sessions relevant to QUERY, as Markdown
    memoryapp context --hook                 the project's context for a Claude Code
                                             SessionStart hook (MEMORYAPP_CONTEXT_ON_START=1)
    memoryapp resume SESSION_ID              a session's summary and last messages
    memoryapp mcp                            the MCP server on stdio, for an agent to launch
    memoryapp sessions list                  this directory's project's sessions
                                             (--all-projects, --project PATH, filters)
    memoryapp similar SESSION_ID             the sessions nearest to one by meaning
    memoryapp visibility SESSION_ID... V     who reads sessions: private, summary or team
    memoryapp memories list|show|add|resolve|search
                                             the team's decisions, findings, preferences

Server and token come from MEMORYAPP_URL (default http://127.0.0.1:8000) and MEMORYAPP_TOKEN.
Every request carries the working directory's slug (docs/api.md), so a team-level token works
in that directory's project; a project token stays in its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

from memoryapp_client import memories_cli, sessions_cli
from memoryapp_client.api import VISIBILITIES, VISIBILITY_ENV, MemoryClient, MemoryError
from memoryapp_client.hooks import session_start_hook
from memoryapp_client.projects import directory_slug, project_reference
from protocol.directories import project_slug
from transcripts.files import UNKNOWN_FORMAT, find_transcripts, transcript_cwd

HOOK_EXAMPLE = """\
As a Claude Code SessionEnd hook, in ~/.claude/settings.json:
  {"hooks": {"SessionEnd": [{"hooks": [
      {"type": "command", "command": "memoryapp capture --hook"}]}]}}

Who reads what it captures (docs/visibility.md): --visibility private (only the person the
token acts for), summary (the team reads title, summary, topics) or team; without it,
$MEMORYAPP_VISIBILITY, else the token's default, else the project's. A session sent again
keeps the visibility it has; change it with `memoryapp visibility SESSION_ID V`.
"""

START_HOOK_EXAMPLE = """\
As a Claude Code SessionStart hook (off unless MEMORYAPP_CONTEXT_ON_START=1), in
~/.claude/settings.json:
  {"hooks": {"SessionStart": [{"hooks": [
      {"type": "command", "command": "memoryapp context --hook"}]}]}}
It prints the project's context as Claude Code's additionalContext, and nothing (exit 0)
when it is off, when nothing is known yet or on any error (said on stderr).
"""

MCP_EXAMPLES = """\
Serves the tools search_sessions, get_context, resume_session, list_recent_sessions,
record_memory, list_memories and save_session on stdin/stdout; each calls the memoryapp
server at MEMORYAPP_URL with MEMORYAPP_TOKEN. Agents launch it themselves, e.g.:
  claude mcp add memoryapp --env MEMORYAPP_URL=http://127.0.0.1:8000 \\
      --env MEMORYAPP_TOKEN=mem_... -- memoryapp mcp
docs/mcp.md has the configuration for Claude Code, Codex and Cursor.
"""


def _summary(path: Path, result: dict) -> str:
    sessions = result.get("sessions", [])
    added = sum(s.get("messages_added", 0) for s in sessions)
    dupes = sum(s.get("duplicates_skipped", 0) for s in sessions)
    ids = ", ".join(s["id"] for s in sessions[:3])
    skipped = result.get("skipped") or {}
    unknown = (
        f", {sum(skipped.values())} unknown record(s) skipped ("
        + ", ".join(f"{reason}: {count}" for reason, count in skipped.items())
        + ")"
        if skipped
        else ""
    )
    return (
        f"{path}: {len(sessions)} session(s), {added} new message(s), {dupes} duplicate(s)"
        f"{unknown} [{ids}]"
    )


SEARCH_EXAMPLES = """\
examples:
  memoryapp search "JWT refresh tokens"
  memoryapp search login bug --agent architect --limit 5
  memoryapp search "make release" --mode keyword --workflow release
  memoryapp search "why did the deploy fail" --group        # one entry per session
  memoryapp search --entity-type FILE --entity src/auth.py   # sessions that touched a file
  memoryapp search "database migration" --json | jq '.results[0].session.id'

Relevance (0-100%) means the same across queries: semantic similarity of the best
passage, plus a share for the query's words found in the message. Matched words are
shown in bold when the output is a terminal (set NO_COLOR to turn it off).
"""

CONTEXT_EXAMPLES = """\
examples:
  memoryapp context "how did we handle authentication?"
  memoryapp context "release process" --agent dev --workflow release --max-tokens 1500
  memoryapp context "flaky tests" --min-relevance 0.5 > context.md

Prints Markdown ("## Relevant Past Discussions", one "### Session: ..."
block per session with its relevance), compressed to fit --max-tokens: the best
session in full when it fits, then summaries and key messages. Prints nothing (and
exits 0) when no session is relevant enough. The token count goes to stderr.
"""

RESUME_EXAMPLES = """\
examples:
  memoryapp resume 2025-01-15-architect-1a2b3c
  memoryapp resume 2025-01-15-architect-1a2b3c --lastn 5 > resume.md

Session ids are in the output of `memoryapp search`.
"""

BOLD, RESET = "\033[1m", "\033[0m"


def _wrap(text: str) -> str:
    """A description for RawDescriptionHelpFormatter, which leaves line breaks to us."""
    return textwrap.fill(text, width=80)


def _client(args) -> MemoryClient | None:
    directory = directory_slug() if sessions_cli.wants_directory(args) else None
    try:
        return MemoryClient(url=args.url, token=args.token, directory=directory)
    except MemoryError as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
        return None


def _use_bold(stream) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


def mark(snippet: str, highlights: list, bold: bool) -> str:
    """The snippet on one line, its matched words in bold ANSI when ``bold``."""
    if bold:
        parts, last = [], 0
        for start, end in sorted(tuple(h) for h in highlights if len(h) == 2):
            if not last <= start < end <= len(snippet):
                continue  # overlapping or out of range: skip rather than garble the text
            parts += [snippet[last:start], BOLD, snippet[start:end], RESET]
            last = end
        snippet = "".join([*parts, snippet[last:]])
    return " ".join(snippet.split())


def _where(message: dict) -> str:
    """The message's role, its author when it has one, and its number."""
    author = message.get("author")
    return f"{message['role']}{' ' + author if author else ''} #{message['seq']}"


def _rows(body: dict) -> list[tuple[dict, float, str, list[tuple[str, str, list]]]]:
    """(session, relevance, where, [(prefix, snippet, highlights), ...]) per row: one per
    message, or one per session when the results are grouped (or found by entity)."""
    if body.get("sessions") is not None:
        rows = []
        for entry in body["sessions"]:
            hits = entry.get("hits", [])
            where = f"{len(hits)} hit(s)" if hits else f"{entry['session']['message_count']} msgs"
            snippets = [
                (f"{_where(h['message'])}: ", h["snippet"], h["highlights"]) for h in hits[:3]
            ]
            rows.append((entry["session"], entry["relevance"], where, snippets))
        return rows
    return [
        (
            hit["session"],
            hit["relevance"],
            _where(hit["message"]),
            [("", hit["snippet"], hit["highlights"])],
        )
        for hit in body.get("results", [])
    ]


def format_results(body: dict, *, bold: bool = False, width: int | None = None) -> str:
    """A table of hits: relevance, session id, date, agent, role, author and message
    number, and the snippet under each row (wrapped to ``width`` when given)."""
    rows = _rows(body)
    if not rows:
        return ""
    table = [("REL", "SESSION", "DATE", "AGENT", "WHERE")] + [
        (
            f"{round(relevance * 100)}%",
            session["id"],
            (session.get("started_at") or "")[:10],
            session.get("agent_name", ""),
            where,
        )
        for session, relevance, where, _ in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]

    def line(row) -> str:
        cells = [row[0].rjust(widths[0])] + [
            c.ljust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    indent = " " * (widths[0] + 2)
    out = [line(table[0])]
    for row, (session, _, _, snippets) in zip(table[1:], rows, strict=True):
        out.append(line(row))
        if session.get("title") and len(snippets) != 1:
            out.append(indent + session["title"])
        for prefix, snippet, highlights in snippets:
            text = prefix + mark(snippet, highlights, bold)
            if width:
                out += textwrap.wrap(
                    text,
                    width=max(width, len(indent) + 20),
                    initial_indent=indent,
                    subsequent_indent=indent,
                    break_on_hyphens=False,
                )
            else:
                out.append(indent + text)
    return "\n".join(out) + "\n"


def _run(call) -> tuple[dict | None, int]:
    try:
        return call(), 0
    except MemoryError as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
        return None, 1


def _print_json(body) -> None:
    json.dump(body, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _fetch(args, request) -> tuple[dict | None, int]:
    """``request(client)``'s answer to render, or (None, exit code) when nothing is left to
    print: no server configured (2), an error (1, said on stderr), or ``--json`` printed it."""
    client = _client(args)
    if client is None:
        return None, 2
    body, code = _run(lambda: request(client))
    if body is None:
        return None, code
    if args.json:
        _print_json(body)
        return None, 0
    return body, 0


def search(args) -> int:
    filters = {
        "mode": args.mode,
        "limit": args.limit,
        "min_relevance": args.min_relevance,
        "agent": args.agent,
        "workflow": args.workflow,
        "project": project_reference(args.project),
        "entity_type": args.entity_type,
        "entity": args.entity,
        "group": args.group or None,
    }
    body, code = _fetch(args, lambda client: client.search(args.query, **filters))
    if body is None:
        return code
    bold = _use_bold(sys.stdout)
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    text = format_results(body, bold=bold, width=width)
    count = len(_rows(body))
    if not text:
        wanted = repr(args.query) if args.query else "that entity"
        print(f"memoryapp: no results for {wanted}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    took = f" in {body['took_ms']} ms" if "took_ms" in body else ""
    print(f"memoryapp: {count} result(s), {body.get('mode')}{took}", file=sys.stderr)
    return 0


def context(args) -> int:
    options = {
        "max_tokens": args.max_tokens,
        "max_sessions": args.max_sessions,
        "min_relevance": args.min_relevance,
        "current_agent": args.agent,
        "current_workflow": args.workflow,
        "project": project_reference(args.project),
    }
    body, code = _fetch(args, lambda client: client.context(args.query, **options))
    if body is None:
        return code
    markdown = body.get("markdown", "")
    sys.stdout.write(markdown)
    if markdown:
        print(
            f"memoryapp: {body.get('tokens')} tokens of {body.get('max_tokens')} "
            f"({body.get('tokenizer')}), {len(body.get('sessions', []))} session(s)",
            file=sys.stderr,
        )
    else:
        print("memoryapp: 0 tokens: no past session is relevant enough", file=sys.stderr)
    return 0


def context_hook() -> int:
    """The SessionStart hook: never fails the agent's start (errors are said on stderr)."""
    try:
        output = session_start_hook(sys.stdin.read())
    except Exception as exc:  # a hook must never stop the agent from starting
        print(f"memoryapp: no context at start: {exc}", file=sys.stderr)
        return 0
    if output:
        print(output)
    return 0


def mcp(args) -> int:
    client = _client(args)
    if client is None:
        return 2
    try:
        from memoryapp_client.mcp_stdio import serve
    except ImportError as exc:
        print(f"memoryapp: the MCP server needs the mcp package ({exc})", file=sys.stderr)
        return 2
    serve(client)
    return 0


def resume(args) -> int:
    body, code = _fetch(args, lambda client: client.resume(args.session_id, lastn=args.lastn))
    if body is None:
        return code
    sys.stdout.write(body.get("markdown", ""))
    print(f"memoryapp: {body.get('tokens')} tokens", file=sys.stderr)
    return 0


def capture(args) -> int:
    client = _client(args)
    if client is None:
        return 0 if args.hook else 2
    if args.hook:
        try:
            hook = json.load(sys.stdin)
            transcript = Path(hook["transcript_path"]).expanduser()
        except (ValueError, KeyError, TypeError) as exc:
            print(f"memoryapp: the hook input has no transcript_path ({exc})", file=sys.stderr)
            return 0  # never break the agent's exit
        paths = [transcript]
        fmt = args.format or "claude_code"
        hook_cwd = hook.get("cwd") if isinstance(hook.get("cwd"), str) else None
    else:
        hook_cwd = None
        paths, fmt = list(find_transcripts(args.paths)), args.format
        if not paths:
            print("memoryapp: no transcript files found", file=sys.stderr)
            return 2
    failed = 0
    here = client.directory
    named = {Path(path) for path in getattr(args, "paths", None) or ()}
    for path in paths:
        # The project is the directory the agent worked in (docs/api.md), as the hook or the
        # transcript says, else this one.
        recorded = hook_cwd or (transcript_cwd(path) if path.is_file() else None)
        client.directory = project_slug(recorded) if recorded else here
        try:
            result = client.import_path(path, format=fmt, visibility=args.visibility)
        except (MemoryError, OSError) as exc:
            if path not in named and not fmt and _not_a_transcript(exc):
                # Found inside a folder (a README, a config file…): passed over, as
                # `manage.py import_sessions` does.
                print(f"memoryapp: {path}: skipped, not a transcript", file=sys.stderr)
                continue
            failed += 1
            print(f"memoryapp: {path}: {exc}", file=sys.stderr)
            continue
        print(_summary(path, result))
    if args.hook:
        return 0  # a hook reports on stderr but never fails the session's end
    return 1 if failed else 0


def _not_a_transcript(exc: Exception) -> bool:
    """The server read the file and found it in none of the formats it knows."""
    body = getattr(exc, "body", None)
    detail = body.get("detail") if isinstance(body, dict) else None
    return isinstance(detail, str) and detail.startswith(UNKNOWN_FORMAT)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `memoryapp sessions list --json | head`: the reader has what it wanted. Send the
        # rest of stdout nowhere, so the interpreter's final flush raises nothing either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="memoryapp",
        description="Send agent transcripts to memoryapp (team memory for AI agents), search "
        "them and get relevant past context back.",
        epilog="Environment: MEMORYAPP_URL (default http://127.0.0.1:8000), MEMORYAPP_TOKEN. "
        "Run `memoryapp COMMAND --help` for a command's options and examples.",
    )
    parser.add_argument("--url", help="server URL (default: $MEMORYAPP_URL)")
    parser.add_argument(
        "--token", help="project or team-level API token (default: $MEMORYAPP_TOKEN)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser(
        "capture",
        help="upload transcript files or folders",
        description=_wrap(
            "Upload transcripts; the server detects each file's format. Re-uploading "
            "a grown transcript adds only its new messages."
        ),
        epilog=HOOK_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cap.add_argument("paths", nargs="*", type=Path, help="files or folders")
    cap.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code hook's JSON from stdin and upload its transcript_path",
    )
    cap.add_argument(
        "--format", help="force a format (claude_code, codex, aider, gemini_cli, cursor, …)"
    )
    cap.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default=os.environ.get(VISIBILITY_ENV) or None,
        help="who reads the new sessions: private (you), summary (the team reads title, "
        f"summary, topics) or team (default: ${VISIBILITY_ENV}, else the token's, else the "
        "project's)",
    )

    raw = argparse.RawDescriptionHelpFormatter
    find = sub.add_parser(
        "search",
        help="search past sessions by meaning and by keyword",
        description=_wrap(
            "Search every message of your project's sessions: hybrid (meaning + "
            "keywords) by default. Prints one row per matching message (relevance, session id, "
            "date, agent, role and message number) with a snippet under it."
        ),
        epilog=SEARCH_EXAMPLES,
        formatter_class=raw,
    )
    find.add_argument("query", nargs="*", help="what to look for (several words need no quotes)")
    find.add_argument(
        "--mode",
        choices=["hybrid", "semantic", "keyword"],
        help="hybrid (default): meaning and keywords; semantic: meaning only; keyword: "
        'words only, with web-search syntax ("a phrase", -word, or)',
    )
    find.add_argument("--limit", type=int, help="at most this many results (default 10, max 100)")
    find.add_argument(
        "--min-relevance", type=float, help="drop results below this relevance, 0..1 (default 0)"
    )
    _add_filters(find)
    find.add_argument(
        "--entity-type",
        type=str.upper,
        help="FILE, FUNCTION, CLASS, ERROR, COMMAND, URL or PACKAGE: only sessions that "
        "touched such an entity",
    )
    find.add_argument(
        "--entity", help="only sessions that touched this entity, e.g. src/auth.py or 'make test'"
    )
    find.add_argument(
        "--group", action="store_true", help="one entry per session, with its best messages"
    )
    find.add_argument("--json", action="store_true", help="print the server's JSON response")

    ctx = sub.add_parser(
        "context",
        help="print the past discussions relevant to a question, as Markdown for a prompt",
        description=_wrap(
            "Print ready-to-inject context: the past sessions most relevant to "
            "QUERY, as Markdown within a token budget."
        ),
        epilog=CONTEXT_EXAMPLES + "\n" + START_HOOK_EXAMPLE,
        formatter_class=raw,
    )
    ctx.add_argument("query", nargs="*", help="the question or task (several words need no quotes)")
    ctx.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code SessionStart hook's JSON on stdin and print the project's "
        "context for it (only when MEMORYAPP_CONTEXT_ON_START=1)",
    )
    ctx.add_argument(
        "--max-tokens", type=int, help="token budget of the Markdown (default 4000, min 50)"
    )
    ctx.add_argument("--max-sessions", type=int, help="at most this many sessions (default 3)")
    ctx.add_argument(
        "--min-relevance",
        type=float,
        help="leave out sessions below this relevance, 0..1 (default 0.3)",
    )
    _add_filters(ctx)
    ctx.add_argument("--json", action="store_true", help="print the server's JSON response")

    res = sub.add_parser(
        "resume",
        help="print a session's summary and last messages, to pick its work up again",
        description=_wrap(
            "Print a session as Markdown to resume it: its title, summary, topics and "
            "its last messages."
        ),
        epilog=RESUME_EXAMPLES,
        formatter_class=raw,
    )
    res.add_argument("session_id", help="the session's id, e.g. 2025-01-15-architect-1a2b3c")
    res.add_argument(
        "--lastn", type=int, default=20, help="how many of its last messages (default 20)"
    )
    res.add_argument("--json", action="store_true", help="print the server's JSON response")

    memories_cli.add_parser(sub, raw)
    sessions_cli.add_parsers(sub, raw)

    sub.add_parser(
        "mcp",
        help="run the MCP server on stdio (for Claude Code, Codex, Cursor …)",
        description=_wrap(
            "Run memoryapp's MCP server over stdio: the agent launches this command and "
            "calls its tools to search past sessions, get context, record memories and save "
            "the current session."
        ),
        epilog=MCP_EXAMPLES,
        formatter_class=raw,
    )

    args = parser.parse_args(argv)
    if args.command == "capture":
        if not args.paths and not args.hook:
            if not sys.stdin.isatty():
                args.hook = True  # called as a hook: JSON arrives on stdin
            else:
                cap.error("give files or folders, or --hook")
        return capture(args)
    if args.command == "search":
        args.query = " ".join(args.query).strip()
        if not args.query and not (args.entity or args.entity_type):
            find.error(
                "give a QUERY, or --entity/--entity-type to list the sessions that touched it"
            )
        return search(args)
    if args.command == "context":
        if args.hook:
            return context_hook()
        args.query = " ".join(args.query).strip()
        if not args.query:
            ctx.error('give a QUERY, e.g. memoryapp context "how did we handle auth?"')
        return context(args)
    if args.command == "resume":
        return resume(args)
    if args.command == "mcp":
        return mcp(args)
    if args.command in ("sessions", "similar", "visibility"):
        client = _client(args)
        return sessions_cli.run(args, client) if client is not None else 2
    if args.command == "memories":
        client = _client(args)
        return memories_cli.run(args, client) if client is not None else 2
    return 2


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="only this agent's sessions, e.g. architect")
    parser.add_argument("--workflow", help="only sessions of this workflow, e.g. create-prd")
    parser.add_argument(
        "--project",
        help="only this project: 'team/project' or a directory (default: this directory's, "
        "for a team-level token; a project token is limited to its own)",
    )


if __name__ == "__main__":
    sys.exit(main())
