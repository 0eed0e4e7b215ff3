"""How long `make run` takes to a healthy /healthz: cold (empty data folder) and warm.

Cold = initdb, migrations, first admin, demo team, then worker, beat and web up.
Warm = the same data folder again (servers stopped in between, as after Ctrl-C).
A baseline from the same run: starting only the embedded PostgreSQL and Redis.

    .venv/bin/python bench/startup.py [--rounds 3]

Prints medians (and each round) in seconds. These machines are shared and noisy: compare
ratios within one run, not absolute seconds across runs.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO_ROOT, django_env, embedded, free_port


def time_run(var_dir: Path) -> float:
    """Seconds from launching `python -m memoryapp.local.serve` to /healthz answering 200."""
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "memoryapp.local.serve", "--port", str(port)],
        cwd=REPO_ROOT,
        env=django_env(var_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                    if r.status == 200:
                        return time.perf_counter() - started
            except (urllib.error.URLError, OSError):
                pass
            if time.perf_counter() - started > 300:
                raise RuntimeError("not healthy after 300 s")
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)


def time_services_only(var_dir: Path) -> float:
    env = django_env(var_dir)
    started = time.perf_counter()
    embedded(env, "start")
    elapsed = time.perf_counter() - started
    embedded(env, "stop")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    cold, warm, services = [], [], []
    for round_no in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory(prefix="memoryapp-bench-") as tmp:
            var_dir = Path(tmp) / "var"
            cold.append(time_run(var_dir))
            warm.append(time_run(var_dir))
            services.append(time_services_only(var_dir))
        print(
            f"round {round_no}: cold {cold[-1]:.1f} s, warm {warm[-1]:.1f} s, "
            f"embedded servers only (warm) {services[-1]:.2f} s",
            flush=True,
        )
    cold_median, warm_median = statistics.median(cold), statistics.median(warm)
    services_median = statistics.median(services)
    print()
    print(f"cold start to healthy  median {cold_median:.1f} s")
    print(f"warm start to healthy  median {warm_median:.1f} s")
    print(f"embedded servers only  median {services_median:.2f} s (baseline)")
    print(f"cold / warm ratio      {cold_median / warm_median:.2f}")
    print(f"warm / baseline ratio  {warm_median / services_median:.1f}")


if __name__ == "__main__":
    main()
