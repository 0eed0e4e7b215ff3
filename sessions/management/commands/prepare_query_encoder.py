"""Make the ONNX graphs the configured backend uses now, rather than on first use."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from sessions.embedding.backend import VARIANT_OF, document_encoder, resolved_backend
from sessions.embedding.model_files import onnx_graph_path
from sessions.embedding.query import query_encoder


class Command(BaseCommand):
    help = (
        "Export the embedding model to ONNX (and quantise it, for EMBEDDING_BACKEND="
        "onnx-int8) for documents and queries (sessions/embedding/backend.py), checked "
        "against torch; nothing to do when the graphs exist. `make run` and the docker web "
        "container run it at start, so the first search or batch does not wait for it."
    )

    def handle(self, *args, **options):
        chosen = resolved_backend()
        variant = VARIANT_OF.get(chosen)
        if variant:
            existed = onnx_graph_path(variant).exists()
            if document_encoder() is None:
                self.stderr.write(
                    f"embedding backend {chosen}: its ONNX graph could not be made (see the "
                    "warning above); documents are embedded by torch"
                )
            else:
                verb = "uses" if existed else "made"
                self.stdout.write(f"documents: {verb} {onnx_graph_path(variant)}")
        existed = {v: onnx_graph_path(v).exists() for v in ("fp32", "int8")}
        encoder = query_encoder()
        if encoder is None:
            # Not an error to stop on: searches work, only their embedding is slower.
            self.stderr.write(
                "query encoder: the ONNX export failed (see the warning above); searches "
                "still work, with query embedding on torch"
            )
            return
        used = variant or "fp32"
        verb = "uses" if existed[used] else "exported"
        self.stdout.write(f"query encoder {verb} {onnx_graph_path(used)}")
