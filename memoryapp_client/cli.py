"""The `memoryapp` command: upload transcripts to memoryapp, also as a Claude Code hook.

    memoryapp capture FILE_OR_FOLDER...      upload transcripts (format detected)
    memoryapp capture --hook                 read a Claude Code hook's JSON on stdin and
                                             upload its transcript_path (SessionEnd hook)

Server and token come from MEMORYAPP_URL (default http://127.0.0.1:8000) and MEMORYAPP_TOKEN.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memoryapp_client.api import MemoryClient, MemoryError
from memoryapp_client.transcript_files import find_transcripts

HOOK_EXAMPLE = """\
As a Claude Code SessionEnd hook, in ~/.claude/settings.json:
  {"hooks": {"SessionEnd": [{"hooks": [
      {"type": "command", "command": "memoryapp capture --hook"}]}]}}
"""


def _summary(path: Path, result: dict) -> str:
    sessions = result.get("sessions", [])
    added = sum(s.get("messages_added", 0) for s in sessions)
    dupes = sum(s.get("duplicates_skipped", 0) for s in sessions)
    ids = ", ".join(s["id"] for s in sessions[:3])
    return (
        f"{path}: {len(sessions)} session(s), {added} new message(s), {dupes} duplicate(s) [{ids}]"
    )


def capture(args) -> int:
    try:
        client = MemoryClient(url=args.url, token=args.token)
    except MemoryError as exc:
        print(f"memoryapp: {exc}", file=sys.stderr)
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
    else:
        paths, fmt = list(find_transcripts(args.paths)), args.format
        if not paths:
            print("memoryapp: no transcript files found", file=sys.stderr)
            return 2
    failed = 0
    for path in paths:
        try:
            result = client.import_path(path, format=fmt)
        except (MemoryError, OSError) as exc:
            failed += 1
            print(f"memoryapp: {path}: {exc}", file=sys.stderr)
            continue
        print(_summary(path, result))
    if args.hook:
        return 0  # a hook reports on stderr but never fails the session's end
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="memoryapp",
        description="Send agent transcripts to memoryapp (team memory for AI agents).",
        epilog="Environment: MEMORYAPP_URL (default http://127.0.0.1:8000), MEMORYAPP_TOKEN.",
    )
    parser.add_argument("--url", help="server URL (default: $MEMORYAPP_URL)")
    parser.add_argument("--token", help="project API token (default: $MEMORYAPP_TOKEN)")
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser(
        "capture",
        help="upload transcript files or folders",
        description="Upload transcripts; the server detects each file's format. Re-uploading "
        "a grown transcript adds only its new messages.",
        epilog=HOOK_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cap.add_argument("paths", nargs="*", type=Path, help="files or folders")
    cap.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code hook's JSON from stdin and upload its transcript_path",
    )
    cap.add_argument("--format", help="force a format (claude_code, codex, aider, …)")
    args = parser.parse_args(argv)
    if args.command == "capture":
        if not args.paths and not args.hook:
            if not sys.stdin.isatty():
                args.hook = True  # called as a hook: JSON arrives on stdin
            else:
                cap.error("give files or folders, or --hook")
        return capture(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
