"""Scoring ranked message keys against gold, the BM25 and dense baselines over the same
texts, and the tables the retrieval benchmarks print.

A message key is ``"<session key>:<turn>"`` (``bench.retrieval_sets.session_key``); a
system's answer to a question is its ranked message keys, best first."""

from __future__ import annotations

import re
import statistics

from bench.retrieval_api import DEPTH
from bench.retrieval_sets import Question, session_key


def score(
    ranked: list[str],
    question: Question,
    turn_ks=(),
    session_ks=(),
    *,
    mrr: bool = False,
    turn_name: str = "turn",
) -> dict[str, float]:
    """Recall of the gold messages in the top k (``turn@k``, named ``turn_name``; only when
    the question has gold messages), recall of its gold sessions among the top k distinct
    sessions of the ranked messages (``session@k``), and the reciprocal rank of the first
    gold message (``mrr``)."""
    scores = {}
    gold = set(question.gold)
    if gold:
        for k in turn_ks:
            scores[f"{turn_name}@{k}"] = len(gold & set(ranked[:k])) / len(gold)
        if mrr:
            first = next((i for i, key in enumerate(ranked) if key in gold), None)
            scores["mrr"] = 0.0 if first is None else 1 / (first + 1)
    if session_ks:
        sessions = list(dict.fromkeys(session_key(key) for key in ranked))
        gold_sessions = set(question.gold_sessions)
        for k in session_ks:
            scores[f"session@{k}"] = len(gold_sessions & set(sessions[:k])) / len(gold_sessions)
    return scores


def summarise(rows: list[dict], metrics: list[str]) -> dict[str, float]:
    """The mean of each metric over the rows that have it."""
    out = {}
    for metric in metrics:
        values = [r[metric] for r in rows if metric in r]
        if values:
            out[metric] = statistics.fmean(values)
    return out


def baseline_rankings(docs: dict[str, str], questions: list[str]) -> dict[str, list[list[str]]]:
    """The same texts ranked without memoryapp: BM25 (rank-bm25 over lowercase word
    tokens), BM25 over PostgreSQL's English lexemes (stemmed, stopwords out: ``bm25-en``) and
    dense-only exact cosine with the product's model (which reads a text's first 256 word
    pieces); the top ``DEPTH`` keys per question."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from sessions.embedding.torch_runtime import embed

    keys, texts = list(docs), list(docs.values())
    bm25 = BM25Okapi([re.findall(r"\w+", d.lower()) for d in texts])
    bm25_english = BM25Okapi(english_lexemes(texts))
    vectors = embed(texts)
    query_vectors = embed(questions)
    stemmed_questions = english_lexemes(questions)
    out = {"bm25": [], "bm25-en": [], "dense": []}

    def top(scores) -> list[str]:
        return [keys[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]

    for question, stemmed, qv in zip(questions, stemmed_questions, query_vectors, strict=True):
        out["bm25"].append(top(bm25.get_scores(re.findall(r"\w+", question.lower()))))
        out["bm25-en"].append(top(bm25_english.get_scores(stemmed)))
        out["dense"].append(top(vectors @ qv))
    return out


def english_lexemes(texts: list[str]) -> list[list[str]]:
    """Each text as PostgreSQL's English lexemes (stemmed, stopwords out), repeated by count."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.i, v.lexeme, coalesce(array_length(v.positions, 1), 1)"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS t(text, i),"
            " LATERAL unnest(to_tsvector('english', t.text)) AS v",
            [texts],
        )
        out = [[] for _ in texts]
        for i, lexeme, count in cursor.fetchall():
            out[i - 1] += [lexeme] * count
    return out


def table(title: str, rows: dict[str, dict[str, list[dict]]], metrics: list[str]) -> list[dict]:
    """Print one table: a line per system × part × category ("all" first); returns the lines
    as dicts (for ``--json``)."""
    print(f"\n{title}")
    header = f"{'system':<10} {'part':<9} {'category':<24} {'n':>5} " + " ".join(
        f"{m:>10}" for m in metrics
    )
    print(header)
    print("-" * len(header))
    lines = []
    for system, parts in rows.items():
        for part, part_rows in parts.items():
            categories = ["all", *sorted({r["category"] for r in part_rows})]
            for category in categories:
                chosen = [r for r in part_rows if category in ("all", r["category"])]
                means = summarise(chosen, metrics)
                lines.append(
                    {"system": system, "part": part, "category": category, "n": len(chosen)} | means
                )
                cells = " ".join(
                    f"{means[m]:>10.3f}" if m in means else f"{'-':>10}" for m in metrics
                )
                print(f"{system:<10} {part:<9} {category:<24} {len(chosen):>5} {cells}")
    return lines
