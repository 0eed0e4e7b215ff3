"""Project wiring: settings, urls, the Celery app, WSGI/ASGI entry points."""

from memoryapp.celery import app as celery_app

__all__ = ("celery_app",)
