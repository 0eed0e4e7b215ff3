"""gunicorn settings shared by `make run` and the docker web container
(``gunicorn -c python:memoryapp.gunicorn_hooks``)."""


def post_worker_init(worker) -> None:
    """Load the query encoder before the first request, not during it."""
    from sessions.embedding.query import query_encoder

    query_encoder()
