"""The Celery application: configured from Django settings (CELERY_*), tasks autodiscovered."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")

app = Celery("memoryapp")
# Django's settings, through memoryapp/startup.py: `celery worker` and `celery beat` check the
# settings, PostgreSQL and Redis there and exit with one line when one is wrong.
app.config_from_object("memoryapp.startup:celery_settings", namespace="CELERY")
app.autodiscover_tasks()
