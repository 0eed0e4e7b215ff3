"""Dense-only recall of contextual message vectors, offline (no database, no servers).

Issue 18: a short reply ("Yes, every weekend!") means what it answers, and its own vector
cannot say so. This embeds every message of LoCoMo, the LongMemEval sample and the coding
transcripts as the pipeline does (``sessions/enrich/chunking.py``: header + text, windows),
and, per variant, adds (or substitutes) a *context chunk*: the previous turn (and/or the next)
with the message, "Mel: Do you like hiking?\\nCaroline: Yes, every weekend!". A message's
score is its best chunk's cosine, as in ``search/semantic.py``; messages are ranked by it
over the whole unit (a conversation, a haystack, the coding project).

Reported per set and part: turn recall@10/@50/@100 (candidate recall: what the full system's
re-ordering can reach) and session recall@3. Tune on LoCoMo 0-4, check on 5-9.

    MODEL_CACHE_DIR=/work/main/var/models .venv/bin/python bench/context_vectors.py \
        [--sets locomo,longmemeval,coding] [--variants plain,prev<32,...]

A variant's name: ``plain``; or ``prev<N`` / ``prevnext<N`` / ``next<N`` (context chunk
for messages under N word pieces; ``all`` for every message), with ``!`` appended to
replace the plain chunk instead of adding one (``prev<32!``), ``@M`` for the context
turn's word-piece budget (its last M pieces for a previous turn, its first M for a next), and
a final ``~`` for user and assistant prose only (no context for tool calls and outputs).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")

import numpy as np

TURN_KS, SESSION_KS = (10, 50, 100), (3,)


@dataclass
class Msg:
    key: str  # "<session key>:<turn>"
    role: str
    author: str
    tool_name: str
    content: str


@dataclass
class Variant:
    name: str
    sides: tuple[str, ...]  # () plain, ("prev",), ("next",), ("prev", "next")
    under: int | None  # context chunk for messages under this many pieces; None: all
    replace: bool
    budget: int
    prose_only: bool = False  # no context for tool calls and outputs
    questions_only: bool = False  # context only from a previous turn that asks ("?")


def parse_variant(name: str) -> Variant:
    if name == "plain":
        return Variant(name, (), 0, False, 0)
    match = re.fullmatch(r"(prevnext|prev|next)<(all|\d+)(!?)(?:@(\d+))?(~?)(\??)", name)
    if not match:
        raise SystemExit(f"unknown variant {name!r}")
    side, under, bang, budget, prose, asks = match.groups()
    sides = {"prevnext": ("prev", "next"), "prev": ("prev",), "next": ("next",)}[side]
    return Variant(
        name,
        sides,
        None if under == "all" else int(under),
        bool(bang),
        int(budget or 96),
        bool(prose),
        bool(asks),
    )


# --- the sets, as units of sessions of messages + questions -------------------------------


def locomo(indices):
    from bench.retrieval_sets import locomo_units

    out = []
    for unit in locomo_units(indices).values():
        sessions = [
            [Msg(m["client_id"], "user", m["author"], "", m["content"]) for m in body["messages"]]
            for body in unit.sessions
        ]
        out.append((f"locomo-{unit.part}", sessions, unit.questions))
    return out


def longmemeval():
    from bench.retrieval_sets import longmemeval_units

    out = []
    for unit in longmemeval_units():
        sessions = [
            [Msg(m["client_id"], m["role"], "", "", m["content"]) for m in body["messages"]]
            for body in unit.sessions
        ]
        out.append(("longmemeval", sessions, unit.questions))
    return out


def coding():
    from bench.retrieval_sets import SAMPLES, Question, load_coding_questions, sample_transcripts
    from transcripts import parse_path

    sessions, by_source = [], defaultdict(list)
    for path in sample_transcripts():
        source = str(path.relative_to(SAMPLES))
        for parsed in parse_path(path):
            n = len(sessions)
            by_source[source].append(n)
            sessions.append(
                [
                    Msg(f"s{n}:{i}", m.role, m.author, m.tool_name, m.content)
                    for i, m in enumerate(parsed.messages)
                ]
            )
    questions = []
    for q in load_coding_questions():
        mine = [m for n in by_source[q["source"]] for m in sessions[n]]
        gold = []
        for text in q["gold"]:
            found = [m.key for m in mine if text in m.content]
            gold += found[:1]
        if gold:
            questions.append(
                Question(
                    q["id"],
                    q["question"],
                    q["category"],
                    gold,
                    sorted({g.rsplit(":", 1)[0] for g in gold}),
                )
            )
    return [("coding", sessions, questions)]


# --- chunks --------------------------------------------------------------------------------


class Embedder:
    """Embeds pieces once each (a variant's chunks are mostly shared with another's)."""

    def __init__(self, cache: Path | None):
        from sessions.embedding.backend import document_encoder

        self.encoder = document_encoder()
        self.path = cache
        self.cache: dict[tuple[int, ...], np.ndarray] = {}
        if cache and cache.exists():
            self.cache = pickle.loads(cache.read_bytes())
        self.seconds = 0.0
        self.embedded = 0

    def vectors(self, pieces: list[tuple[int, ...]]) -> np.ndarray:
        missing = list(dict.fromkeys(p for p in pieces if p not in self.cache))
        if missing:
            started = time.perf_counter()
            made = self.encoder.encode_batch([""] * len(missing), token_ids=missing)
            self.seconds += time.perf_counter() - started
            self.embedded += len(missing)
            self.cache.update(zip(missing, made, strict=True))
            if self.path:
                self.path.write_bytes(pickle.dumps(self.cache))
        return np.stack([self.cache[p] for p in pieces])


def ids(text: str) -> tuple[int, ...]:
    from sessions.embedding.tokens import tokenizer

    return tuple(tokenizer().encode(text, add_special_tokens=False).ids)


def unit_chunks(sessions, variant: Variant, memo: dict):
    """(message index, pieces) for every chunk of the unit under ``variant``."""
    from sessions.enrich.chunking import chunk_message, header_for

    def plain(m: Msg):
        if m.key not in memo:
            header = header_for(m.role, m.author, m.tool_name)
            chunks = chunk_message(m.content, header=header)
            memo[m.key] = (
                [c.token_ids or ids(c.text) for c in chunks],
                ids(header),
                ids(m.content),
            )
        return memo[m.key]

    out, messages = [], []
    for session in sessions:
        for i, m in enumerate(session):
            n = len(messages)
            messages.append(m)
            chunks, head, body = plain(m)
            short = variant.sides and (variant.under is None or len(body) < variant.under)
            if variant.prose_only and (m.tool_name or m.role not in ("user", "assistant")):
                short = False
            if not chunks:
                continue
            if short:
                pieces: tuple[int, ...] = ()
                if "prev" in variant.sides and i > 0:
                    _, phead, pbody = plain(session[i - 1])
                    if variant.questions_only and "?" not in session[i - 1].content:
                        pbody = ()
                    if pbody:
                        pieces += phead + pbody[-variant.budget :] + ids("\n")
                pieces += head + body[:160]
                if "next" in variant.sides and i + 1 < len(session):
                    _, nhead, nbody = plain(session[i + 1])
                    if nbody:
                        pieces += ids("\n") + nhead + nbody[: variant.budget]
                context = pieces[:254]
                if context != chunks[0]:
                    out.append((n, context))
                    if variant.replace and len(chunks) == 1:
                        continue
            out += [(n, c) for c in chunks]
    return messages, out


def rank(messages, chunks, vectors: np.ndarray, query: np.ndarray, depth: int = 100):
    scores = vectors @ query
    best = np.full(len(messages), -np.inf)
    owner = np.array([n for n, _ in chunks])
    np.maximum.at(best, owner, scores)
    order = np.argsort(-best, kind="stable")[:depth]
    return [messages[i].key for i in order if best[i] > -np.inf]


def recall(ranked, question) -> dict[str, float]:
    row = {}
    gold = set(question.gold)
    if gold:
        for k in TURN_KS:
            row[f"R@{k}"] = len(gold & set(ranked[:k])) / len(gold)
    sessions = list(dict.fromkeys(key.rsplit(":", 1)[0] for key in ranked))
    for k in SESSION_KS:
        row[f"S@{k}"] = len(set(question.gold_sessions) & set(sessions[:k])) / len(
            question.gold_sessions
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="locomo-tune")
    parser.add_argument("--variants", default="plain,prev<32,prevnext<32,prev<all")
    parser.add_argument("--by-category", action="store_true")
    parser.add_argument(
        "--show-lost",
        action="store_true",
        help="gold in the first variant's top 100 and not in another's",
    )
    parser.add_argument(
        "--cache", type=Path, help="a file keeping the vectors made, for the next run (pickle)"
    )
    args = parser.parse_args()
    import django

    django.setup()
    from sessions.embedding.query import embed_query

    loaders = {
        "locomo-tune": lambda: locomo(range(0, 5)),
        "locomo-holdout": lambda: locomo(range(5, 10)),
        "longmemeval": longmemeval,
        "coding": coding,
    }
    embedder = Embedder(args.cache)
    variants = [parse_variant(v) for v in args.variants.split(",")]
    for set_name in args.sets.split(","):
        units = loaders[set_name]()
        rows = defaultdict(list)  # (variant, category) -> rows
        extra = defaultdict(lambda: [0, 0])  # variant -> [chunks, messages]
        first_found: dict[str, set[str]] = {}
        for _, sessions, questions in units:
            memo: dict = {}  # message key -> its pieces (keys repeat across units)
            queries = np.stack([embed_query(q.text) for q in questions])
            for variant in variants:
                messages, chunks = unit_chunks(sessions, variant, memo)
                vectors = embedder.vectors([c for _, c in chunks])
                extra[variant.name][0] += len(chunks)
                extra[variant.name][1] += len(messages)
                by_key = {m.key: m for m in messages}
                for question, query in zip(questions, queries, strict=True):
                    ranked = rank(messages, chunks, vectors, query)
                    row = recall(ranked, question)
                    if args.show_lost:
                        found = set(ranked) & set(question.gold)
                        if variant is variants[0]:
                            first_found[question.id] = found
                        for key in first_found.get(question.id, set()) - found:
                            m = by_key[key]
                            print(
                                f"lost by {variant.name}: {question.text!r} -> {m.role}"
                                f"/{m.tool_name} {m.content[:100]!r}"
                            )
                    rows[(variant.name, "all")].append(row)
                    rows[(variant.name, question.category)].append(row)
        metrics = [f"R@{k}" for k in TURN_KS] + [f"S@{k}" for k in SESSION_KS]
        print(f"\n{set_name}: {len(units)} unit(s)")
        print(
            f"{'variant':<18} {'category':<26} {'n':>4} "
            + " ".join(f"{m:>6}" for m in metrics)
            + "  chunks/msg"
        )
        categories = sorted({c for _, c in rows} - {"all"}) if args.by_category else []
        for variant in variants:
            for category in ["all", *categories]:
                chosen = rows[(variant.name, category)]
                cells = []
                for metric in metrics:
                    values = [r[metric] for r in chosen if metric in r]
                    cells.append(f"{np.mean(values):>6.3f}" if values else f"{'-':>6}")
                chunks, messages = extra[variant.name]
                ratio = f"  {chunks / messages:.2f}" if category == "all" else ""
                print(
                    f"{variant.name:<18} {category:<26} {len(chosen):>4} "
                    + " ".join(cells)
                    + ratio,
                    flush=True,
                )
    print(
        f"\nembedded {embedder.embedded} chunks in {embedder.seconds:.0f} s "
        f"({embedder.embedded / max(embedder.seconds, 1e-9):.0f}/s)"
    )


if __name__ == "__main__":
    main()
