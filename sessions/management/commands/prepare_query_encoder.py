"""Export the query encoder's ONNX graph now, rather than on the first search."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from sessions.embedding.model_files import onnx_graph_path
from sessions.embedding.query import query_encoder


class Command(BaseCommand):
    help = (
        "Export the embedding model to ONNX for fast query embedding (sessions/"
        "query_encoder.py) and check it against torch; nothing to do when the export exists. "
        "`make run` and the docker web container run it at start, so the first search does "
        "not wait ~10 s for it."
    )

    def handle(self, *args, **options):
        existed = onnx_graph_path().exists()
        if query_encoder() is None:
            # Not an error to stop on: searches work, only their embedding is slower.
            self.stderr.write(
                "query encoder: the ONNX export failed (see the warning above); searches "
                "still work, with query embedding on torch"
            )
            return
        verb = "uses" if existed else "exported"
        self.stdout.write(f"query encoder {verb} {onnx_graph_path()}")
