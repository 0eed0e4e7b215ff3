"""The offline memory extractor on memory_dev: real coding-agent transcripts whose memories
were labelled by hand (``../shared/data/memory_dev``: ``gold.json`` and the ``README.md``
that says how to score).

Each transcript is read with ``transcripts.parse_path`` and its sessions run
through ``offline.matches`` (the pipeline's rules, without the database). Scored as the
README says: a memory matches a gold item when its evidence message contains the item's
quote or one of its ``alt_quotes`` (case folded, whitespace collapsed); each item counts
once. Reported per transcript and per set:

- **recall**: matched items / items, with any type and with the item's own type; for the
  high-importance items; and per type (with the right type);
- **extracted**: how many memories; how many **match** a gold item (a floor for precision:
  the rest are not all wrong, read them with ``--show``), how many state a **negative**
  (their evidence holds a negative's quote), and how many match **nothing**.

The transcripts are split once, before tuning: five to develop the rules on (read their
failures) and three held out (only their figures are looked at). Each set has a
non-Claude-Code format.

    .venv/bin/python bench/memory_dev.py                   # the tables
    .venv/bin/python bench/memory_dev.py --show dev        # the dev set's misses and extras
    .venv/bin/python bench/memory_dev.py --show gildore    # one transcript's (name contains)
    MEMORY_LLM_URL=http://localhost:11434/v1 MEMORY_LLM_MODEL=qwen2.5:7b-instruct \
        .venv/bin/python bench/memory_dev.py --llm             # the LLM path instead

``--llm`` scores ``llm.extract`` (the prompt, the answer's checks) on each session, as the
pipeline would call it with ``MEMORY_LLM_*``; a session whose answer fails is counted with
no memories and its reason printed (the pipeline would fall back to the rules there: those
are the offline figures). Without ``MEMORY_LLM_URL``, or when nothing answers there, it
stops at once and says so.

``--show`` prints the transcripts' own sentences: read them, never copy them into the
repository.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
os.environ.setdefault("SECRET_KEY", "bench-only: no server is started")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from memories.enrich import llm  # noqa: E402
from memories.enrich.offline import matches  # noqa: E402
from transcripts import parse_path  # noqa: E402

SHARED = REPO_ROOT.parent / "shared"
GOLD = SHARED / "data" / "memory_dev" / "gold.json"
TYPES = ("decision", "finding", "preference", "learning")
# Chosen before any tuning; each set holds a non-Claude-Code format.
HELD_OUT = (
    "entire-cli-detached-telemetry.jsonl",
    "entire-cli-global-gitignore.jsonl",
    "afi-core-scaffold.chat.history.md",
)


def normalised(text: str) -> str:
    return " ".join(str(text).casefold().split())


@dataclass
class Memory:
    type: str
    content: str
    evidence: str  # the evidence message's text, normalised
    items: list[int] = field(default_factory=list)  # indexes of the gold items it matches
    negatives: list[int] = field(default_factory=list)
    confidence: str = ""  # the extractor's label (bench/review_split.py)


@dataclass
class Scored:
    name: str
    items: list[dict]
    negatives: list[dict]
    memories: list[Memory]

    @property
    def held_out(self) -> bool:
        return self.name in HELD_OUT

    def found(self, right_type: bool = False) -> set[int]:
        return {
            i
            for m in self.memories
            for i in m.items
            if not right_type or m.type == self.items[i]["type"]
        }


def extracted(path: Path) -> list[Memory]:
    memories = []
    for session in parse_path(path):
        for statement, found in matches(session, session.messages):
            evidence = normalised(statement.message.content or "")
            memories.append(
                Memory(found.type, found.content, evidence, confidence=found.confidence)
            )
    return memories


def llm_extracted(path: Path, failures: list[str]) -> list[Memory]:
    """The LLM path's memories; a session whose answer fails adds its reason to
    ``failures`` and no memories."""
    memories = []
    for session in parse_path(path):
        try:
            drafts = llm.extract(
                session,
                session.messages,
                url=settings.MEMORY_LLM_URL,
                model=settings.MEMORY_LLM_MODEL,
                api_key=settings.MEMORY_LLM_API_KEY,
                timeout=settings.MEMORY_LLM_TIMEOUT_SECONDS,
            )
        except llm.LLMExtractionError as exc:
            failures.append(f"{path.name}: {exc}")
            continue
        for draft in drafts:
            evidence = normalised(draft.evidence[0].message.content or "")
            memories.append(Memory(draft.type, draft.content, evidence))
    return memories


def unreachable_llm() -> str:
    """Why the LLM path cannot be scored here, or "" when an endpoint answers."""
    url = settings.MEMORY_LLM_URL
    if not url:
        return (
            "--llm needs MEMORY_LLM_URL (and MEMORY_LLM_MODEL): no language model is "
            "configured, so only the offline rules can be scored here"
        )
    # Ollama, vLLM and llama.cpp's server all list their models at /v1/models
    probe = url.rstrip("/") + "/models"
    try:
        urllib.request.urlopen(probe, timeout=5).close()
    except urllib.error.HTTPError:
        return ""  # something answers there; the extraction's own errors say the rest
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        return f"--llm: MEMORY_LLM_URL {url} is not reachable ({reason}): start the server"
    return ""


def score(gold: dict, entry: dict, extract: Callable[[Path], list[Memory]] = extracted) -> Scored:
    path = entry["path"]
    items = [i for i in gold["items"] if i["file"] == path]
    negatives = [n for n in gold["negatives"] if n["file"] == path]
    memories = extract(SHARED / path)
    for memory in memories:
        for index, item in enumerate(items):
            quotes = [item["quote"], *item.get("alt_quotes", [])]
            if any(normalised(q) in memory.evidence for q in quotes):
                memory.items.append(index)
        for index, negative in enumerate(negatives):
            if normalised(negative["quote"]) in memory.evidence:
                memory.negatives.append(index)
    return Scored(Path(path).name, items, negatives, memories)


def ratio(n: int, d: int) -> str:
    return f"{n}/{d} {n / d:.2f}" if d else "-"


def row(label: str, sets: list[Scored]) -> str:
    items = sum(len(s.items) for s in sets)
    found = sum(len(s.found()) for s in sets)
    typed = sum(len(s.found(right_type=True)) for s in sets)
    high = sum(sum(1 for i in s.items if i["importance"] == "high") for s in sets)
    high_found = sum(
        sum(1 for i in s.found(right_type=True) if s.items[i]["importance"] == "high") for s in sets
    )
    memories = [m for s in sets for m in s.memories]
    matching = sum(1 for m in memories if m.items)
    negative = sum(1 for m in memories if m.negatives)
    nothing = sum(1 for m in memories if not (m.items or m.negatives))
    by_type = []
    for kind in TYPES:
        n = sum(sum(1 for i in s.items if i["type"] == kind) for s in sets)
        hit = sum(sum(1 for i in s.found(True) if s.items[i]["type"] == kind) for s in sets)
        by_type.append(ratio(hit, n))
    return (
        f"| {label} | {ratio(found, items)} | {ratio(typed, items)} | {ratio(high_found, high)} "
        f"| {' | '.join(by_type)} | {len(memories)} | {matching} | {negative} | {nothing} |"
    )


HEADER = (
    "| transcript | recall | recall, right type | high, right type | decision | finding "
    "| preference | learning | extracted | match gold | state a negative | match nothing |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def show(scored: Scored) -> None:
    """The items missed and the memories that match nothing or a negative."""
    print(f"\n== {scored.name}")
    found, typed = scored.found(), scored.found(right_type=True)
    for index, item in enumerate(scored.items):
        if index not in typed:
            how = "wrong type" if index in found else "missed"
            print(f"  {how:<10} {item['type']:<10} {item['importance']:<6} {item['quote']}")
    for memory in scored.memories:
        if memory.negatives:
            print(f"  NEGATIVE   {memory.type:<10} {memory.content[:150]}")
        elif not memory.items:
            print(f"  nothing    {memory.type:<10} {memory.content[:150]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", help="'dev', 'held-out', or part of a transcript's name")
    parser.add_argument(
        "--llm", action="store_true", help="score the LLM path (MEMORY_LLM_URL) instead"
    )
    args = parser.parse_args(argv)
    failures: list[str] = []
    extract = extracted
    if args.llm:
        if why := unreachable_llm():
            print(why, file=sys.stderr)
            return 2
        extract = functools.partial(llm_extracted, failures=failures)
    gold = json.loads(GOLD.read_text())
    scored = [score(gold, entry, extract) for entry in gold["files"]]
    dev = [s for s in scored if not s.held_out]
    held = [s for s in scored if s.held_out]
    if args.llm:
        print(f"The LLM path: {settings.MEMORY_LLM_MODEL} at {settings.MEMORY_LLM_URL}.")
        for failure in failures:
            print(f"  failed, no memories: {failure}")
    print("Per type and for high importance: recall with the right type.\n")
    print(HEADER)
    for s in dev + held:
        print(row(f"{'(held out) ' if s.held_out else ''}{s.name}", [s]))
    print(row("**dev (5)**", dev))
    print(row("**held out (3)**", held))
    print(row("**all (8)**", scored))
    if args.show:
        chosen = {"dev": dev, "held-out": held}.get(
            args.show, [s for s in scored if args.show in s.name]
        )
        for s in chosen:
            show(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
