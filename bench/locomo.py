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
``--memory-key-configs 0.2:0,0.5:0.3`` ranks once per (``tuning.EXTRA_LIFT``, the share of
what it lacks by which a message a memory points to is lifted; least relevance of a memory
used as a key) instead. (Before the fusion was removed, the first number was the memory
keys' weight in the fusion, ``EXTRA_WEIGHT``.)

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
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import retrieval_api as api
from bench.harness import django_on_embedded_servers, percentile
from bench.retrieval_scoring import baseline_rankings, score, summarise
from bench.retrieval_sets import (
    LOCOMO_CATEGORIES as CATEGORIES,
)
from bench.retrieval_sets import (  # noqa: F401 (other benches import them from here)
    load_locomo,
    locomo_units,
    sessions_of,
    turn_text,
)

TURN_KS, SESSION_KS = (5, 10, 20), (1, 3)
METRICS = [f"turn@{k}" for k in TURN_KS] + [f"session@{k}" for k in SESSION_KS]


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


def alias_ablations(aliases, client, questions, positions, mode) -> dict[str, list[list[str]]]:
    """Rankings with learned aliases switched off, and with the vector side embedding the
    question as asked (aliases on the keyword side only)."""
    out = {}
    expansions, with_speakers = aliases.expansions, aliases.SEMANTIC_WITH_SPEAKERS
    try:
        aliases.SEMANTIC_WITH_SPEAKERS = not with_speakers
        name = "aliases kw" if with_speakers else "aliases +sem"
        out[name], _ = api.search_rankings(client, questions, positions, mode=mode)
        aliases.expansions = lambda access, text: ()
        out["no aliases"], _ = api.search_rankings(client, questions, positions, mode=mode)
    finally:
        aliases.expansions, aliases.SEMANTIC_WITH_SPEAKERS = expansions, with_speakers
    return out


def table(title: str, results: dict[str, dict[str, list[dict]]]) -> None:
    print(f"\n{title}")
    header = "system        part     n     R@5   R@10  R@20  S@1   S@3   | R@10 by category"
    print(header)
    print("-" * len(header))
    for system, parts in results.items():
        for part, rows in parts.items():
            s = summarise(rows, METRICS)
            if not s:
                continue
            by_category = {
                name: summarise([r for r in rows if r["category"] == name], METRICS)
                for name in CATEGORIES.values()
            }
            by_cat = "  ".join(f"{n} {c.get('turn@10', 0):.2f}" for n, c in by_category.items())
            print(
                f"{system:<13} {part:<8} {len(rows):<5} {s['turn@5']:.3f} {s['turn@10']:.3f} "
                f"{s['turn@20']:.3f} {s['session@1']:.3f} {s['session@3']:.3f} | {by_cat}"
            )


def key_configs(args) -> list[tuple[str, float, float]]:
    """(system name, lift, least relevance) for each memory-key configuration asked."""
    if not args.memory_key_configs:
        from memories.retrieve.keys import KEY_MIN_RELEVANCE
        from search import tuning

        return [("+memories", tuning.EXTRA_LIFT, KEY_MIN_RELEVANCE)]
    found = []
    for pair in args.memory_key_configs.split(","):
        lift, least = (float(x) for x in pair.split(":"))
        found.append((f"+m l{lift:g} r{least:g}", lift, least))
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
        "--memory-key-configs",
        default="",
        help="with --memory-keys: EXTRA_LIFT:min_relevance pairs to rank with, e.g. 0.2:0,0.5:0.3",
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
    args = parser.parse_args()

    with django_on_embedded_servers():
        from memories.retrieve import keys
        from search import aliases, keyword, tuning

        if args.large_scope_paths:
            keyword.EXACT_STATS_MAX_DOCS = 0
            tuning.EXACT_SCAN_MAX_CHUNKS = 0
        data = load_locomo()
        if args.renamed_speakers:
            data = [with_handles(c, i) for i, c in enumerate(data)]
        compare_aliases = args.compare_aliases or args.renamed_speakers
        units = locomo_units(parse_range(args.conversations), data)
        results: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        latencies, context_rows, skipped = [], defaultdict(list), []
        pipeline_seconds = 0.0
        ingested = {}
        for index, unit in units.items():
            ingested[index] = api.project_client(unit.team, unit.project)
            api.capture(ingested[index][1], unit.sessions)
            pipeline_seconds += api.run_pipeline()
        if args.memory_keys:
            extraction_seconds, memories = api.run_extraction()
            print(f"memories extracted: {memories} in {extraction_seconds:.0f} s", flush=True)
        api.analyze()
        for index, (project, client) in ingested.items():
            unit = units[index]
            skipped += unit.skipped
            questions = [q.text for q in unit.questions]
            positions = api.client_ids_by_position(project)
            rankings = {}
            rankings["memoryapp"], times = api.search_rankings(
                client, questions, positions, mode=args.mode
            )
            latencies += times
            shipped = tuning.EXTRA_LIFT, keys.KEY_MIN_RELEVANCE
            for name, lift, least in key_configs(args) if args.memory_keys else []:
                tuning.EXTRA_LIFT, keys.KEY_MIN_RELEVANCE = lift, least
                rankings[name], _ = api.search_rankings(
                    client, questions, positions, mode=args.mode, memory_keys=True
                )
            tuning.EXTRA_LIFT, keys.KEY_MIN_RELEVANCE = shipped
            if compare_aliases:
                rankings.update(alias_ablations(aliases, client, questions, positions, args.mode))
                print(f"conversation {index} aliases: {learned_aliases(project)}", flush=True)
            rankings.update(baseline_rankings(unit.docs, questions))
            for system, ranked in rankings.items():
                for question, ranking in zip(unit.questions, ranked, strict=True):
                    row = score(ranking, question, TURN_KS, SESSION_KS)
                    row["category"] = question.category
                    results[system][unit.part].append(row)
                    results[system]["all"].append(row)
            if not args.no_context:
                for budget in (1000, 4000):
                    recalls, tokens = api.context_recall(client, unit.questions, unit.texts, budget)
                    context_rows[budget] += list(zip(recalls, tokens, strict=True))
            latest = summarise(results["memoryapp"][unit.part][-len(questions) :], METRICS)
            print(
                f"conversation {index}: {len(unit.texts)} turns, {len(questions)} questions, "
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
