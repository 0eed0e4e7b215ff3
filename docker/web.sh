#!/bin/sh
# The web container: migrate, make the first admin (once), then serve with gunicorn.
set -e
# The settings, PostgreSQL and Redis: one line naming the variable and exit 2 when one is wrong.
python -m memoryapp.startup
python manage.py migrate --noinput
python manage.py bootstrap
# The ONNX query encoder: made in the image; this only checks it is there.
python manage.py prepare_query_encoder
# One torch thread per web process: it embeds one short query at a time.
export EMBEDDING_THREADS="${EMBEDDING_THREADS:-1}"
exec gunicorn memoryapp.wsgi \
    --config python:memoryapp.gunicorn_hooks \
    --bind "0.0.0.0:${PORT:-8000}" \
    --workers "${WEB_CONCURRENCY:-3}" \
    --threads "${WEB_THREADS:-4}" \
    --timeout 120 \
    --access-logfile - \
    --no-control-socket
