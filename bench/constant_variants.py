"""``bench/retrieval.py`` with search constants overridden, for sweeps on a kept database:

    VARIANT="speakers.OTHERS_FACTOR=0.7;ranking.SESSION_SUPPORT=0.3" \\
        .venv/bin/python bench/constant_variants.py --sets locomo --keep DIR --no-baselines

Each ``module.NAME=value`` sets ``search.<module>.NAME`` (a Python literal) once Django is set up;
only what search reads as a module attribute when it runs follows (not a name another
module imported by value)."""

from __future__ import annotations

import ast
import importlib
import os
import runpy
import sys

import django

sys.path.insert(0, os.getcwd())


def override() -> None:
    for item in filter(None, os.environ.get("VARIANT", "").split(";")):
        name, value = item.split("=", 1)
        module, attr = name.strip().rsplit(".", 1)
        target = importlib.import_module(f"search.{module}")
        if not hasattr(target, attr):
            raise SystemExit(f"no constant {name}")
        setattr(target, attr, ast.literal_eval(value.strip()))
        print(f"override {name} = {value}", flush=True)


# After Django's set-up (which the bench does once its servers run): a search module that
# imports models cannot be imported before it.
_setup = django.setup


def setup_then_override(*args, **kwargs) -> None:
    _setup(*args, **kwargs)
    override()


django.setup = setup_then_override
sys.argv = ["bench/retrieval.py", *sys.argv[1:]]
runpy.run_path("bench/retrieval.py", run_name="__main__")
