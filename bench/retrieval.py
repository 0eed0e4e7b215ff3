"""Retrieval quality on three sets in one run, through the real capture path, pipeline and
search API, with BM25 and dense baselines over the same texts in the same run.

- **locomo**: every LoCoMo conversation its own team + project, captured with
  ``POST /api/v1/sessions`` (as ``bench/locomo.py``); questions of categories 1-4. Turn
  recall@1/@5/@10/@20 and session recall@1/@3 per category, for conversations 0-4 (TUNE:
  what any tuning looks at), 5-9 (HOLDOUT: the figure to quote) and all; the context
  endpoint's evidence recall at 1,000 and 4,000 tokens.
- **longmemeval**: the LongMemEval-derived sample, each haystack its own team + project, one
  session per haystack session, its turns as user/assistant messages. Session recall@1/@3/@5
  of ``answer_session_ids`` (the gold among the top distinct sessions of the ranked
  messages), and turn recall of the ``has_answer`` turns for each haystack's original
  question (``bench/retrieval_sets.py`` says which that is).
- **coding**: every transcript of ``shared/samples`` imported with ``POST /api/v1/import``
  into one team + project, as the CLI uploads them; the questions of
  ``bench/coding_questions.yaml``, whose gold (a substring) must match exactly one stored
  message of the question's source file. Message recall@1/@5/@10 and MRR per category.

Asked for by name only (``--sets locomo-chat,coding-dev``): **locomo-chat**, LoCoMo as people
chat (``bench/retrieval_sets.py``): each turn sent sentence by sentence, handles for names, the
second speaker in lower case; LoCoMo's questions, a turn found when any of its messages is;
no context recall. **coding-dev** (held out, issue 39): as **coding**, on the eight real
coding-agent transcripts of ``shared/data/memory_dev/transcripts`` imported into their own
team + project, with the questions of ``bench/coding_questions_dev.yaml``; no ranking was
tuned on them.

Baselines rank the same messages (LoCoMo: "<speaker>: <text>"; the others: the content):
BM25, BM25 over PostgreSQL's English lexemes (``bm25-en``) and dense-only exact cosine with the
product's model over each message's first 256 word pieces (the product embeds long messages
in several chunks). A session is ranked by its best message, for every system alike.

    .venv/bin/python bench/retrieval.py [--sets locomo,longmemeval,coding,coding-dev]
        [--conversations 0-9] [--keep DIR] [--json FILE] [--no-baselines] [--no-context]

``--keep DIR`` keeps the ingested, embedded database in DIR: a second run with the same DIR
asks the questions again without ingesting (delete DIR after changing capture or the
pipeline; ranking changes need no new ingestion).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import retrieval_api as api
from bench.harness import django_on_embedded_servers, percentile
from bench.retrieval_scoring import baseline_rankings, score, table
from bench.retrieval_sets import (
    CODING_DEV_QUESTIONS,
    CODING_QUESTIONS,
    DEV_TRANSCRIPTS,
    SAMPLES,
    Question,
    Unit,
    load_coding_questions,
    locomo_chat_units,
    locomo_units,
    longmemeval_units,
    sample_transcripts,
    session_key,
    turn_of,
)

SETS = ("locomo", "longmemeval", "coding")
# Asked for by name only (--sets locomo-chat,coding-dev): LoCoMo as people chat
# (retrieval_sets.py); the held-out coding questions on the memory_dev transcripts.
EXTRA_SETS = ("locomo-chat", "coding-dev")
MARKER = "retrieval-ingested.json"
CONTEXT_BUDGETS = (1000, 4000)


class Ingested:
    """What a kept folder already holds (units ingested and embedded), in ``MARKER``."""

    def __init__(self, folder: Path | None):
        self.path = folder / MARKER if folder else None
        self.done = json.loads(self.path.read_text()) if self.path and self.path.exists() else {}

    def get(self, name: str):
        return self.done.get(name)

    def add(self, name: str, value=True) -> None:
        """Record ``name`` as done, keeping what another process sharing the folder (``bench/
        ltr.py`` exports sets in two at once) recorded since this one read the file."""
        self.done[name] = value
        if self.path:
            on_disk = json.loads(self.path.read_text()) if self.path.exists() else {}
            self.done = on_disk | self.done
            self.path.write_text(json.dumps(self.done, indent=1))


def rows_by_system_part():
    return defaultdict(lambda: defaultdict(list))


def add_rows(rows, rankings, questions: list[Question], parts: list[str], **how) -> None:
    for system, ranked in rankings.items():
        for question, ranking in zip(questions, ranked, strict=True):
            row = {**score(ranking, question, **how), "category": question.category}
            row["id"] = question.id
            for part in parts:
                rows[system][part].append(row)


def latency(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(values),
        "p95_ms": percentile(values, 0.95),
        "queries": len(values),
    }


class CapturedSet:
    """A set of units captured with ``POST /api/v1/sessions`` (LoCoMo, LongMemEval)."""

    name = ""
    turn_ks: tuple[int, ...] = ()
    session_ks: tuple[int, ...] = ()
    headline_parts = ("all",)

    def __init__(self, units: list[Unit]):
        self.units = units
        self.clients = []

    def prepare(self, ingested: Ingested) -> float:
        seconds = 0.0
        for unit in self.units:
            project, client = api.project_client(unit.team, unit.project)
            if not ingested.get(unit.team):
                api.capture(client, unit.sessions)
                seconds += api.run_pipeline()
                ingested.add(unit.team)
            self.clients.append((project, client))
        return seconds

    @property
    def client(self):
        return self.clients[0][1]

    def metrics(self) -> list[str]:
        return [f"turn@{k}" for k in self.turn_ks] + [f"session@{k}" for k in self.session_ks]

    def message_key(self, client_id: str) -> str:
        """The key a ranked message counts as (its turn's, where a turn is several)."""
        return client_id

    def evaluate(self, args) -> dict:
        rows, latencies, extra = rows_by_system_part(), [], {}
        for unit, (project, client) in zip(self.units, self.clients, strict=True):
            texts = [q.text for q in unit.questions]
            rankings = {}
            keys = {p: self.message_key(k) for p, k in api.client_ids_by_position(project).items()}
            rankings["memoryapp"], times = api.search_rankings(client, texts, keys, mode=args.mode)
            latencies += times
            if not args.no_baselines:
                for system, ranked in baseline_rankings(unit.docs, texts).items():
                    rankings[system] = [[self.message_key(k) for k in r] for r in ranked]
            add_rows(
                rows,
                rankings,
                unit.questions,
                [unit.part, "all"],
                turn_ks=self.turn_ks,
                session_ks=self.session_ks,
            )
            self.after_unit(args, unit, client, extra)
            print(f"{self.name}: {unit.team} asked ({len(unit.questions)} questions)", flush=True)
        return {"rows": rows, "latency": latency(latencies), **self.finish(extra)}

    def after_unit(self, args, unit: Unit, client, extra: dict) -> None:
        pass

    def finish(self, extra: dict) -> dict:
        return {}


class LocomoSet(CapturedSet):
    name = "locomo"
    turn_ks, session_ks = (1, 5, 10, 20), (1, 3)
    headline_parts = ("tune", "holdout", "all")
    units_of = staticmethod(locomo_units)
    context_recall = True

    def __init__(self, indices: list[int]):
        super().__init__(list(self.units_of(indices).values()))

    def after_unit(self, args, unit: Unit, client, extra: dict) -> None:
        extra.setdefault("skipped", []).extend(unit.skipped)
        if args.no_context or not self.context_recall:
            return
        for budget in CONTEXT_BUDGETS:
            recalls, tokens = api.context_recall(
                client, unit.questions, unit.texts, budget, args.context_sessions
            )
            extra.setdefault(budget, []).extend(zip(recalls, tokens, strict=True))

    def finish(self, extra: dict) -> dict:
        context = {
            str(budget): {
                "evidence_recall": statistics.fmean(r for r, _ in extra[budget]),
                "tokens_mean": statistics.fmean(t for _, t in extra[budget]),
                "tokens_max": max(t for _, t in extra[budget]),
            }
            for budget in CONTEXT_BUDGETS
            if budget in extra
        }
        return {"context": context, "skipped_evidence": extra.get("skipped", [])}


class LocomoChatSet(LocomoSet):
    """LoCoMo as people chat (``retrieval_sets.locomo_chat_units``). No context recall: a
    gold turn's text is split over several messages."""

    name = "locomo-chat"
    units_of = staticmethod(locomo_chat_units)
    context_recall = False

    def message_key(self, client_id: str) -> str:
        return turn_of(client_id)


class LongMemEvalSet(CapturedSet):
    name = "longmemeval"
    turn_ks, session_ks = (1, 5, 10), (1, 3, 5)

    def __init__(self):
        super().__init__(longmemeval_units())


class CodingSet:
    """The sample transcripts imported into one project; the coding question set."""

    name = "coding"
    team = project_slug = "coding"
    root = SAMPLES  # the transcripts imported, and what a question's source is relative to
    ks = (1, 5, 10)
    headline_parts = ("all",)

    def __init__(self, questions_file: Path):
        self.questions_file = questions_file
        self.raw_questions = load_coding_questions(questions_file, self.root)

    def prepare(self, ingested: Ingested) -> float:
        self.project, self.client = api.project_client(self.team, self.project_slug)
        self.sources = ingested.get(self.team)
        if self.sources:
            return 0.0
        self.sources = {
            str(path.relative_to(self.root)): api.import_file(self.client, path)
            for path in sample_transcripts(self.root)
        }
        seconds = api.run_pipeline()
        ingested.add(self.team, self.sources)
        return seconds

    def metrics(self) -> list[str]:
        return [f"msg@{k}" for k in self.ks] + ["mrr"]

    def resolve(self, messages: dict[str, str]) -> list[Question]:
        """Each question with its gold message keys: the one stored message of its source
        file that contains each gold substring (anything else stops the run)."""
        questions, problems = [], []
        for q in self.raw_questions:
            sessions = set(self.sources.get(q["source"], []))
            if not sessions:
                problems.append(f"{q['id']}: no session was imported from {q['source']}")
                continue
            gold = []
            for text in q["gold"]:
                found = [
                    key
                    for key, content in messages.items()
                    if session_key(key) in sessions and text in content
                ]
                if len(found) != 1:
                    problems.append(
                        f"{q['id']}: {text!r} is in {len(found)} messages of {q['source']}"
                    )
                gold += found
            questions.append(
                Question(
                    id=q["id"],
                    text=q["question"],
                    category=q["category"],
                    gold=gold,
                    gold_sessions=sorted({session_key(k) for k in gold}),
                )
            )
        if problems:
            raise SystemExit(
                f"{self.questions_file}: gold that is not exactly one message:\n  "
                + "\n  ".join(problems)
            )
        return questions

    def evaluate(self, args) -> dict:
        messages = api.stored_messages(self.project)
        questions = self.resolve(messages)
        texts = [q.text for q in questions]
        rankings = {}
        rankings["memoryapp"], latencies = api.search_rankings(self.client, texts, mode=args.mode)
        if not args.no_baselines:
            rankings.update(baseline_rankings(messages, texts))
        rows = rows_by_system_part()
        add_rows(rows, rankings, questions, ["all"], turn_ks=self.ks, mrr=True, turn_name="msg")
        return {"rows": rows, "latency": latency(latencies), "messages": len(messages)}


class CodingDevSet(CodingSet):
    """Held out (issue 39): the memory_dev coding-agent transcripts imported into their own
    project; the questions of ``bench/coding_questions_dev.yaml``."""

    name = "coding-dev"
    team = project_slug = "coding-dev"
    root = DEV_TRANSCRIPTS


def parse_range(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(x) for x in text.split(",")]


def report(benches: list, results: dict) -> None:
    for bench in benches:
        result = results[bench.name]
        rows = result.pop("rows")
        result["lines"] = table(f"{bench.name} (mode {result['mode']})", rows, bench.metrics())
        if not isinstance(bench, CodingSet):  # the coding sets' failures are not for tuning to
            result["questions"] = {system: parts["all"] for system, parts in rows.items()}
        lat = result["latency"]
        print(
            f"{bench.name}: search latency through the API p50 {lat['p50_ms']:.1f} ms, "
            f"p95 {lat['p95_ms']:.1f} ms over {lat['queries']} queries; "
            f"ingest + pipeline {result['ingest_s']:.0f} s; load average "
            f"{result['loadavg'][0]:.1f} → {result['loadavg'][1]:.1f} ({os.cpu_count()} cores)"
        )
        for budget, context in result.get("context", {}).items():
            print(
                f"{bench.name}: context at {budget:>5} tokens: evidence recall "
                f"{context['evidence_recall']:.3f}, tokens per query mean "
                f"{context['tokens_mean']:.0f} (max {context['tokens_max']})"
            )
        if result.get("skipped_evidence"):
            print(f"evidence ids that resolve to no turn (skipped): {result['skipped_evidence']}")
    print("\nOverall")
    for bench in benches:
        metrics = bench.metrics()
        for line in results[bench.name]["lines"]:
            if line["category"] == "all" and line["part"] in bench.headline_parts:
                cells = "  ".join(f"{m} {line[m]:.3f}" for m in metrics if m in line)
                print(f"{bench.name:<12} {line['system']:<10} {line['part']:<8} {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sets", default=",".join(SETS), help="any of " + ",".join(SETS + EXTRA_SETS)
    )
    parser.add_argument("--conversations", default="0-9", help="LoCoMo's: 0-9, 0-4 or 1,3")
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"])
    parser.add_argument("--keep", type=Path, help="database folder to reuse across runs")
    parser.add_argument("--json", type=Path, help="write the results here as JSON")
    parser.add_argument("--no-baselines", action="store_true", help="memoryapp only")
    parser.add_argument("--no-context", action="store_true", help="skip LoCoMo's context recall")
    parser.add_argument(
        "--context-sessions",
        type=int,
        default=api.CONTEXT_SESSIONS,
        help="max_sessions asked of the context endpoint (1-20)",
    )
    parser.add_argument(
        "--coding-questions", type=Path, default=CODING_QUESTIONS, help="the coding question set"
    )
    parser.add_argument(
        "--coding-dev-questions",
        type=Path,
        default=CODING_DEV_QUESTIONS,
        help="the held-out coding question set (coding-dev)",
    )
    args = parser.parse_args()
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = set(names) - set(SETS + EXTRA_SETS)
    if unknown:
        parser.error(f"unknown sets {sorted(unknown)}; known: {', '.join(SETS + EXTRA_SETS)}")
    if args.keep:
        args.keep = args.keep.resolve()
        args.keep.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    with django_on_embedded_servers(args.keep) as folder:
        for noisy in ("sessions.capture", "sessions.enrich.session"):  # a line per session
            logging.getLogger(noisy).setLevel(logging.WARNING)
        makers = {
            "locomo": lambda: LocomoSet(parse_range(args.conversations)),
            "locomo-chat": lambda: LocomoChatSet(parse_range(args.conversations)),
            "longmemeval": LongMemEvalSet,
            "coding": lambda: CodingSet(args.coding_questions),
            "coding-dev": lambda: CodingDevSet(args.coding_dev_questions),
        }
        benches = [makers[name]() for name in names]  # every file read before any ingestion
        ingested = Ingested(args.keep)
        ingest_seconds = {}
        for bench in benches:
            began = time.perf_counter()
            pipeline_seconds = bench.prepare(ingested)
            ingest_seconds[bench.name] = time.perf_counter() - began
            print(
                f"{bench.name}: ready in {ingest_seconds[bench.name]:.0f} s "
                f"(pipeline {pipeline_seconds:.0f} s)",
                flush=True,
            )
        api.analyze()
        # The first search of a process loads the query encoder: not a latency to report.
        api.search_rankings(benches[0].client, ["warm-up"])
        results = {}
        for bench in benches:
            load_before = os.getloadavg()[0]
            results[bench.name] = bench.evaluate(args) | {
                "mode": args.mode,
                "ingest_s": ingest_seconds[bench.name],
                "loadavg": [load_before, os.getloadavg()[0]],
            }
        report(benches, results)
    seconds = time.perf_counter() - started
    print(f"\nrun time {seconds:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "command": " ".join(sys.argv),
                    "date": datetime.now(UTC).isoformat(timespec="seconds"),
                    "run_s": seconds,
                    "sets": results,
                },
                indent=1,
            )
        )
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
