"""The order of search results: the one score (``search/ranking.py``) with and without its
noise factors, on the same candidates.

Searches LoCoMo (through ``bench/locomo.py``'s capture) and the coding question set
(``bench/coding_questions.yaml``: every sample of ``../shared/samples`` imported into one
project) with the real search, keeps each question's whole candidate pool (every feature
the ranking sees), and orders each pool several ways offline: the one score without noise
factors, and the one score as shipped (the reciprocal-rank fusion it replaced, once a third
column here, has been removed). So a formula is compared on exactly the same candidates,
and trying one takes seconds, not a new ingest.

    .venv/bin/python bench/score_order.py [--conversations 0-9] [--no-coding] [--dump FILE]
    .venv/bin/python bench/score_order.py --load FILE   # re-order a dump, no servers
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import SHARED, django_on_embedded_servers
from bench.locomo import parse_range
from bench.retrieval_api import capture, project_client, run_pipeline
from bench.retrieval_scoring import score, summarise
from bench.retrieval_sets import CODING_QUESTIONS as CODING
from bench.retrieval_sets import Question, locomo_units, session_key

LOCOMO_METRICS = ["turn@5", "turn@10", "turn@20", "session@1", "session@3"]
FIELDS = ("message_id", "session_id", "similarity", "keyword_score", "coverage")
FIELDS += ("rank_vector", "rank_keyword", "kind")


def pools(ask, questions) -> list[dict]:
    """Each question's candidate pool (as ``ranking.score`` received it) and intent."""
    from search import ranking

    seen = []
    original = ranking.score

    def spy(candidates, mode, intent=None):
        seen.append(([copy.copy(c) for c in candidates], intent))
        return original(candidates, mode, intent)

    ranking.score = spy
    try:
        out = []
        for question in questions:
            seen.clear()
            ask(question)
            candidates, intent = seen[-1]
            out.append(
                {
                    "candidates": [{f: getattr(c, f) for f in FIELDS} for c in candidates],
                    "output": intent.wants_output,
                    "injected": intent.wants_injected,
                }
            )
        return out
    finally:
        ranking.score = original


def locomo_rows(conversations: list[int]) -> list[dict]:
    from sessions.models import Message

    units, rows, ingested = locomo_units(conversations), [], {}
    for index, unit in units.items():
        project, client = project_client(unit.team, unit.project)
        capture(client, unit.sessions)
        ingested[index] = project, client
    run_pipeline()
    for index, (project, client) in ingested.items():
        unit = units[index]
        dia = dict(Message.objects.filter(session__project=project).values_list("id", "client_id"))
        asked = pools(
            lambda q, client=client: client.get("/api/v1/search", {"q": q.text, "limit": 20}),
            unit.questions,
        )
        for q, pool in zip(unit.questions, asked, strict=True):
            names = {str(c["message_id"]): dia[c["message_id"]] for c in pool["candidates"]}
            gold = {"gold": q.gold, "names": names}
            rows.append({**pool, **gold, "set": f"locomo-{unit.part}", "category": q.category})
    return rows


def locomo_recall(ranked: list[str], gold: list[str]) -> dict[str, float]:
    question = Question("", "", "", gold, sorted({session_key(g) for g in gold}))
    return score(ranked, question, (5, 10, 20), (1, 3))


def coding_rows() -> list[dict]:
    import yaml

    from search.service import SearchRequest, search
    from sessions.capture.service import capture_sessions
    from sessions.enrich import pipeline
    from sessions.models import Message
    from teams.access import Access
    from teams.services import ensure_team_and_project
    from transcripts import parse_path

    questions = yaml.safe_load(CODING.read_text())
    _, project, _ = ensure_team_and_project("coding", "samples")
    for source in sorted({q["source"] for q in questions}):
        capture_sessions(project, parse_path(SHARED / "samples" / source))
    while pipeline.embed_pending_messages():
        pass
    access = Access(team_ids=(project.team_id,), project_ids=(project.pk,))
    texts = dict(Message.objects.filter(session__project=project).values_list("id", "content"))
    asked = pools(lambda q: search(access, SearchRequest(q["question"], limit=20)), questions)
    rows = []
    for q, pool in zip(questions, asked, strict=True):
        gold = [[i for i, text in texts.items() if g in text] for g in q["gold"]]
        rows.append({**pool, "set": "coding", "category": q["category"], "gold": gold})
    return rows


def orders(row: dict) -> dict[str, list[int]]:
    from search import ranking, tuning
    from search.query_intent import QueryIntent

    def candidates():
        return [ranking.Candidate(**c) for c in row["candidates"]]

    intent = QueryIntent(row["output"], row["injected"])
    factors = dict(tuning.NOISE_FACTORS)
    tuning.NOISE_FACTORS.clear()
    plain = ranking.score(candidates(), "hybrid", intent)
    tuning.NOISE_FACTORS.update(factors)
    return {
        "score, no noise factors": [c.message_id for c in plain],
        "score": [c.message_id for c in ranking.score(candidates(), "hybrid", intent)],
    }


def report(rows: list[dict]) -> None:
    results: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        for system, order in orders(row).items():
            if row["set"] == "coding":
                measured = {
                    f"hit@{k}": statistics.fmean(bool(set(g) & set(order[:k])) for g in row["gold"])
                    for k in (1, 3, 10)
                }
            else:
                names = row["names"]
                measured = locomo_recall([names[str(m)] for m in order[:20]], row["gold"])
            results[(row["set"], system)].append({**measured, "category": row["category"]})
    for (part, system), measured in sorted(results.items()):
        if part == "coding":
            keys = ("hit@1", "hit@3", "hit@10")
            means = {k: statistics.fmean(m[k] for m in measured) for k in keys}
        else:
            means = summarise(measured, LOCOMO_METRICS)
        figures = "  ".join(f"{k} {v:.3f}" for k, v in means.items())
        print(f"{part:15} {system:25} n {len(measured):<4} {figures}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", default="0-9")
    parser.add_argument("--no-coding", action="store_true")
    parser.add_argument("--dump", type=Path, help="write the pools to this JSON file")
    parser.add_argument("--load", type=Path, help="re-order the pools of a dump")
    args = parser.parse_args()
    if args.load:
        report(json.loads(args.load.read_text()))
        return
    with django_on_embedded_servers():
        rows = locomo_rows(parse_range(args.conversations))
        if not args.no_coding:
            rows += coding_rows()
        if args.dump:
            args.dump.write_text(json.dumps(rows))
        report(rows)


if __name__ == "__main__":
    main()
