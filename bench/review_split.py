"""How many extracted memories wait for review (proposed) and how many are used at once
(active) at a project's confidence threshold (``memories/capture/status.py``): on the hand-
labelled memory_dev transcripts, split by what they are (a gold memory, a negative, or
neither), and on the shared samples (``../shared/samples``).

The offline rules run as ``bench/memory_dev.py`` runs them (no database); a memory is
proposed when its confidence label scores below the threshold. A good threshold proposes
the memories that match nothing and keeps the gold ones active.

    .venv/bin/python bench/review_split.py                   # at the default threshold
    .venv/bin/python bench/review_split.py --threshold 0.45  # another one
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_dev import GOLD, SHARED, extracted, score

from memories.capture.status import confidence_score
from teams.models import DEFAULT_MEMORY_REVIEW_THRESHOLD
from transcripts import parse_path


def split(memories, threshold: float) -> Counter:
    counts = Counter()
    for memory in memories:
        state = "proposed" if confidence_score(memory.confidence) < threshold else "active"
        kind = "gold" if memory.items else "negative" if memory.negatives else "neither"
        counts[state] += 1
        counts[f"{state}:{kind}"] += 1
        counts[f"{state}:{memory.type}"] += 1
    return counts


def line(label: str, counts: Counter, kinds: bool = True) -> str:
    total = counts["proposed"] + counts["active"]
    share = counts["proposed"] / total if total else 0.0
    text = f"{label:<34} {total:>5} {counts['active']:>6} {counts['proposed']:>8} {share:>6.0%}"
    if kinds:
        text += "   " + " ".join(
            f"{kind} {counts[f'active:{kind}']}/{counts[f'proposed:{kind}']}"
            for kind in ("gold", "negative", "neither")
        )
    return text


def samples() -> list[Path]:
    return sorted(
        p
        for p in (SHARED / "samples").rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json", ".md") and p.name != "README.md"
    )


def _safe(path: Path):
    try:
        return extracted(path)
    except Exception:
        return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=float, default=DEFAULT_MEMORY_REVIEW_THRESHOLD)
    args = parser.parse_args(argv)
    gold = json.loads(GOLD.read_text())
    print(f"threshold {args.threshold:.2f}")
    print(
        f"{'transcript':<34} {'all':>5} {'active':>6} {'proposed':>8} {'share':>6}   "
        "active/proposed by kind"
    )
    total = Counter()
    for entry in gold["files"]:
        counts = split(score(gold, entry).memories, args.threshold)
        total += counts
        print(line(Path(entry["path"]).name[:34], counts))
    print(line("memory_dev, all", total))
    by_type = " ".join(
        f"{t} {total[f'active:{t}']}/{total[f'proposed:{t}']}"
        for t in ("decision", "finding", "preference", "learning", "fact")
    )
    print(f"  by type (active/proposed): {by_type}")
    print()
    sample_total = Counter()
    for path in samples():
        try:
            parse_path(path)
        except Exception as exc:  # a sample no format reads: say so and go on
            print(f"{path.name:<34} not read: {exc.__class__.__name__}")
            continue
        counts = split(extracted(path), args.threshold)
        sample_total += counts
        print(line(path.name[:34], counts, kinds=False))
    print(line("shared samples, all", sample_total, kinds=False))
    labels = Counter(m.confidence or "unstated" for p in samples() for m in _safe(p))
    print(f"  labels in the samples: {dict(labels)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
