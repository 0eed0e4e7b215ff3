"""Settings for the test suite: the real ones, with the tests' work kept apart.

Tests use the same PostgreSQL and Redis servers as development (pytest-django makes its own
``test_`` database); their Celery tasks go to their own queue, so a worker of a running
`make run` never takes them, and the test workers never take its tasks.
"""

from memoryapp.settings import *  # noqa: F403

CELERY_TASK_DEFAULT_QUEUE = "memoryapp-test"
# Fast hashing: tests create many users; production keeps Django's default.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
