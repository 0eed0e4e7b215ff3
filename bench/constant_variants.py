"""``bench/retrieval.py`` with search constants overridden, for sweeps on a kept database:

    VARIANT="speakers.OTHERS_FACTOR=0.7;ranking.SESSION_SUPPORT=0.3" \\
        .venv/bin/python bench/constant_variants.py --sets locomo --keep DIR --no-baselines

Each ``module.NAME=value`` sets ``search.<module>.NAME`` (a Python literal) before the run;
only what search reads as a module attribute when it runs follows (not a name another
module imported by value)."""

from __future__ import annotations

import ast
import importlib
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
for item in filter(None, os.environ.get("VARIANT", "").split(";")):
    name, value = item.split("=", 1)
    module, attr = name.strip().rsplit(".", 1)
    target = importlib.import_module(f"search.{module}")
    if not hasattr(target, attr):
        raise SystemExit(f"no constant {name}")
    setattr(target, attr, ast.literal_eval(value.strip()))
    print(f"override {name} = {value}", flush=True)
sys.argv = ["bench/retrieval.py", *sys.argv[1:]]
runpy.run_path("bench/retrieval.py", run_name="__main__")
