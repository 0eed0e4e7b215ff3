#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")
    from django.core.management import execute_from_command_line

    from memoryapp.startup import StartupProblem, fail, load_settings

    try:
        load_settings()
    except StartupProblem as problem:  # one line naming the variable, not a traceback
        fail("manage.py", str(problem))
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
