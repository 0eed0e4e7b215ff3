"""Retrieval quality on LoCoMo through the real capture path, pipeline and search API.

Each LoCoMo conversation becomes its own team and project; each of its sessions is captured
with ``POST /api/v1/sessions`` (one message per turn: the speaker as author, the session's
date as the time, the turn's ``dia_id`` as the client id, an image's caption appended), and
the enrichment pipeline embeds and summarises it in this process (the same functions the
Celery tasks run). Then every question of categories 1-4 is asked through
``GET /api/v1/search`` with that conversation's token, and the ranked messages are mapped
back to their ``dia_id``.

Reported, for conversations 0-4 (TUNE: what any tuning looked at), 5-9 (HOLDOUT: the figure
to quote) and all: turn recall@5/@10/@20, session recall@1/@3, per category; in the same run
baselines over the same turns ("<speaker>: <text>"): BM25 (rank-bm25, lowercase word
tokens, as in ../shared/BENCHMARKS.md), a stronger BM25 over PostgreSQL's English lexemes
(stemmed, stopwords removed: ``bm25-en``), and dense-only exact cosine with the same model.
Also the context endpoint's recall (share of gold turns whose text is in the Markdown) at
1,000 and 4,000 tokens with its tokens per query, and the search latency through the API.

With ``--memory-keys``, memories are extracted from every session after the pipeline (the
extraction the worker runs, ``memories/enrich/run.py``), and every question is also asked
with ``memory_keys=true`` (memories matching the question point search to the messages they
came from): the system "+memories" beside "memoryapp", in the same run;
``--memory-key-configs 1:0,0.5:0.3`` ranks once per (weight of the memory keys' list in the
fusion, least relevance of a memory used as a key) instead.

Who is who (learned speaker aliases, search/aliases.py): ``--compare-aliases`` also ranks
every question with aliases switched off ("no aliases") and with aliases on the keyword side
only ("aliases kw"), in the same run. ``--renamed-speakers`` first gives each speaker a
handle as display name ("Caroline" → "cwhit_13") and keeps the text, where the others still
call them "Caroline", and the questions as written ("What did Caroline research?"): what a
real chat whose display names differ from what people call each other asks of search. It
implies ``--compare-aliases``.

    .venv/bin/python bench/locomo.py [--conversations 0-9] [--mode hybrid] [--no-context]
        [--large-scope-paths] [--memory-keys] [--compare-aliases] [--renamed-speakers]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import SHARED, django_on_embedded_servers, percentile

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNE, HOLDOUT = range(0, 5), range(5, 10)
TURN_KS, SESSION_KS = (5, 10, 20), (1, 3)
DEPTH = 20


def load_locomo() -> list[dict]:
    return json.loads((SHARED / "data" / "locomo" / "locomo10.json").read_text())


def turn_text(turn: dict) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares an image: {turn['blip_caption']}]"
    return text


def sessions_of(conversation: dict) -> list[tuple[int, datetime, list[dict]]]:
    conv = conversation["conversation"]
    found = []
    for key, turns in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list):
            n = int(match.group(1))
            when = datetime.strptime(conv[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
            found.append((n, when, turns))
    return sorted(found)


HANDLE_STEMS = ("whit", "brook", "ster", "mack", "roe", "vale", "thorn", "quill", "fenn", "lark")


def with_handles(conversation: dict, index: int) -> dict:
    """The conversation with each speaker's display name a handle sharing no word with the
    name ("Caroline" → "cwhit_13"); the text and the questions are left as written."""
    conv = conversation["conversation"]
    handles = {}
    for n, key in enumerate(("speaker_a", "speaker_b")):
        name = conv[key]
        handles[name] = f"{name[0].lower()}{HANDLE_STEMS[(index + n) % 10]}_{13 + 7 * index + n}"
    renamed = {
        key: [{**t, "speaker": handles.get(t["speaker"], t["speaker"])} for t in value]
        if isinstance(value, list)
        else handles.get(value, value)
        if key in ("speaker_a", "speaker_b")
        else value
        for key, value in conv.items()
    }
    return {**conversation, "conversation": renamed}


def learned_aliases(project) -> str:
    from sessions.models import SpeakerAlias

    rows = SpeakerAlias.objects.filter(project=project, evidence__gte=2).order_by("-evidence")
    return ", ".join(f"{a.alias}→{a.speaker} ({a.evidence})" for a in rows[:8]) or "none"


def questions_of(conversation: dict, known: set[str], skipped: list[str]) -> list[dict]:
    out = []
    for qa in conversation["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        ids = [i for raw in qa.get("evidence", []) for i in re.split(r"[;,\s]+", raw) if i]
        gold = [i for i in ids if i in known]
        skipped += [f"{conversation['sample_id']}:{i}" for i in ids if i not in known]
        if gold:
            out.append({**qa, "gold": gold})
    return out


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def recall(ranked: list[str], gold: list[str]) -> dict[str, float]:
    gold_set = set(gold)
    scores = {f"turn@{k}": len(gold_set & set(ranked[:k])) / len(gold_set) for k in TURN_KS}
    sessions = list(dict.fromkeys(session_of(d) for d in ranked))
    gold_sessions = {session_of(d) for d in gold}
    for k in SESSION_KS:
        scores[f"session@{k}"] = len(gold_sessions & set(sessions[:k])) / len(gold_sessions)
    return scores


def summarise(rows: list[dict]) -> dict[str, float]:
    keys = [f"turn@{k}" for k in TURN_KS] + [f"session@{k}" for k in SESSION_KS]
    return {k: statistics.fmean(r[k] for r in rows) for k in keys} if rows else {}


# ---------------------------------------------------------------------------------------


def ingest(index: int, conversation: dict):
    from rest_framework.test import APIClient

    from teams.models import ApiToken
    from teams.services import ensure_team_and_project

    _, project, _ = ensure_team_and_project(f"locomo-{index}", "conversation")
    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    conv = conversation["conversation"]
    for n, when, turns in sessions_of(conversation):
        response = client.post(
            "/api/v1/sessions",
            {
                "external_id": f"{conversation['sample_id']}-session-{n}",
                "agent_name": "locomo",
                "title": f"{conv['speaker_a']} and {conv['speaker_b']}, session {n}",
                "started_at": when.isoformat() + "Z",
                "messages": [
                    {
                        "role": "user",
                        "author": t["speaker"],
                        "content": turn_text(t),
                        "timestamp": when.isoformat() + "Z",
                        "client_id": t["dia_id"],
                    }
                    for t in turns
                ],
            },
            format="json",
        )
        if response.status_code not in (200, 201):
            raise SystemExit(f"capture failed: {response.status_code} {response.content[:300]}")
    return project, client


def run_pipeline() -> float:
    from django.conf import settings

    from sessions.enrich import pipeline

    settings.SESSION_ENRICH_DELAY_SECONDS = 0
    started = time.perf_counter()
    while pipeline.embed_pending_messages():
        pass
    while pipeline.enrich_pending_sessions(limit=100):
        pass
    return time.perf_counter() - started


def dia_ids_by_position(project) -> dict[tuple[str, int], str]:
    from sessions.models import Message

    rows = Message.objects.filter(session__project=project).values_list(
        "session__public_id", "seq", "client_id"
    )
    return {(sid, seq): dia for sid, seq, dia in rows}


def run_extraction() -> tuple[float, int]:
    """Memories from every enriched session, as the worker extracts them; (seconds, count)."""
    from memories.enrich.run import extract_pending_sessions
    from memories.models import Memory

    started = time.perf_counter()
    while extract_pending_sessions(limit=100):
        pass
    return time.perf_counter() - started, Memory.objects.count()


def system_rankings(
    client, questions, positions, mode, memory_keys=False
) -> tuple[list[list[str]], list[float]]:
    rankings, latencies = [], []
    for qa in questions:
        started = time.perf_counter()
        params = {"q": qa["question"], "limit": DEPTH, "mode": mode}
        if memory_keys:
            params["memory_keys"] = "true"
        response = client.get("/api/v1/search", params)
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
        rankings.append(
            [
                positions[(hit["session"]["id"], hit["message"]["seq"])]
                for hit in response.json()["results"]
            ]
        )
    return rankings, latencies


def alias_ablations(aliases, client, questions, positions, mode) -> dict[str, list[list[str]]]:
    """Rankings with learned aliases switched off, and with the vector side embedding the
    question as asked (aliases on the keyword side only)."""
    out = {}
    expansions, with_speakers = aliases.expansions, aliases.SEMANTIC_WITH_SPEAKERS
    try:
        aliases.SEMANTIC_WITH_SPEAKERS = not with_speakers
        name = "aliases kw" if with_speakers else "aliases +sem"
        out[name], _ = system_rankings(client, questions, positions, mode)
        aliases.expansions = lambda access, text: ()
        out["no aliases"], _ = system_rankings(client, questions, positions, mode)
    finally:
        aliases.expansions, aliases.SEMANTIC_WITH_SPEAKERS = expansions, with_speakers
    return out


def baseline_rankings(conversation, questions) -> dict[str, list[list[str]]]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    from sessions.embedding.torch_runtime import embed

    turns = [t for _, _, ts in sessions_of(conversation) for t in ts]
    ids = [t["dia_id"] for t in turns]
    docs = [f"{t['speaker']}: {turn_text(t)}" for t in turns]
    bm25 = BM25Okapi([re.findall(r"\w+", d.lower()) for d in docs])
    stemmed_questions = english_lexemes([qa["question"] for qa in questions])
    bm25_english = BM25Okapi(english_lexemes(docs))
    vectors = embed(docs)
    query_vectors = embed([qa["question"] for qa in questions])
    out = {"bm25": [], "bm25-en": [], "dense": []}
    for qa, stemmed, qv in zip(questions, stemmed_questions, query_vectors, strict=True):
        scores = bm25.get_scores(re.findall(r"\w+", qa["question"].lower()))
        out["bm25"].append([ids[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]])
        scores = bm25_english.get_scores(stemmed)
        out["bm25-en"].append([ids[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]])
        out["dense"].append([ids[i] for i in np.argsort(-(vectors @ qv), kind="stable")[:DEPTH]])
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


def context_recall(client, questions, texts: dict[str, str], budget: int):
    recalls, tokens = [], []
    for qa in questions:
        response = client.post(
            "/api/v1/context",
            {"query": qa["question"], "max_tokens": budget, "max_sessions": 10, "min_relevance": 0},
            format="json",
        )
        body = response.json()
        found = sum(texts[g].strip() in body["markdown"] for g in qa["gold"])
        recalls.append(found / len(qa["gold"]))
        tokens.append(body["tokens"])
    return recalls, tokens


def table(title: str, results: dict[str, dict[str, list[dict]]]) -> None:
    print(f"\n{title}")
    header = "system        part     n     R@5   R@10  R@20  S@1   S@3   | R@10 by category"
    print(header)
    print("-" * len(header))
    for system, parts in results.items():
        for part, rows in parts.items():
            s = summarise(rows)
            if not s:
                continue
            by_cat = "  ".join(
                f"{name} {summarise([r for r in rows if r['category'] == c]).get('turn@10', 0):.2f}"
                for c, name in CATEGORIES.items()
            )
            print(
                f"{system:<13} {part:<8} {len(rows):<5} {s['turn@5']:.3f} {s['turn@10']:.3f} "
                f"{s['turn@20']:.3f} {s['session@1']:.3f} {s['session@3']:.3f} | {by_cat}"
            )


def key_configs(args) -> list[tuple[str, float, float]]:
    """(system name, weight, least relevance) for each memory-key configuration asked."""
    if not args.memory_key_configs:
        from memories.retrieve.keys import KEY_MIN_RELEVANCE
        from search.ranking import EXTRA_WEIGHT

        return [("+memories", EXTRA_WEIGHT, KEY_MIN_RELEVANCE)]
    found = []
    for pair in args.memory_key_configs.split(","):
        weight, least = (float(x) for x in pair.split(":"))
        found.append((f"+m w{weight:g} r{least:g}", weight, least))
    return found


def parse_range(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(x) for x in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", default="0-9", help="e.g. 0-9, 0-4 or 1,3")
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"])
    parser.add_argument("--no-context", action="store_true", help="skip the context recall")
    parser.add_argument(
        "--large-scope-paths",
        action="store_true",
        help="search every conversation the way scopes too big for exact ranking are "
        "searched (pooled keyword ranking on estimated word statistics, quantized vector "
        "candidates), to measure what those approximations cost",
    )
    parser.add_argument(
        "--memory-keys",
        action="store_true",
        help="extract memories and also rank with memories as extra keys (+memories)",
    )
    parser.add_argument(
        "--compare-aliases",
        action="store_true",
        help="also rank without learned aliases, and with them on the keyword side only",
    )
    parser.add_argument(
        "--renamed-speakers",
        action="store_true",
        help="display names become handles; text and questions keep the names (implies "
        "--compare-aliases)",
    )
    parser.add_argument(
        "--memory-key-configs",
        default="",
        help="with --memory-keys: weight:min_relevance pairs to rank with, e.g. 1:0,0.5:0.3",
    )
    args = parser.parse_args()

    with django_on_embedded_servers():
        from django.db import connection

        from memories.retrieve import keys
        from search import aliases, keyword, semantic
        from search import ranking as ranking_module

        if args.large_scope_paths:
            keyword.EXACT_STATS_MAX_DOCS = 0
            semantic.EXACT_SCAN_MAX_CHUNKS = 0
        data = load_locomo()
        if args.renamed_speakers:
            data = [with_handles(c, i) for i, c in enumerate(data)]
        compare_aliases = args.compare_aliases or args.renamed_speakers
        results: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        latencies, context_rows, skipped = [], defaultdict(list), []
        pipeline_seconds = 0.0
        ingested = {}
        for index in parse_range(args.conversations):
            ingested[index] = ingest(index, data[index])
            pipeline_seconds += run_pipeline()
        if args.memory_keys:
            extraction_seconds, memories = run_extraction()
            print(f"memories extracted: {memories} in {extraction_seconds:.0f} s", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # the word statistics the pooled ranking estimates from
        for index, (project, client) in ingested.items():
            conversation = data[index]
            turns = {
                t["dia_id"]: turn_text(t) for _, _, ts in sessions_of(conversation) for t in ts
            }
            questions = questions_of(conversation, set(turns), skipped)
            positions = dia_ids_by_position(project)
            part = "tune" if index in TUNE else "holdout"
            rankings = {}
            rankings["memoryapp"], times = system_rankings(client, questions, positions, args.mode)
            latencies += times
            for name, weight, least in key_configs(args) if args.memory_keys else []:
                ranking_module.EXTRA_WEIGHT, keys.KEY_MIN_RELEVANCE = weight, least
                rankings[name], _ = system_rankings(
                    client, questions, positions, args.mode, memory_keys=True
                )
            if compare_aliases:
                rankings.update(alias_ablations(aliases, client, questions, positions, args.mode))
                print(f"conversation {index} aliases: {learned_aliases(project)}", flush=True)
            rankings.update(baseline_rankings(conversation, questions))
            for system, ranked in rankings.items():
                for qa, ranking in zip(questions, ranked, strict=True):
                    row = {**recall(ranking, qa["gold"]), "category": qa["category"]}
                    results[system][part].append(row)
                    results[system]["all"].append(row)
            if not args.no_context:
                for budget in (1000, 4000):
                    recalls, tokens = context_recall(client, questions, turns, budget)
                    context_rows[budget] += list(zip(recalls, tokens, strict=True))
            latest = summarise(results["memoryapp"][part][-len(questions) :])
            print(
                f"conversation {index}: {len(turns)} turns, {len(questions)} questions, "
                f"turn R@10 {latest['turn@10']:.3f}",
                flush=True,
            )

        paths = " (large-scope paths)" if args.large_scope_paths else ""
        table(f"LoCoMo, categories 1-4, mode {args.mode}{paths}", results)
        print(
            f"\nsearch latency through the API: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {percentile(latencies, 0.95):.1f} ms over {len(latencies)} queries"
        )
        print(f"pipeline (embed + summarise) {pipeline_seconds:.0f} s")
        for budget, rows in context_rows.items():
            print(
                f"context at {budget:>5} tokens: evidence recall "
                f"{statistics.fmean(r for r, _ in rows):.3f}, tokens per query "
                f"mean {statistics.fmean(t for _, t in rows):.0f} (max {max(t for _, t in rows)})"
            )
        if skipped:
            print(f"evidence ids that resolve to no turn (skipped): {', '.join(skipped)}")


if __name__ == "__main__":
    main()
