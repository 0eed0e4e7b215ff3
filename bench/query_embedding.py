"""Query embedding time: torch (sentence-transformers) against the ONNX query encoder
(``sessions/embedding/onnx_runtime.py``), on LoCoMo's questions, one text per call as a search does.

The two runtimes alternate question by question (the machine is shared: both see the same
noise), with the same number of threads (``EMBEDDING_THREADS``, 1 by default as in a web
process). Reported: p50/p95 per runtime, the ratio of medians, and the lowest cosine
between the two vectors of a question (they should agree to float rounding).

    .venv/bin/python bench/query_embedding.py [--questions 400]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import SHARED, percentile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=400, help="questions timed (400)")
    args = parser.parse_args()
    os.environ.setdefault("EMBEDDING_THREADS", "1")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
    import django

    django.setup()
    from django.conf import settings

    from sessions.embedding.onnx_runtime import query_encoder
    from sessions.embedding.torch_runtime import embed

    conversations = json.loads((SHARED / "data" / "locomo" / "locomo10.json").read_text())
    questions = [qa["question"] for c in conversations for qa in c["qa"]][: args.questions]
    encoder = query_encoder()
    if encoder is None:
        raise SystemExit("the ONNX query encoder could not be made; see the warning above")
    embed(questions[:5]), [encoder.encode(q) for q in questions[:5]]  # warm both

    times: dict[str, list[float]] = {"torch": [], "onnx": []}
    lowest_cosine = 1.0
    for question in questions:
        started = time.perf_counter()
        by_torch = embed([question])[0]
        times["torch"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        by_onnx = encoder.encode(question)
        times["onnx"].append((time.perf_counter() - started) * 1000)
        lowest_cosine = min(lowest_cosine, float(by_torch @ by_onnx))

    print(f"{len(questions)} LoCoMo questions, {settings.EMBEDDING_THREADS} thread(s) each")
    for name, values in times.items():
        print(
            f"  {name:5}  p50 {statistics.median(values):5.1f} ms"
            f"  p95 {percentile(values, 0.95):5.1f} ms"
        )
    ratio = statistics.median(times["onnx"]) / statistics.median(times["torch"])
    print(f"  onnx/torch median ratio {ratio:.2f}; lowest cosine between them {lowest_cosine:.6f}")
    print(f"  load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
