"""``bench/retrieval.py`` with ranking and retrieval constants overridden, for sweeps on a kept
database:

    VARIANT="OTHERS_FACTOR=0.7;SESSION_SUPPORT=0.3" \\
        .venv/bin/python bench/constant_variants.py --sets locomo --keep DIR --no-baselines

Each ``NAME=value`` sets ``search.tuning.NAME`` (a Python literal) before the bench starts:
search reads that module when it runs, so no Django set-up is involved. The names of
earlier sweeps (``speakers.SELF_LIFT``, ``temporal.LIFT``, ``asked_for.LIFT``: the module
they lived in) are still understood."""

from __future__ import annotations

import ast
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())

# The working copy's search, not the one the virtualenv installs.
from search import tuning

# The constants that were named after their module before search/tuning.py held them all.
FORMER_NAMES = {"temporal.LIFT": "TEMPORAL_LIFT", "asked_for.LIFT": "ASKED_FOR_LIFT"}


def override(variant: str) -> None:
    for item in filter(None, variant.split(";")):
        name, value = (part.strip() for part in item.split("=", 1))
        attr = FORMER_NAMES.get(name, name.rsplit(".", 1)[-1])
        if not hasattr(tuning, attr):
            raise SystemExit(f"no constant {name} in search/tuning.py")
        setattr(tuning, attr, ast.literal_eval(value))
        print(f"override {attr} = {value}", flush=True)


override(os.environ.get("VARIANT", ""))
sys.argv = ["bench/retrieval.py", *sys.argv[1:]]
runpy.run_path("bench/retrieval.py", run_name="__main__")
