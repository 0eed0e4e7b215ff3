"""Ranking that learns (issue 39): export the candidate pools of real searches, train the
linear ranker of ``search/learned.py`` on them, validate it against the hand-set ranking on
the same pools, and (with ``--write``) ship it.

**export** ingests the sets of ``bench/retrieval.py`` (LoCoMo, the LongMemEval sample, the
coding question set, locomo-chat; the held-out coding-dev set only when named in ``--sets``;
into ``--keep DIR``, reused when already there), asks
each question through ``GET /api/v1/search`` as that bench does (hybrid, 20 results) and
keeps, per question, every candidate search scored (the raw fields ``search/learned.py``
makes its features from), the authors the question names, its intent, the hand-set order
and relevance, and which candidates are gold. Questions without gold messages (LongMemEval's
derived questions) are left out.

**train** reads the pools and prints the validation table: per set and category, R@1, R@5,
R@10 and MRR of the hand-set order ("today") and of the model, under two held-out schemes:
leave-one-conversation-out (``logo``: LoCoMo's conversation i and locomo-chat's i are one
group, a LongMemEval haystack, a coding transcript) and leave-one-set-out (``loso``: trained
on the other sets only; LoCoMo and locomo-chat are left out together). Then the weights
(standardised, so their size is the feature's importance). With ``--write`` it trains on
everything and writes ``search/ranker/ranker-v1.json``.

    .venv/bin/python bench/ltr.py export --keep DIR [--sets ...] [--out FILE]
    .venv/bin/python bench/ltr.py train [--pools FILE] [--write]
    .venv/bin/python bench/ltr.py all --keep DIR [--write]      # both, one command

The pools are written to ``--out`` (default ``/tmp/ltr-pools.json``), not to the repository.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

POOLS = Path("/tmp/ltr-pools.json")
KS = (1, 5, 10)
RAW = (
    "message_id",
    "session_id",
    "similarity",
    "keyword_score",
    "coverage",
    "rank_vector",
    "rank_keyword",
    "kind",
    "author",
    "first_person",
    "question",
    "says_when",
    "role",
    "length",
)
# Negatives per training question: the hand-set order's first HARD ones (what the model
# must learn to put below the gold) and EASY more drawn at random.
HARD, EASY = 40, 20


# --- export --------------------------------------------------------------------------


def spy_pools():
    """Wrap ``search.service.order`` to keep each search's pool; returns (pools, undo)."""
    from search import learned, service

    seen: list[dict] = []
    original = service.order

    def spy(candidates, mode, intent, query, aliased, lifecycles, *, recency=False):
        raw = [{f: getattr(c, f) for f in RAW} for c in candidates]
        named = sorted(learned.named_authors(candidates, query, aliased))
        ranked = original(
            [copy.copy(c) for c in candidates],
            mode,
            intent,
            query,
            aliased,
            lifecycles,
            recency=recency,
        )
        seen.append(
            {
                "candidates": raw,
                "named": named,
                "intent": {k: v for k, v in dataclasses.asdict(intent).items() if k != "quoted"},
                "today": [c.message_id for c in ranked],
                "today_relevance": {str(c.message_id): c.relevance for c in ranked},
            }
        )
        return ranked

    service.order = spy

    def undo():
        service.order = original

    return seen, undo


def ask(client, text: str, seen: list[dict]) -> dict:
    from bench.retrieval_api import DEPTH

    seen.clear()
    response = client.get("/api/v1/search", {"q": text, "limit": DEPTH, "mode": "hybrid"})
    if response.status_code != 200:
        raise SystemExit(f"search failed: {response.status_code} {response.content[:300]}")
    return seen[-1]


def group_of(set_name: str, unit_team: str) -> str:
    """LoCoMo's conversation i and locomo-chat's are one group (the same conversation)."""
    if set_name in ("locomo", "locomo-chat"):
        return "locomo-" + unit_team.rsplit("-", 1)[1]
    return unit_team


def export(args) -> list[dict]:
    from bench.harness import django_on_embedded_servers
    from bench.retrieval import (
        CodingDevSet,
        CodingSet,
        Ingested,
        LocomoChatSet,
        LocomoSet,
        LongMemEvalSet,
        parse_range,
    )
    from bench.retrieval_api import analyze, stored_messages
    from bench.retrieval_sets import CODING_DEV_QUESTIONS, CODING_QUESTIONS

    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    rows: list[dict] = []
    args.keep.mkdir(parents=True, exist_ok=True)
    with django_on_embedded_servers(args.keep.resolve()):
        from sessions.models import Message

        makers = {
            "locomo": lambda: LocomoSet(parse_range(args.conversations)),
            "locomo-chat": lambda: LocomoChatSet(parse_range(args.conversations)),
            "longmemeval": LongMemEvalSet,
            "coding": lambda: CodingSet(CODING_QUESTIONS),
            "coding-dev": lambda: CodingDevSet(CODING_DEV_QUESTIONS),
        }
        benches = [makers[name]() for name in names]
        ingested = Ingested(args.keep.resolve())
        for bench in benches:
            bench.prepare(ingested)
            print(f"{bench.name}: ready", flush=True)
        analyze()
        seen, undo = spy_pools()
        try:
            for bench in benches:
                if isinstance(bench, CodingSet):
                    messages = stored_messages(bench.project)
                    questions = bench.resolve(messages)
                    ids = Message.objects.filter(session__project=bench.project).values_list(
                        "id", "session__public_id", "seq"
                    )
                    keys = {i: f"{sid}:{seq}" for i, sid, seq in ids}
                    raw = {q["id"]: q["source"] for q in bench.raw_questions}
                    group = f"{bench.name}:"  # "coding:<source>" as before; "coding-dev:<source>"
                    units = [(group + raw[q.id], bench.client, keys, [q]) for q in questions]
                else:
                    units = []
                    for unit, (project, client) in zip(bench.units, bench.clients, strict=True):
                        ids = Message.objects.filter(session__project=project).values_list(
                            "id", "client_id"
                        )
                        keys = {i: bench.message_key(cid) for i, cid in ids}
                        questions = [q for q in unit.questions if q.gold]
                        units.append((group_of(bench.name, unit.team), client, keys, questions))
                for group, client, keys, questions in units:
                    for q in questions:
                        pool = ask(client, q.text, seen)
                        names_of = {
                            str(c["message_id"]): keys.get(c["message_id"], "")
                            for c in pool["candidates"]
                        }
                        rows.append(
                            {
                                "set": bench.name,
                                "group": group,
                                "id": q.id,
                                "question": q.text,
                                "category": str(q.category),
                                "gold": sorted(set(q.gold)),
                                "keys": names_of,
                                **pool,
                            }
                        )
                print(f"{bench.name}: exported", flush=True)
        finally:
            undo()
    args.out.write_text(json.dumps(rows))
    print(f"{len(rows)} questions' pools written to {args.out}")
    return rows


# --- train and validate ----------------------------------------------------------------


@dataclasses.dataclass
class Pool:
    set: str
    group: str
    category: str
    ids: np.ndarray  # message ids, in the pool's order
    keys: list[str]  # each candidate's gold key
    gold: set[str]
    x: np.ndarray
    label: np.ndarray
    today: list[int]
    today_relevance: np.ndarray


def load_pools(paths: list[Path]) -> list[Pool]:
    from search import learned, ranking
    from search.query_intent import QueryIntent

    pools = []
    rows = [row for path in paths for row in json.loads(path.read_text())]
    for row in rows:
        candidates = [ranking.Candidate(**c) for c in row["candidates"]]
        if not candidates:
            continue
        intent = QueryIntent(**row["intent"])
        keys = [row["keys"][str(c.message_id)] for c in candidates]
        gold = set(row["gold"])
        pools.append(
            Pool(
                set=row["set"],
                group=row["group"],
                category=row["category"],
                ids=np.array([c.message_id for c in candidates]),
                keys=keys,
                gold=gold,
                x=learned.features(candidates, intent, set(row["named"])),
                label=np.array([k in gold for k in keys]),
                today=row["today"],
                today_relevance=np.array(
                    [row["today_relevance"][str(c.message_id)] for c in candidates]
                ),
            )
        )
    return pools


def measures(order_keys: list[str], gold: set[str]) -> dict[str, float]:
    """As bench/retrieval_scoring.score: recall of the gold keys in the first k, and MRR."""
    out = {f"R@{k}": len(gold & set(order_keys[:k])) / len(gold) for k in KS}
    first = next((i for i, key in enumerate(order_keys) if key in gold), None)
    out["MRR"] = 0.0 if first is None else 1 / (first + 1)
    return out


def model_order(pool: Pool, scores: np.ndarray) -> list[str]:
    order = np.lexsort((pool.ids, -scores))  # best first, ties by message id
    return [pool.keys[i] for i in order]


def today_order(pool: Pool) -> list[str]:
    key_of = dict(zip(pool.ids.tolist(), pool.keys, strict=True))
    return [key_of[i] for i in pool.today]


def pairs(pools: list[Pool], rng: np.random.Generator, balance: bool):
    """Pairwise differences (gold − other, and the reverse) with their weights: each
    question weighs the same, and with ``balance`` each set weighs the same."""
    per_set = defaultdict(int)
    for p in pools:
        per_set[p.set] += 1
    xs, ys, ws = [], [], []
    for p in pools:
        pos = np.flatnonzero(p.label)
        neg = np.flatnonzero(~p.label)
        if not len(pos) or not len(neg):
            continue
        position = {m: i for i, m in enumerate(p.today)}
        ranked_neg = sorted(neg, key=lambda i: position.get(int(p.ids[i]), 10**6))
        hard = ranked_neg[:HARD]
        rest = ranked_neg[HARD:]
        easy = list(rng.choice(rest, size=min(EASY, len(rest)), replace=False)) if rest else []
        chosen = np.array(hard + easy)
        diff = (p.x[pos][:, None, :] - p.x[chosen][None, :, :]).reshape(-1, p.x.shape[1])
        weight = 1.0 / len(diff)
        if balance:
            weight *= len(pools) / (len(per_set) * per_set[p.set])
        xs += [diff, -diff]
        ys += [np.ones(len(diff)), np.zeros(len(diff))]
        ws += [np.full(len(diff), weight)] * 2
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def fit(pools: list[Pool], *, kind: str, c: float, balance: bool, seed: int = 0) -> dict:
    """A model trained on ``pools``: ``linear`` (standardisation and pairwise logistic
    weights) or ``trees`` (LightGBM's LambdaMART over the raw features)."""
    if kind == "trees":
        return fit_trees(pools, balance=balance, seed=seed)
    from sklearn.linear_model import LogisticRegression

    allx = np.vstack([p.x for p in pools])
    mean, scale = allx.mean(axis=0), allx.std(axis=0)
    scale[scale == 0] = 1.0
    standardised = [dataclasses.replace(p, x=(p.x - mean) / scale) for p in pools]
    x, y, w = pairs(standardised, np.random.default_rng(seed), balance)
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
    model.fit(x, y, sample_weight=w * len(w) / w.sum())
    return {"kind": "linear", "mean": mean, "scale": scale, "weights": model.coef_[0]}


# LambdaMART's settings: small trees, many of them, slowly, with rows and features sampled,
# so that one set's quirks are not learned whole (the sets disagree; see docs/benchmarks.md).
TREES = {
    "n_estimators": 300,
    "learning_rate": 0.03,
    "num_leaves": 7,
    "min_child_samples": 100,
    "subsample": 0.8,
    "subsample_freq": 1,
    "colsample_bytree": 0.8,
    "reg_lambda": 1.0,
    "lambdarank_truncation_level": 20,
}


def fit_trees(pools: list[Pool], *, balance: bool, seed: int = 0) -> dict:
    import lightgbm

    per_set = defaultdict(int)
    for p in pools:
        per_set[p.set] += 1
    weight = [len(pools) / (len(per_set) * per_set[p.set]) if balance else 1.0 for p in pools]
    ranker = lightgbm.LGBMRanker(
        objective="lambdarank", random_state=seed, n_jobs=2, verbose=-1, **TREES
    )
    ranker.fit(
        np.vstack([p.x for p in pools]),
        np.concatenate([p.label for p in pools]).astype(int),
        group=[len(p.x) for p in pools],
        sample_weight=np.concatenate(
            [np.full(len(p.x), w) for p, w in zip(pools, weight, strict=True)]
        ),
    )
    return {"kind": "trees", "booster": ranker.booster_}


def scores_of(spec: dict, x: np.ndarray) -> np.ndarray:
    if spec["kind"] == "trees":
        return spec["booster"].predict(x)
    return ((x - spec["mean"]) / spec["scale"]) @ spec["weights"]


def held_out(pools: list[Pool], scheme: str, **how) -> dict[int, np.ndarray | None]:
    """Each pool's model scores from a model that never saw its group (``logo``) or its
    set (``loso``)."""

    def fold_of(p: Pool) -> str:
        if scheme == "logo":
            return p.group
        return "locomo" if p.set in ("locomo", "locomo-chat") else p.set

    out = {}
    for fold in sorted({fold_of(p) for p in pools}):
        train = [p for p in pools if fold_of(p) != fold]
        spec = fit(train, **how) if train else None  # one fold only: nothing to learn from
        for i, p in enumerate(pools):
            if fold_of(p) == fold:
                out[i] = scores_of(spec, p.x) if spec else None  # left out of the table
    return out


def validation_table(
    pools: list[Pool], schemes: dict[str, dict[int, np.ndarray | None]]
) -> list[dict]:
    rows = defaultdict(list)
    for i, p in enumerate(pools):
        systems = {"today": today_order(p)}
        for scheme, scores in schemes.items():
            if scores[i] is not None:
                systems[f"model-{scheme}"] = model_order(p, scores[i])
        for system, order in systems.items():
            m = measures(order, p.gold)
            rows[(p.set, "all", system)].append(m)
            rows[(p.set, p.category, system)].append(m)
    lines = []
    header = f"{'set':<12} {'category':<26} {'system':<13} {'n':>5} " + " ".join(
        f"{m:>7}" for m in ("R@1", "R@5", "R@10", "MRR")
    )
    print(header)
    print("-" * len(header))
    for (name, category, system), ms in sorted(
        rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1], kv[0][2])
    ):
        means = {k: statistics.fmean(m[k] for m in ms) for k in ms[0]}
        lines.append({"set": name, "category": category, "system": system, "n": len(ms), **means})
        cells = " ".join(f"{means[k]:>7.3f}" for k in ("R@1", "R@5", "R@10", "MRR"))
        print(f"{name:<12} {category:<26} {system:<13} {len(ms):>5} {cells}")
    return lines


def verdict(lines: list[dict], system: str) -> list[str]:
    """Where ``system`` is below today (R@1 or R@10, a set's "all" line)."""
    by = {(line["set"], line["system"]): line for line in lines if line["category"] == "all"}
    worse = []
    for (name, which), line in sorted(by.items()):
        if which != system:
            continue
        today = by[(name, "today")]
        worse += [f"{name} {k}" for k in ("R@1", "R@10") if line[k] < today[k] - 1e-9]
    return worse


def relevance_map(spec: dict, pools: list[Pool]) -> dict[str, float]:
    """``a``, ``b`` so that ``1/(1 + e^−(a·score + b))`` tracks the hand-set relevance."""
    s = np.concatenate([scores_of(spec, p.x) for p in pools])
    r = np.clip(np.concatenate([p.today_relevance for p in pools]), 0.01, 0.99)
    a, b = np.polyfit(s, np.log(r / (1 - r)), 1)
    return {"a": float(a), "b": float(b)}


def ordering_cost(paths: list[Path], sample: int = 300) -> dict[str, dict[str, float]]:
    """Milliseconds per search of the ordering step (``search.service.order``) on exported
    pools, the hand-set score and lifts against the model (features + scores), p50 and p95:
    what the model adds to a search, without the noise of a whole search."""
    from django.test import override_settings

    from bench.harness import percentile
    from search import learned, ranking, service
    from search.query_intent import QueryIntent

    rows = [row for path in paths for row in json.loads(path.read_text())][:sample]
    learned.model()  # read once per process, as in search
    out = {}
    for name, on in (("today", False), ("model", True)):
        times = []
        with override_settings(SEARCH_LEARNED_RANKING=on):
            for row in rows:
                candidates = [ranking.Candidate(**c) for c in row["candidates"]]
                intent = QueryIntent(**row["intent"])
                started = time.perf_counter()
                service.order(candidates, "hybrid", intent, row["question"], set(), {})
                times.append((time.perf_counter() - started) * 1000)
        out[name] = {"p50": statistics.median(times), "p95": percentile(times, 0.95)}
    return out


def train(args) -> None:
    from search import learned

    started = time.perf_counter()
    pools = load_pools(args.pools)
    how = {"kind": args.kind, "c": args.c, "balance": not args.no_balance}
    print(
        f"{len(pools)} questions from {', '.join(map(str, args.pools))}; C={args.c}, sets weighed "
        f"{'alike' if how['balance'] else 'by their questions'}\n"
    )
    schemes = {scheme: held_out(pools, scheme, **how) for scheme in ("logo", "loso")}
    if args.shipped:
        # The model in the repository as it is: held out only on what it was not trained on
        # (its file's trained_on; coding-dev always).
        shipped = learned.model()
        schemes["shipped"] = {i: shipped.scores(p.x) for i, p in enumerate(pools)}
    lines = validation_table(pools, schemes)
    print()
    for scheme in schemes:
        if not any(line["system"] == f"model-{scheme}" for line in lines):
            print(f"{scheme}: not measured (every question is in one fold)")
            continue
        worse = verdict(lines, f"model-{scheme}")
        print(
            f"{scheme}: the model is at least as good as today on every set (R@1 and "
            f"R@10): {'yes' if not worse else 'no, worse on ' + ', '.join(worse)}"
        )
    spec = fit(pools, **how)
    print_importances(spec)
    print(f"\ntrained and validated in {time.perf_counter() - started:.0f} s")
    cost = ordering_cost(args.pools)
    print(
        "ordering a pool (search.service.order, in process): "
        + ", ".join(f"{k} p50 {v['p50']:.2f} ms p95 {v['p95']:.2f} ms" for k, v in cost.items())
    )
    if args.write:
        model = {
            "version": 1,
            "kind": "linear pairwise logistic ranker (bench/ltr.py)",
            "features": list(learned.FEATURES),
            "mean": spec["mean"].round(6).tolist(),
            "scale": spec["scale"].round(6).tolist(),
            "weights": spec["weights"].round(6).tolist(),
            "relevance": relevance_map(spec, pools),
            "trained_on": dict(sorted(_counts(pools).items())),
            "options": how,
            "validation": [
                {k: (round(v, 4) if isinstance(v, float) else v) for k, v in line.items()}
                for line in lines
                if line["category"] == "all"
            ],
        }
        learned.MODEL_FILE.parent.mkdir(exist_ok=True)
        learned.MODEL_FILE.write_text(json.dumps(model, indent=1) + "\n")
        print(f"written {learned.MODEL_FILE}")


def print_importances(spec: dict) -> None:
    from search import learned

    if spec["kind"] == "trees":
        gain = spec["booster"].feature_importance("gain")
        share = gain / gain.sum()
        print("\nimportances (share of the trees' gain)")
        for i in np.argsort(-share):
            print(f"  {learned.FEATURES[i]:<24} {share[i]:.3f}")
        return
    print("\nweights (standardised features; the size is the importance)")
    for i in np.argsort(-np.abs(spec["weights"])):
        print(f"  {learned.FEATURES[i]:<24} {spec['weights'][i]:+.3f}")


def _counts(pools: list[Pool]) -> dict[str, int]:
    counts = defaultdict(int)
    for p in pools:
        counts[p.set] += 1
    return counts


def setup_django_light() -> None:
    """Django set up without its servers (the features need no database)."""
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
    os.environ.setdefault("SECRET_KEY", "bench-ltr-train")
    import django

    django.setup()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["export", "train", "all"])
    parser.add_argument("--keep", type=Path, help="database folder (export)")
    parser.add_argument("--sets", default="locomo,longmemeval,coding,locomo-chat")
    parser.add_argument("--conversations", default="0-9", help="LoCoMo's")
    parser.add_argument("--out", type=Path, default=POOLS, help="where export writes the pools")
    parser.add_argument("--pools", type=Path, nargs="+", help="what train reads (default: --out)")
    parser.add_argument(
        "--kind", choices=["linear", "trees"], default="linear", help="the model to train"
    )
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation")
    parser.add_argument("--no-balance", action="store_true", help="weigh questions, not sets")
    parser.add_argument("--write", action="store_true", help="write the shipped model")
    parser.add_argument(
        "--shipped",
        action="store_true",
        help="also score the shipped model (search/ranker/ranker-v1.json) as it is: held out on "
        "sets it was not trained on, such as coding-dev",
    )
    args = parser.parse_args()
    args.pools = args.pools or [args.out]
    if args.command in ("export", "all"):
        if not args.keep:
            parser.error("export needs --keep DIR")
        export(args)
    if args.command in ("train", "all"):
        if args.command == "train":
            setup_django_light()
        train(args)


if __name__ == "__main__":
    main()
