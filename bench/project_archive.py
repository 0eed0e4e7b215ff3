"""Project archives at scale (issue 19, item 5): ``manage.py export_project`` and
``import_project`` throughput in messages/s and the peak memory (RSS) of the process doing
it, at two sizes, so the growth between them shows whether memory stays flat and time
grows linearly (what 1M messages would need).

**Data**: one project of ``--sizes`` messages each (default 20,000 and 200,000), in
sessions of ``--session-messages`` (1,000), written with bulk SQL (``INSERT … SELECT``
over ``generate_series``): LoCoMo turns as text (real prose, ~130 characters), every fifth
message a tool call or its result, small JSON metadata on each.

**Steps**, per size, in one run:

1. ``export_project`` in a child process: wall time, messages/s, peak RSS (``wait4``);
2. ``import_project`` of that archive into a new project of another team, in a child
   process (through the capture service: redaction, token counts, keyword context);
3. the same import again (idempotent: every message found, none written);
4. baselines in the same run, on the same rows: ``COPY (SELECT … messages …) TO STDOUT``
   (what the database alone takes to hand the rows out) and ``COPY … FROM STDIN`` of those
   rows into a scratch table (to write them in), so the archive's cost shows as a ratio.

    .venv/bin/python bench/project_archive.py [--sizes 20000,200000] [--session-messages 1000]

Peak RSS of the child includes Django and its imports; the embedding model is loaded only
to embed imported memories, and this data has none. Compare the two sizes.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.capture import locomo_texts
from bench.harness import REPO_ROOT, django_on_embedded_servers

MESSAGE_SQL = """
INSERT INTO agent_sessions_message (
    enrichment_status, enrichment_error, enrichment_attempts, seq, client_id, role, author,
    content, tool_name, tool_call_id, "timestamp", token_count, metadata, created_at,
    team_id, session_id, pinned, removed_by, kind)
SELECT 'done', '', 0, g, '',
    CASE WHEN g %% 5 = 3 THEN 'assistant' WHEN g %% 5 = 4 THEN 'tool'
         WHEN g %% 2 = 0 THEN 'user' ELSE 'assistant' END,
    CASE WHEN g %% 2 = 0 THEN 'alice' ELSE 'architect' END,
    (%(texts)s::text[])[1 + (s.id * 7919 + g) %% %(n)s],
    CASE WHEN g %% 5 IN (3, 4) THEN 'bash' ELSE '' END,
    CASE WHEN g %% 5 IN (3, 4) THEN 'call-' || (g / 5) ELSE '' END,
    s.started_at + g * interval '7 seconds', 30,
    jsonb_build_object('turn', g, 'model', 'claude-sonnet'), now(), s.team_id, s.id, false, '',
    CASE WHEN g %% 5 = 4 THEN 'tool_output' ELSE 'prose' END
FROM agent_sessions_session s, generate_series(0, %(per)s - 1) AS g
WHERE s.project_id = %(project)s
"""


def build(size: int, per: int, texts: list[str]):
    from django.db import connection
    from django.utils import timezone

    from sessions.models import Session, new_public_id
    from tests.factories import ProjectFactory, TeamFactory

    project = ProjectFactory(team=TeamFactory(slug=f"src-{size}"), slug="big")
    now = timezone.now()
    sessions = [
        Session(
            team_id=project.team_id,
            project=project,
            external_id=f"bench-{n}",
            public_id=new_public_id("architect", now) + f"-{n}",
            agent_name="architect",
            title=f"session {n}",
            started_at=now,
            message_count=per,
            metadata={"cwd": "/home/me/big"},
        )
        for n in range(size // per)
    ]
    Session.objects.bulk_create(sessions)
    with connection.cursor() as cursor:
        cursor.execute(
            MESSAGE_SQL, {"texts": texts, "n": len(texts), "per": per, "project": project.pk}
        )
        cursor.execute("ANALYZE agent_sessions_message")
    return project


_OWN_TIME = re.compile(r"^(\d+(?:\.\d+)?) s \(", re.MULTILINE)


def child(*args: str) -> tuple[float, int, str]:
    """Run ``manage.py`` with ``args`` in a child process: the seconds the command reports for
    its own work (start-up excluded), peak RSS (bytes), output."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", *args], cwd=REPO_ROOT, env=env, stdout=out, stderr=out
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read().decode(errors="replace")
    if process.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{output}")
    own = _OWN_TIME.findall(output)
    seconds = float(own[-1]) if own else elapsed
    return seconds, usage.ru_maxrss * 1024, output  # ru_maxrss is in KiB on Linux


def copy_baselines(project_id: int) -> tuple[float, float]:
    """Seconds to COPY the project's messages out, and to COPY them into a scratch table."""
    from django.db import connection

    columns = "seq, client_id, role, author, content, tool_name, tool_call_id, timestamp, metadata"
    buffer = io.BytesIO()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        query = (
            f"COPY (SELECT {columns} FROM agent_sessions_message WHERE session_id IN (SELECT id "
            f"FROM agent_sessions_session WHERE project_id = {int(project_id)}) ORDER BY "
            "session_id, seq) TO STDOUT"
        )
        with cursor.cursor.copy(query) as copy:
            for block in copy:
                buffer.write(block)
    out_seconds = time.perf_counter() - started
    buffer.seek(0)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE scratch AS SELECT seq, client_id, role, author, content, "
            "tool_name, tool_call_id, timestamp, metadata FROM agent_sessions_message LIMIT 0"
        )
        with cursor.cursor.copy(f"COPY scratch ({columns}) FROM STDIN") as copy:
            while block := buffer.read(1 << 20):
                copy.write(block)
        cursor.execute("DROP TABLE scratch")
    return out_seconds, time.perf_counter() - started


def measure(size: int, per: int, texts: list[str], folder: Path) -> dict:
    from tests.factories import TeamFactory

    project = build(size, per, texts)
    team = project.team.slug
    archive = folder / f"project-{size}.zip"
    print(f"\n{size:,} messages in {size // per} sessions", flush=True)
    seconds, rss, _ = child("export_project", str(archive), "--team", team, "--project", "big")
    figures = {"size": size, "export_s": seconds, "export_rss": rss}
    figures["archive_bytes"] = archive.stat().st_size
    print(
        f"  export: {seconds:.1f} s, {size / seconds:,.0f} messages/s, peak RSS "
        f"{rss / 2**20:,.0f} MB, archive {figures['archive_bytes'] / 2**20:,.1f} MB",
        flush=True,
    )
    target = TeamFactory(slug=f"dst-{size}").slug
    for label in ("import", "re-import"):
        seconds, rss, _ = child(
            "import_project", str(archive), "--team", target, "--project", "copy"
        )
        figures[f"{label}_s"], figures[f"{label}_rss"] = seconds, rss
        print(
            f"  {label}: {seconds:.1f} s, {size / seconds:,.0f} messages/s, peak RSS "
            f"{rss / 2**20:,.0f} MB",
            flush=True,
        )
    figures["copy_out_s"], figures["copy_in_s"] = copy_baselines(project.pk)
    out_ratio = figures["export_s"] / figures["copy_out_s"]
    in_ratio = figures["import_s"] / figures["copy_in_s"]
    print(
        f"  baseline: COPY out {figures['copy_out_s']:.2f} s (export / COPY {out_ratio:.0f}x), "
        f"COPY in {figures['copy_in_s']:.2f} s (import / COPY {in_ratio:.0f}x)",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="20000,200000", help="messages per project, comma-separated"
    )
    parser.add_argument("--session-messages", type=int, default=1000, help="messages per session")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    texts = locomo_texts()
    results = []
    with django_on_embedded_servers() as folder:
        for size in sizes:
            results.append(measure(size, args.session_messages, texts, folder))
    if len(results) > 1:
        small, large = results[0], results[-1]
        factor = 1_000_000 / large["size"]
        print("\nextrapolated to 1,000,000 messages (linear in messages from the largest size):")
        for step in ("export", "import", "re-import"):
            growth = large[f"{step}_rss"] - small[f"{step}_rss"]
            print(
                f"  {step}: ~{large[f'{step}_s'] * factor / 60:,.0f} min; peak RSS grew "
                f"{growth / 2**20:+,.0f} MB from {small['size']:,} to {large['size']:,} messages"
            )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
