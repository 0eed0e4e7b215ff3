# One image for web, worker and beat (docker-compose.yaml picks the command).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

RUN useradd --create-home --uid 1000 memoryapp
WORKDIR /app

# CPU torch first, from PyTorch's CPU index: a bare "torch" would pull the CUDA build.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
    --extra-index-url https://pypi.org/simple

COPY pyproject.toml README.md ./
COPY memoryapp ./memoryapp
COPY core ./core
COPY memoryapp_client ./memoryapp_client
COPY transcripts ./transcripts
COPY protocol ./protocol
COPY memories ./memories
COPY sessions ./sessions
COPY search ./search
COPY teams ./teams
COPY mcp_server ./mcp_server
COPY web ./web
COPY templates ./templates
COPY manage.py ./
COPY docker ./docker
ENV STATIC_ROOT=/app/static \
    MODEL_CACHE_DIR=/app/models
# The query encoder's ONNX export is made here, once, rather than by each container.
RUN pip install --no-cache-dir . \
    && export SECRET_KEY=build-only DATABASE_URL=postgres://build@localhost/build \
       REDIS_URL=redis://localhost:6379/0 \
    && python manage.py collectstatic --noinput --verbosity 0 \
    && python manage.py prepare_query_encoder

USER memoryapp
EXPOSE 8000
# web by default; compose overrides the command for worker and beat.
CMD ["sh", "docker/web.sh"]
