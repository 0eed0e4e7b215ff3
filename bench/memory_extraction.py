"""Quality and speed of the offline memory extractor (``memories/enrich/offline.py``).

Runs the extractor's rules (``offline.matches``, the same code the pipeline runs, without
the database) over every session of the real transcript samples in ``../shared/samples``
(read with ``transcripts.parse_path``), LoCoMo's 10 conversations
(``../shared/data/locomo``; one session per ``session_<n>``, one message per turn, the
speaker as author, as ``bench/locomo.py`` captures them) and the first LongMemEval case's
chat sessions (``../shared/data/longmemeval_derived``; a user talking with an assistant),
and reports:

- **precision per type** over the memories hand-checked in
  ``bench/memory_precision_checked.tsv`` (columns: sample, type, content, verdict, note;
  verdict ``correct`` or ``wrong``, judged by reading the source message: is this a memory
  of that type that the message states?), with the produced memories not checked and the
  checked ones no longer produced;
- **recall per type** on ``bench/memory_recall_labelled.tsv`` (columns: sample, type,
  what): the memories a person would take from a few sessions, labelled by hand before
  looking at the output; a label is found when a memory of its type comes from its message;
- **LoCoMo coverage**: the share of LoCoMo's ``observation`` facts (per session, each with
  the ``dia_id`` of its turn) for which a memory was extracted from the same turn;
- **speed**: extraction time per message (the rules, plus embedding the memories they
  produce with the query encoder, as ``memories/enrich/run.py`` does) against the pipeline's
  embedding time per message (``chunk_message`` and the same model), measured in the same
  run over the same LoCoMo messages; medians over sessions, and the ratio of the totals.
  Recording the memories in PostgreSQL is not included (nor the messages' own writes).

Where the patterns were tuned: on the sentences of the agent samples (claude_code, codex,
aider, tau-bench), on LoCoMo conversation conv-26 and on the first LongMemEval case, by
reading what the rules produced. The precision figures come from those same sources (the
samples are too few to hold any out), so they are optimistic for other text; LoCoMo
conversations other than conv-26 were not used to tune the fact rules.

    .venv/bin/python bench/memory_extraction.py            # everything
    .venv/bin/python bench/memory_extraction.py --dump     # every memory, TSV
    .venv/bin/python bench/memory_extraction.py --no-speed
    .venv/bin/python bench/memory_extraction.py --speed-sessions 60   # time 60 sessions
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
os.environ.setdefault("SECRET_KEY", "bench-only: no server is started")

import django  # noqa: E402

django.setup()

from bench.entity_precision import sample_files  # noqa: E402
from bench.locomo import load_locomo, sessions_of, turn_text  # noqa: E402
from memories.enrich.offline import matches  # noqa: E402
from transcripts import parse_path  # noqa: E402

HERE = Path(__file__).resolve().parent
CHECKED = HERE / "memory_precision_checked.tsv"
LABELLED = HERE / "memory_recall_labelled.tsv"
LONGMEMEVAL = REPO_ROOT.parent / "shared" / "data" / "longmemeval_derived"
TYPES = ("decision", "finding", "preference", "learning", "fact")


def cell(text: str) -> str:
    return " ".join(str(text).replace("\t", " ").split())


def sample_sessions():
    """``(name, session, messages)``: the agent samples (a message is ``file#session@index``),
    LoCoMo (``locomo/<conversation>/<dia_id>``), LongMemEval (``longmemeval/<case>/<s>@<i>``)."""
    for path in sample_files():
        for index, session in enumerate(parse_path(path)):
            name = f"{path.parent.name}/{path.name}#{index}"
            for position, message in enumerate(session.messages):
                message.locator = f"{name}@{position}"
            yield name, session, session.messages
    for conversation in load_locomo():
        for n, _when, turns in sessions_of(conversation):
            messages = [
                SimpleNamespace(
                    role="user",
                    author=t["speaker"],
                    content=turn_text(t),
                    tool_name="",
                    metadata={},
                    timestamp=None,
                    locator=f"locomo/{conversation['sample_id']}/{t['dia_id']}",
                )
                for t in turns
            ]
            session = SimpleNamespace(agent_name="locomo", user_name="", topics=[])
            yield f"locomo/{conversation['sample_id']}/session_{n}", session, messages
    path = next(LONGMEMEVAL.glob("longmemeval_*.json"), None)
    if path is None:
        return
    case = json.loads(path.read_text())[0]
    for s, chat in enumerate(case["haystack_sessions"]):
        name = f"longmemeval/{case['question_id']}/{s}"
        messages = [
            SimpleNamespace(
                role=t["role"],
                author="",
                content=t["content"],
                tool_name="",
                metadata={},
                timestamp=None,
                locator=f"{name}@{i}",
            )
            for i, t in enumerate(chat)
        ]
        session = SimpleNamespace(agent_name="assistant", user_name="", topics=[])
        yield name, session, messages


def extract_all() -> list[dict]:
    out = []
    for name, session, messages in sample_sessions():
        for statement, found in matches(session, messages):
            out.append(
                {
                    "session": name,
                    "message": statement.message.locator,
                    "type": found.type,
                    "content": cell(found.content),
                    "topic": found.topic,
                    "speaker": statement.speaker,
                }
            )
    return out


def read_tsv(path: Path, columns: list[str]) -> list[list[str]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[: len(columns)] != columns:
        raise SystemExit(f"{path}: the first line must be {' / '.join(columns)}")
    return [line.split("\t") for line in lines[1:] if line.strip()]


def precision(found: list[dict]) -> None:
    rows = read_tsv(CHECKED, ["sample", "type", "content", "verdict", "note"])
    checked = {(r[0], r[1], r[2]): r[3].strip() for r in rows}
    produced = {(m["message"], m["type"], m["content"]) for m in found}
    verdicts: dict[str, Counter] = defaultdict(Counter)
    for key, verdict in checked.items():
        if key in produced and verdict in ("correct", "wrong"):
            verdicts[key[1]][verdict] += 1
    print(f"Precision, hand-checked ({CHECKED.name}):")
    print(f"{'type':<11} {'produced':>8} {'checked':>7} {'correct':>7} {'precision':>9}")
    by_type = Counter(m["type"] for m in found)
    table = [(k, by_type[k], sum(verdicts[k].values()), verdicts[k]["correct"]) for k in TYPES]
    table.append(("all", len(found), sum(r[2] for r in table), sum(r[3] for r in table)))
    for kind, made, n, ok in table:
        print(f"{kind:<11} {made:>8} {n:>7} {ok:>7} {f'{ok / n:.3f}' if n else '-':>9}")
    held = Counter(
        r[3].strip()
        for r in rows
        if r[4:] and r[4].startswith("[held-out]") and tuple(r[:3]) in produced
    )
    if held:
        n = held["correct"] + held["wrong"]
        print(
            f"held out (judged after the rules were frozen): {held['correct']}/{n} = "
            f"{held['correct'] / n:.3f}"
        )
    missing = sorted(set(checked) - produced)
    print(
        f"{len(produced - set(checked))} produced memories are not checked; "
        f"{len(missing)} checked ones are no longer produced"
    )
    for key in missing[:20]:
        print("  - " + "\t".join(key))
    print()


def recall(found: list[dict]) -> None:
    labels = read_tsv(LABELLED, ["sample", "type", "what"])
    if not labels:
        return
    got = {(m["message"], m["type"]) for m in found}
    hits: dict[str, Counter] = defaultdict(Counter)
    print(f"Recall on hand-labelled sessions ({LABELLED.name}):")
    for sample, kind, what in (row[:3] for row in labels):
        hit = (sample, kind) in got
        hits[kind]["found" if hit else "missed"] += 1
        if not hit:
            print(f"  missed {kind:<10} {sample}: {what[:90]}")
    print(f"{'type':<11} {'labelled':>8} {'found':>6} {'recall':>7}")
    for kind in TYPES:
        n = sum(hits[kind].values())
        if n:
            print(f"{kind:<11} {n:>8} {hits[kind]['found']:>6} {hits[kind]['found'] / n:>7.3f}")
    print()


def coverage(found: list[dict]) -> None:
    """Share of LoCoMo observation facts whose turn gave a memory."""
    turns_with_memory = {m["message"] for m in found if m["message"].startswith("locomo/")}
    total = covered = 0
    for conversation in load_locomo():
        for facts_by_speaker in conversation["observation"].values():
            for facts in facts_by_speaker.values():
                for _fact, dia in facts:
                    for dia_id in re.split(r"[;,\s]+", dia if isinstance(dia, str) else ""):
                        if not dia_id:
                            continue
                        total += 1
                        covered += (
                            f"locomo/{conversation['sample_id']}/{dia_id}" in turns_with_memory
                        )
                        break
    print(
        f"LoCoMo coverage: {covered}/{total} observation facts ({covered / total:.3f}) "
        "have a memory extracted from their turn"
    )
    print()


def speed(limit: int | None = None) -> None:
    from memories.enrich.offline import matches as rules
    from sessions.embedding.query import embed_query
    from sessions.embedding.torch_runtime import embed
    from sessions.enrich.chunking import chunk_message, header_for

    embed(["warm the model up"])
    embed_query("warm the query encoder up")
    extract_rates, embed_rates = [], []
    extract_total = embed_total = 0.0
    messages_total = 0
    locomo = [s for s in sample_sessions() if s[0].startswith("locomo/")]
    for _name, session, messages in locomo[:limit]:
        started = time.perf_counter()
        found = rules(session, messages)
        for _, memory in found:
            embed_query(memory.content)
        extracting = time.perf_counter() - started
        started = time.perf_counter()
        texts = [
            c.text
            for m in messages
            for c in chunk_message(m.content, header=header_for(m.role, m.author))
        ]
        embed(texts)
        embedding = time.perf_counter() - started
        extract_rates.append(extracting / len(messages) * 1000)
        embed_rates.append(embedding / len(messages) * 1000)
        extract_total, embed_total = extract_total + extracting, embed_total + embedding
        messages_total += len(messages)
    print(
        f"Speed over {len(extract_rates)} LoCoMo sessions, {messages_total} messages "
        "(ms per message, median over sessions):"
    )
    print(f"  extraction (rules + embedding the memories): {statistics.median(extract_rates):.2f}")
    print(f"  embedding the messages (the pipeline's):      {statistics.median(embed_rates):.2f}")
    print(
        f"  extraction / embedding: median "
        f"{statistics.median(e / m for e, m in zip(extract_rates, embed_rates, strict=True)):.3f}, "
        f"totals {extract_total / embed_total:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", action="store_true", help="print every memory as TSV")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed measurement")
    parser.add_argument(
        "--speed-sessions", type=int, default=None, help="LoCoMo sessions timed (default: all)"
    )
    args = parser.parse_args(argv)
    found = extract_all()
    if args.dump:
        print("message\ttype\tcontent\ttopic\tspeaker")
        for m in found:
            print("\t".join(cell(m[k]) for k in ("message", "type", "content", "topic", "speaker")))
        return 0
    counts = Counter(m["type"] for m in found)
    print(f"{len(found)} memories: " + ", ".join(f"{counts[t]} {t}" for t in TYPES) + "\n")
    precision(found)
    recall(found)
    coverage(found)
    if not args.no_speed:
        speed(args.speed_sessions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
