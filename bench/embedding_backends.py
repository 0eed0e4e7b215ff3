"""Embedding backends side by side: torch fp32 (sentence-transformers), ONNX fp32 and ONNX
int8 (``sessions/embedding/onnx_runtime.py``), on the texts the pipeline embeds.

1. Raw throughput (texts/s) on two corpora: LoCoMo turns ("<speaker>: <text>", ~130
   characters) and the long chunks of the real transcripts in ``shared/samples`` (messages
   of 300+ characters, chunked as the pipeline chunks them). The configurations run in
   turn, round after round (the machine is shared: each sees the same noise); the median
   of the rounds is reported, with its ratio to torch fp32.
2. Options of the ONNX backends: batch size and graph optimisation level (on half the
   turns), threads (in 1).
3. Agreement: cosine of each backend's vectors with torch fp32's on both corpora
   (min / p1 / median; the bar is 0.99).
4. Recall: dense-only LoCoMo turn recall@10 with each backend's vectors (documents and
   questions by the same backend; exact cosine, each conversation alone, categories 1-4).

    .venv/bin/python bench/embedding_backends.py [--rounds 3] [--threads 1,2]

Needs no database. The graphs are made (and checked) in ``MODEL_CACHE_DIR`` if missing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LONG_CHARS = 300


def locomo_turns() -> list[str]:
    from bench.retrieval_sets import load_locomo, sessions_of

    return [
        f"{t['speaker']}: {t['text']}"
        for conversation in load_locomo()
        for _, _, turns in sessions_of(conversation)
        for t in turns
    ]


def long_sample_chunks() -> list[str]:
    """What the pipeline embeds for the samples' messages of ``LONG_CHARS``+ characters."""
    from bench.retrieval_sets import sample_transcripts
    from sessions.enrich.chunking import chunk_message, header_for
    from transcripts import parse_path

    texts = []
    for path in sample_transcripts():
        for session in parse_path(path):
            for m in session.messages:
                if len(m.content) >= LONG_CHARS:
                    header = header_for(m.role, m.author or "", m.tool_name or "")
                    texts += [c.text for c in chunk_message(m.content, header=header)]
    return texts


class Backend:
    """One configuration: a name and a function embedding a list of texts."""

    def __init__(self, name: str, embed, threads: int):
        self.name, self.embed, self.threads = name, embed, threads


def backends(threads_list: list[int], batch: int, level: str) -> list[Backend]:
    import torch

    from sessions.embedding.model_files import onnx_graph_path
    from sessions.embedding.onnx_runtime import OnnxEncoder, onnx_encoder
    from sessions.embedding.torch_runtime import get_model

    model = get_model()
    for variant in ("fp32", "int8"):
        if onnx_encoder(variant, 1) is None:
            raise SystemExit(f"the ONNX {variant} graph could not be made; see the warning")
    out = []
    for threads in threads_list:

        def by_torch(texts, threads=threads):
            torch.set_num_threads(threads)
            return model.encode(
                texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False
            )

        out.append(Backend(f"torch fp32 ×{threads}", by_torch, threads))
        for variant in ("fp32", "int8"):
            encoder = OnnxEncoder(onnx_graph_path(variant), threads, level)
            out.append(
                Backend(
                    f"onnx {variant} ×{threads}",
                    lambda texts, e=encoder: e.encode_batch(texts, batch_size=batch),
                    threads,
                )
            )
    return out


def option_sweep(threads: int) -> list[Backend]:
    """ONNX fp32 and int8 at other batch sizes and optimisation levels."""
    from sessions.embedding.model_files import onnx_graph_path
    from sessions.embedding.onnx_runtime import OnnxEncoder

    out = []
    for variant in ("fp32", "int8"):
        for level in ("basic", "all"):
            encoder = OnnxEncoder(onnx_graph_path(variant), threads, level)
            for batch in (8, 32, 128):
                out.append(
                    Backend(
                        f"onnx {variant} opt={level} batch={batch} ×{threads}",
                        lambda texts, e=encoder, b=batch: e.encode_batch(texts, batch_size=b),
                        threads,
                    )
                )
    return out


def interleaved_rates(configs: list[Backend], texts: list[str], rounds: int) -> dict[str, float]:
    for config in configs:
        config.embed(texts[:16])  # warm
    rates: dict[str, list[float]] = {c.name: [] for c in configs}
    for _ in range(rounds):
        for config in configs:
            started = time.perf_counter()
            config.embed(texts)
            rates[config.name].append(len(texts) / (time.perf_counter() - started))
    return {name: statistics.median(values) for name, values in rates.items()}


def print_rates(title: str, rates: dict[str, float], baseline: str) -> None:
    print(f"\n{title}")
    for name, rate in rates.items():
        print(f"  {name:<36} {rate:8.1f} texts/s   ×{rate / rates[baseline]:.2f} of {baseline}")


def agreement(vectors: np.ndarray, reference: np.ndarray) -> str:
    cosines = np.einsum("ij,ij->i", vectors, reference)
    return (
        f"min {cosines.min():.4f}  p1 {np.percentile(cosines, 1):.4f}  "
        f"median {np.median(cosines):.4f}"
    )


def locomo_recall(embed_docs, embed_queries) -> float:
    """Mean turn recall@10 over LoCoMo's questions of categories 1-4, each conversation's
    turns ranked alone by exact cosine."""
    from bench.retrieval_scoring import score
    from bench.retrieval_sets import load_locomo, locomo_units

    data = load_locomo()
    recalls = []
    for unit in locomo_units(list(range(len(data))), data).values():
        keys = list(unit.docs)
        docs = embed_docs(list(unit.docs.values()))
        queries = embed_queries([q.text for q in unit.questions])
        for question, qv in zip(unit.questions, queries, strict=True):
            ranked = [keys[i] for i in np.argsort(-(docs @ qv), kind="stable")[:10]]
            recalls.append(score(ranked, question, turn_ks=(10,))["turn@10"])
    return statistics.fmean(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2", help="thread counts compared (1,2)")
    parser.add_argument("--turns", type=int, default=600, help="LoCoMo turns timed (600)")
    parser.add_argument("--chunks", type=int, default=100, help="long chunks timed (100)")
    parser.add_argument("--batch", type=int, default=32, help="ONNX batch size (32)")
    parser.add_argument("--level", default="all", help="ONNX graph optimisation level (all)")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-recall", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
    import django

    django.setup()
    threads_list = [int(t) for t in args.threads.split(",")]
    started_load = os.getloadavg()
    turns = locomo_turns()
    timed_turns = turns[:: max(1, len(turns) // args.turns)][: args.turns]
    chunks = long_sample_chunks()
    chunks = chunks[:: max(1, len(chunks) // args.chunks)][: args.chunks]
    mean_chars = {
        name: np.mean([len(t) for t in texts])
        for name, texts in (("turns", timed_turns), ("chunks", chunks))
    }
    print(
        f"corpora: {len(timed_turns)} LoCoMo turns (mean {mean_chars['turns']:.0f} chars); "
        f"{len(chunks)} long sample chunks (mean {mean_chars['chunks']:.0f} chars)",
        flush=True,
    )
    configs = backends(threads_list, args.batch, args.level)
    baseline = configs[0].name
    for corpus, texts in (("LoCoMo turns", timed_turns), ("long sample chunks", chunks)):
        rates = interleaved_rates(configs, texts, args.rounds)
        print_rates(f"raw throughput, {corpus} (median of {args.rounds} rounds)", rates, baseline)
    if not args.skip_sweep:
        sweep = option_sweep(threads_list[0])
        rates = interleaved_rates(sweep, timed_turns[: len(timed_turns) // 2], args.rounds)
        print_rates("ONNX options, LoCoMo turns", rates, sweep[1].name)

    by_name = {c.name.rsplit(" ×", 1)[0]: c for c in configs if c.threads == threads_list[-1]}
    print("\nagreement with torch fp32 (cosine per text)")
    for corpus, texts in (("LoCoMo turns", timed_turns), ("long sample chunks", chunks)):
        reference = by_name["torch fp32"].embed(texts)
        for name in ("onnx fp32", "onnx int8"):
            print(f"  {corpus:<20} {name:<10} {agreement(by_name[name].embed(texts), reference)}")

    if not args.skip_recall:
        print("\ndense-only LoCoMo turn recall@10 (categories 1-4, each conversation alone)")
        for name, config in by_name.items():
            recall = locomo_recall(config.embed, config.embed)
            print(f"  {name:<10} {recall:.4f}", flush=True)
    ended_load = os.getloadavg()
    print(f"\nload average at start {started_load[0]:.2f}, at end {ended_load[0]:.2f}")


if __name__ == "__main__":
    main()
