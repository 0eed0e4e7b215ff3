"""What the staleness check (``memories/enrich/staleness.py``) costs per captured tool call,
in the same run as the capture it follows.

Fresh embedded servers; one project holding ``--memories`` decisions and findings, each
about two files (keys drawn from the paths the real transcripts edit, and from made-up ones,
so some match), said a day ago. Then every real transcript of ``../shared/samples`` and
``../shared/data/memory_dev/transcripts`` is captured into that project with the capture
service (timed: ``capture_session``), and the check runs over the session's messages as
the extraction worker runs it (timed apart: finding the edits in the messages, and the
flagging UPDATE with its history rows). Reported per tool call (assistant messages with a
tool name) and per message, beside capture's own time per message.

    .venv/bin/python bench/staleness_cost.py [--memories 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def transcripts() -> list[Path]:
    found = [
        *(SHARED / "samples").rglob("*"),
        *(SHARED / "data" / "memory_dev" / "transcripts").rglob("*"),
    ]
    return sorted(
        p
        for p in found
        if p.is_file() and p.suffix in (".jsonl", ".json", ".md") and p.name != "README.md"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with django_on_embedded_servers():
        from django.utils import timezone

        from memories.capture.files import edit_keys, edited_files
        from memories.enrich import staleness
        from memories.models import Memory
        from sessions.capture.service import capture_session
        from sessions.models import Message
        from teams.services import ensure_team_and_project
        from transcripts import parse_path

        parsed = []
        for path in transcripts():
            try:
                parsed.extend(parse_path(path))
            except Exception as exc:  # a file no format reads: say so, go on
                print(f"skipped {path.name}: {exc.__class__.__name__}")
        edited = [
            path
            for session in parsed
            for m in session.messages
            for path in edited_files(m.role, m.content, m.tool_name or "", m.metadata)
        ]
        real_keys = edit_keys(edited) or ["src/app.py"]
        print(
            f"{len(parsed)} sessions, {sum(len(s.messages) for s in parsed)} messages, "
            f"{len(edited)} edits of {len(set(edited))} files"
        )
        rng = random.Random(7)
        rows = []
        for round_ in range(args.rounds):
            _team, project, _ = ensure_team_and_project("bench", f"staleness-{round_}")
            said = timezone.now() - timedelta(days=400)
            Memory.objects.bulk_create(
                Memory(
                    team_id=project.team_id,
                    project=project,
                    public_id=f"DEC-{n + 1:05d}",
                    type="decision" if n % 2 else "finding",
                    content=f"Statement {n}",
                    fingerprint=f"{round_}-{n}",
                    occurred_at=said,
                    files=[
                        rng.choice(real_keys) if rng.random() < 0.02 else f"pkg{n}/mod{n}.py",
                        f"lib{n % 500}/file{n}.py",
                    ],
                )
                for n in range(args.memories)
            )
            for session in parsed:
                session.external_id = f"{round_}-{id(session)}"
                start = time.perf_counter()
                captured = capture_session(project, session).session
                capture_ms = (time.perf_counter() - start) * 1000
                messages = list(Message.objects.filter(session=captured).order_by("seq"))
                start = time.perf_counter()
                keys, _ = staleness.edits_in(messages)
                parse_ms = (time.perf_counter() - start) * 1000
                start = time.perf_counter()
                flagged = staleness.flag_stale(captured, messages)
                check_ms = (time.perf_counter() - start) * 1000
                calls = sum(1 for m in messages if m.role == "assistant" and m.tool_name)
                rows.append((len(messages), calls, capture_ms, parse_ms, check_ms, flagged, keys))
        messages = sum(r[0] for r in rows)
        calls = sum(r[1] for r in rows)
        capture_ms = sum(r[2] for r in rows)
        parse_ms = sum(r[3] for r in rows)
        check_ms = sum(r[4] for r in rows)
        flagged = sum(r[5] for r in rows)
        print(f"{args.rounds} rounds, {args.memories} tracked memories per project")
        print(f"messages {messages}, tool calls {calls}, memories flagged {flagged}")
        print(
            f"capture:               {capture_ms / messages:.3f} ms/message, "
            f"{capture_ms / calls:.3f} ms/tool call"
        )
        print(
            f"staleness, edits found: {parse_ms / calls:.4f} ms/tool call "
            f"({parse_ms / messages:.4f} ms/message)"
        )
        print(
            f"staleness, whole check: {check_ms / calls:.4f} ms/tool call "
            f"({check_ms / messages:.4f} ms/message; edits found + the UPDATE + history), "
            f"{100 * check_ms / capture_ms:.1f} % of capture"
        )


if __name__ == "__main__":
    main()
