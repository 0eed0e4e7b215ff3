"""The local embedding model as a sentence classifier, measured on memory_dev by
leave-one-transcript-out (LOTO), beside the offline rules and their union.

Each transcript's messages are split into the sentences the offline extractor reads
(``memories.enrich.sentences.statements``, with ``offline.matches``' skip of an assistant
outside agent work). A sentence is labelled with a gold item's type when it contains the
item's ``quote`` or an ``alt_quote`` (or, for a quote that spans sentences, is a part of it of
at least ``MIN_PART`` characters), normalised as the README says; a negative's sentence and
every other one are "none". Sentences are embedded with the query encoder
(``sessions.embedding.query.embed_queries``: all-MiniLM-L6-v2, 384-d, normalised) and two
features are added: the speaker (user or assistant) and the message's position in the
session (0 to 1).

Two classifiers, each trained on 7 transcripts and run on the 8th, for each transcript:

- **logreg**: multinomial logistic regression (scikit-learn, balanced class weights, C=1);
  a sentence becomes a memory when its most likely memory type has probability >= the
  threshold; its type is that one;
- **proto**: nearest prototype: the cosine to each class's mean vector, a memory when the
  best type's cosine exceeds the "none" prototype's by >= the margin.

Scored at message level as ``bench/memory_dev.py`` does (a memory matches a gold item when
its evidence message contains the item's quote); precision is read both at message level
(the memory's message holds a gold quote) and at sentence level (its sentence is labelled
gold), with how many state a labelled negative. The union is the rules' memories plus the
classifier's on sentences the rules left; "added" is the classifier's share of it.

    .venv/bin/python bench/memory_classifier.py               # the LOTO tables
    .venv/bin/python bench/memory_classifier.py --per-transcript
    .venv/bin/python bench/memory_classifier.py --show 0.7     # added memories at 0.7 (text!)

``--show`` prints the transcripts' own sentences: read them, never copy them into the
repository. Embeddings are cached in ``/tmp/memory_classifier_vectors.npz``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_dev import GOLD, HELD_OUT, SHARED, TYPES, normalised

from memories.enrich.offline import RULES
from memories.enrich.sentences import statements
from transcripts import parse_path

CLASSES = ("none", *TYPES)
MIN_PART = 25  # characters of a quote spanning sentences that a sentence must hold
THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95)
MARGINS = (0.0, 0.05, 0.1)
CACHE = Path("/tmp/memory_classifier_vectors.npz")


@dataclass
class Sentence:
    text: str
    role: str
    position: float  # the message's index in its session, 0 to 1
    message: str  # the evidence message's text, normalised
    label: str = "none"
    negative: bool = False
    rules: str = ""  # the type the offline rules give it, if any


@dataclass
class Transcript:
    name: str
    items: list[dict]
    negatives: list[dict]
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def held_out(self) -> bool:
        return self.name in HELD_OUT


_MARKUP = str.maketrans(
    {"`": "", "*": "", "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}
)


def bare(text: str) -> str:
    """Normalised, without the markdown the extractor's sentences lose (backticks, bold)."""
    return normalised(text.translate(_MARKUP)).strip(" .:;,")


def contains(sentence: str, quote: str) -> bool:
    sentence, quote = bare(sentence), bare(quote)
    return quote in sentence or (len(sentence) >= MIN_PART and sentence in quote)


def load(gold: dict, entry: dict) -> Transcript:
    path = entry["path"]
    transcript = Transcript(
        Path(path).name,
        [i for i in gold["items"] if i["file"] == path],
        [n for n in gold["negatives"] if n["file"] == path],
    )
    for session in parse_path(SHARED / path):
        messages = list(session.messages)
        index = {id(m): n for n, m in enumerate(messages)}
        for statement in statements(session, messages):
            if statement.role == "assistant" and not (statement.tools or statement.chat):
                continue  # as offline.matches
            rules = next((r.type for rule in RULES if (r := rule(statement)) is not None), "")
            text = statement.sentence
            sentence = Sentence(
                statement.sentence,
                statement.role,
                index[id(statement.message)] / max(1, len(messages) - 1),
                normalised(statement.message.content or ""),
                rules=rules,
            )
            for item in transcript.items:
                quotes = [item["quote"], *item.get("alt_quotes", [])]
                if any(contains(text, q) for q in quotes):
                    sentence.label = item["type"]
                    break
            sentence.negative = any(contains(text, n["quote"]) for n in transcript.negatives)
            transcript.sentences.append(sentence)
    return transcript


def vectors(texts: list[str]) -> np.ndarray:
    """The texts' vectors, from the cache where it has them."""
    keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    cached = dict(np.load(CACHE)) if CACHE.exists() else {}
    missing = sorted({(k, t) for k, t in zip(keys, texts, strict=True) if k not in cached})
    if missing:
        from sessions.embedding.query import embed_queries

        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            for (k, _), v in zip(batch, embed_queries([t for _, t in batch]), strict=True):
                cached[k] = np.asarray(v, dtype=np.float32)
        np.savez(CACHE, **cached)
    return np.stack([cached[k] for k in keys])


def features(sentences: list[Sentence], embedded: np.ndarray) -> np.ndarray:
    extra = np.array([[s.role == "user", s.position] for s in sentences], dtype=np.float32)
    return np.hstack([embedded, extra])


def logreg_probabilities(train_x, train_y, test_x) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)
    model.fit(train_x, train_y)
    order = [list(model.classes_).index(c) if c in model.classes_ else -1 for c in CLASSES]
    raw = model.predict_proba(test_x)
    return np.stack([raw[:, o] if o >= 0 else np.zeros(len(test_x)) for o in order], axis=1)


def prototype_scores(train_x, train_y, test_x) -> np.ndarray:
    scores = []
    for c in CLASSES:
        mean = train_x[np.array(train_y) == c].mean(axis=0)
        scores.append(test_x @ (mean / np.linalg.norm(mean)))
    return np.stack(scores, axis=1)


def auc(truth: list[bool], score: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(truth, score) if any(truth) and not all(truth) else float("nan")


def predictions(kind: str, scores: np.ndarray, cut: float) -> list[str]:
    """Each sentence's predicted type ("" for none)."""
    best = scores[:, 1:].argmax(axis=1)
    top = scores[np.arange(len(scores)), best + 1]
    keep = top >= cut if kind == "logreg" else top - scores[:, 0] >= cut
    return [TYPES[b] if k else "" for b, k in zip(best, keep, strict=True)]


@dataclass
class Tally:
    items: int = 0
    found: int = 0
    typed: int = 0
    memories: int = 0
    gold_message: int = 0
    gold_sentence: int = 0
    negative: int = 0
    added: int = 0
    added_gold_message: int = 0
    added_gold_sentence: int = 0
    added_negative: int = 0

    def __iadd__(self, other: Tally) -> Tally:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def tally(t: Transcript, types: list[str], added: list[bool] | None = None) -> Tally:
    """``types[i]``: the type of the memory made of sentence i ("" for none)."""
    result = Tally(items=len(t.items))
    found, typed = set(), set()
    for n, (s, kind) in enumerate(zip(t.sentences, types, strict=True)):
        if not kind:
            continue
        hits = [
            i
            for i, item in enumerate(t.items)
            if any(normalised(q) in s.message for q in [item["quote"], *item.get("alt_quotes", [])])
        ]
        found.update(hits)
        typed.update(i for i in hits if t.items[i]["type"] == kind)
        negative = any(normalised(x["quote"]) in s.message for x in t.negatives)
        result.memories += 1
        result.gold_message += bool(hits)
        result.gold_sentence += s.label != "none"
        result.negative += negative
        if added and added[n]:
            result.added += 1
            result.added_gold_message += bool(hits)
            result.added_gold_sentence += s.label != "none"
            result.added_negative += negative
    result.found, result.typed = len(found), len(typed)
    return result


def ratio(n: int, d: int) -> str:
    return f"{n}/{d} {n / d:.2f}" if d else "-"


def line(label: str, x: Tally, union: bool = False) -> str:
    cells = [
        label,
        ratio(x.found, x.items),
        ratio(x.typed, x.items),
        str(x.memories),
        ratio(x.gold_message, x.memories),
        ratio(x.gold_sentence, x.memories),
        str(x.negative),
    ]
    if union:
        cells += [
            str(x.added),
            ratio(x.added_gold_message, x.added),
            ratio(x.added_gold_sentence, x.added),
            str(x.added_negative),
        ]
    else:
        cells += ["", "", "", ""]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| method | recall | recall, right type | memories | precision, message | "
    "precision, sentence | state a negative | added | added precision, message | "
    "added precision, sentence | added negatives |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-transcript", action="store_true")
    parser.add_argument("--show", type=float, help="print the union's added memories at this cut")
    args = parser.parse_args(argv)
    gold = json.loads(GOLD.read_text())
    transcripts = [load(gold, entry) for entry in gold["files"]]
    labelled = sum(1 for t in transcripts for s in t.sentences if s.label != "none")
    reachable = sum(
        1
        for t in transcripts
        for item in t.items
        if any(
            any(contains(s.text, q) for q in [item["quote"], *item.get("alt_quotes", [])])
            for s in t.sentences
        )
    )
    total = sum(len(t.sentences) for t in transcripts)
    items = sum(len(t.items) for t in transcripts)
    print(
        f"{total} sentences, {labelled} labelled with a type; {reachable}/{items} gold items "
        "have a sentence the extractor reads (the ceiling of recall).\n"
    )
    embedded = [features(t.sentences, vectors([s.text for s in t.sentences])) for t in transcripts]
    scores: dict[str, list[np.ndarray]] = {"logreg": [], "proto": []}
    for n in range(len(transcripts)):
        train_x = np.vstack([e for m, e in enumerate(embedded) if m != n])
        train_y = [s.label for m, t in enumerate(transcripts) if m != n for s in t.sentences]
        scores["logreg"].append(logreg_probabilities(train_x, train_y, embedded[n]))
        scores["proto"].append(prototype_scores(train_x[:, :-2], train_y, embedded[n][:, :-2]))

    print(
        "Ranking, memory vs none, per transcript (ROC AUC; 0.5 is chance): "
        "logreg 1 - P(none), proto best type's cosine minus none's.\n"
    )
    print("| transcript | labelled | logreg AUC | proto AUC |\n|---|---|---|---|")
    for n, t in enumerate(transcripts):
        truth = [s.label != "none" for s in t.sentences]
        cells = [
            f"{auc(truth, 1 - scores['logreg'][n][:, 0]):.2f}",
            f"{auc(truth, scores['proto'][n][:, 1:].max(axis=1) - scores['proto'][n][:, 0]):.2f}",
        ]
        held = "(held out) " if t.held_out else ""
        print(f"| {held}{t.name} | {sum(truth)}/{len(truth)} | {' | '.join(cells)} |")

    runs = [("rules", None, None)]
    runs += [("logreg", "logreg", c) for c in THRESHOLDS]
    runs += [("proto", "proto", c) for c in MARGINS]
    groups = {
        "dev (5)": [t for t in transcripts if not t.held_out],
        "held out (3)": [t for t in transcripts if t.held_out],
        "all (8)": transcripts,
    }
    rows: dict[str, list[str]] = {g: [] for g in groups}
    per: dict[str, list[str]] = {t.name: [] for t in transcripts}
    for label, kind, cut in runs:
        variants = [(label if kind is None else f"{label} >= {cut}", False)]
        if kind is not None:
            variants.append((f"rules OR {label} >= {cut}", True))
        for name, union in variants:
            totals = {g: Tally() for g in groups}
            for n, t in enumerate(transcripts):
                rules = [s.rules for s in t.sentences]
                if kind is None:
                    result = tally(t, rules)
                else:
                    clf = predictions(kind, scores[kind][n], cut)
                    if union:
                        added = [not r and bool(c) for r, c in zip(rules, clf, strict=True)]
                        merged = [r or c for r, c in zip(rules, clf, strict=True)]
                        result = tally(t, merged, added)
                        if args.show is not None and kind == "logreg" and cut == args.show:
                            for s, a, c in zip(t.sentences, added, clf, strict=True):
                                if a:
                                    mark = (
                                        s.label
                                        if s.label != "none"
                                        else "NEG"
                                        if s.negative
                                        else "-"
                                    )
                                    print(
                                        f"{t.name[:20]:<20} {c:<10} gold={mark:<10} {s.text[:140]}"
                                    )
                    else:
                        result = tally(t, clf)
                per[t.name].append(line(name, result, union))
                for g, members in groups.items():
                    if t in members:
                        totals[g] += result
            for g in groups:
                rows[g].append(line(name, totals[g], union))
    for g, lines in rows.items():
        print(f"\n### {g}, leave-one-transcript-out\n\n{HEADER}")
        print("\n".join(lines))
    if args.per_transcript:
        for t in transcripts:
            print(f"\n### {'(held out) ' if t.held_out else ''}{t.name}\n\n{HEADER}")
            print("\n".join(per[t.name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
