"""Precision of the entity extractor (``sessions/enrich/entities/``) on the real
transcript samples.

Runs ``extract_session`` over every session of every sample in ``../shared/samples``
(claude_code/*.jsonl, codex/*.jsonl, aider/*.chat.history.md, openai_chat/*.json, read with
``transcripts.parse_path``; no database, no Django) and prints, per entity type, how
many entities it found and some of them. Then it reads the hand-checked verdicts in
``bench/entity_precision_checked.tsv`` (columns: sample, type, value, verdict, note; verdict
``correct`` or ``wrong``) and prints precision overall and per type over the checked
entities the extractor still produces, and says which produced entities are not checked
and which checked ones it no longer produces (so the figure is known to be stale). Last, it
runs the extractor over LoCoMo's casual conversations (../shared/data/locomo), where any entity
is a false positive.

    .venv/bin/python bench/entity_precision.py            # summary and precision
    .venv/bin/python bench/entity_precision.py --dump     # every entity, TSV, with context
    .venv/bin/python bench/entity_precision.py --strict   # exit 1 if the TSV is stale

A sample is named ``<folder>/<file>#<session index>``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from sessions.enrich.entities import TYPES, Extracted, extract_from_text, extract_session  # noqa: E402
from transcripts import parse_path  # noqa: E402

SAMPLES = REPO_ROOT.parent / "shared" / "samples"
LOCOMO = REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
CHECKED = Path(__file__).resolve().parent / "entity_precision_checked.tsv"
PATTERNS = ("claude_code/*.jsonl", "codex/*.jsonl", "aider/*.chat.history.md", "openai_chat/*.json")
COLUMNS = ["sample", "type", "value", "verdict", "note"]


def sample_files(root: Path = SAMPLES) -> list[Path]:
    return sorted(path for pattern in PATTERNS for path in root.glob(pattern))


def extract_samples(root: Path = SAMPLES) -> dict[str, list[Extracted]]:
    """``{sample name: entities}`` for every session of every sample file."""
    out: dict[str, list[Extracted]] = {}
    for path in sample_files(root):
        for index, session in enumerate(parse_path(path)):
            name = f"{path.parent.name}/{path.name}#{index}"
            out[name] = extract_session(session.messages)
    return out


def casual_chat_entities(path: Path = LOCOMO) -> tuple[int, list[tuple[str, str]]]:
    """(turns, entities) found in LoCoMo's casual conversations, where every entity is a
    false positive: a check of the patterns on prose that mentions no code at all."""
    if not path.exists():
        return 0, []
    turns = 0
    found = []
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    turns += 1
                    found += [(t, v) for t, v, _s, _e in extract_from_text(turn["text"])]
    return turns, found


def read_checked(path: Path = CHECKED) -> dict[tuple[str, str, str], tuple[str, str]]:
    if not path.exists():
        return {}
    checked = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t") if lines else []
    if header[:5] != COLUMNS:
        raise SystemExit(f"{path}: the first line must be {' / '.join(COLUMNS)}")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) < 4:
            raise SystemExit(f"{path}:{number}: expected tab-separated {', '.join(COLUMNS)}")
        sample, type, value, verdict = cells[:4]
        checked[(sample, type, value)] = (verdict.strip(), cells[4] if len(cells) > 4 else "")
    return checked


def tsv_cell(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", action="store_true", help="print every entity as TSV")
    parser.add_argument("--examples", type=int, default=8, help="values shown per type")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the TSV is stale")
    args = parser.parse_args(argv)

    results = extract_samples()
    if args.dump:
        print("\t".join(["sample", "type", "value", "count", "first_index", "context"]))
        for sample, entities in results.items():
            for e in entities:
                cells = [sample, e.type, e.value, str(e.count), str(e.first_index), e.context]
                print("\t".join(tsv_cell(c) for c in cells))
        return 0

    by_type: dict[str, list[tuple[str, Extracted]]] = defaultdict(list)
    for sample, entities in results.items():
        for entity in entities:
            by_type[entity.type].append((sample, entity))
    total = sum(len(v) for v in by_type.values())
    print(f"{len(results)} sessions in {len(sample_files())} sample files, {total} entities\n")
    for type in TYPES:
        rows = by_type.get(type, [])
        print(f"{type:<9} {len(rows):>4}")
        for sample, entity in rows[: args.examples]:
            print(f"            {entity.value[:90]!r}  (x{entity.count}, {sample})")
    print()

    checked = read_checked()
    produced = {
        (sample, e.type, tsv_cell(e.value)) for sample, ents in results.items() for e in ents
    }
    verdicts: dict[str, Counter] = defaultdict(Counter)
    bad_verdicts = []
    for key, (verdict, _note) in checked.items():
        if key not in produced:
            continue
        if verdict not in ("correct", "wrong"):
            bad_verdicts.append(key)
            continue
        verdicts[key[1]][verdict] += 1
    unchecked = sorted(produced - set(checked))
    missing = sorted(set(checked) - produced)

    print(f"Hand-checked precision ({CHECKED.name}):")
    print(f"{'type':<9} {'checked':>7} {'correct':>7} {'precision':>9}")
    all_ok = all_n = 0
    for type in TYPES:
        ok, n = verdicts[type]["correct"], sum(verdicts[type].values())
        all_ok, all_n = all_ok + ok, all_n + n
        figure = f"{ok / n:.3f}" if n else "-"
        print(f"{type:<9} {n:>7} {ok:>7} {figure:>9}")
    overall = f"{all_ok / all_n:.3f}" if all_n else "-"
    print(f"{'overall':<9} {all_n:>7} {all_ok:>7} {overall:>9}")
    print()
    if bad_verdicts:
        print(f"{len(bad_verdicts)} checked rows have a verdict other than correct|wrong")
    if unchecked:
        print(f"{len(unchecked)} entities the extractor produces are NOT in the checked file:")
        for sample, type, value in unchecked[:40]:
            print(f"  + {sample}\t{type}\t{value}")
    if missing:
        print(f"{len(missing)} checked entities the extractor no longer produces:")
        for sample, type, value in missing[:40]:
            print(f"  - {sample}\t{type}\t{value}")
    if not unchecked and not missing:
        print("The checked file covers exactly what the extractor produces.")
    turns, chat = casual_chat_entities()
    if turns:
        print(f"\nCasual conversation (LoCoMo, {turns} turns, no code): {len(chat)} entities")
        for type, value in chat[:20]:
            print(f"  ! {type}\t{value}")
    return 1 if args.strict and (unchecked or missing or bad_verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
