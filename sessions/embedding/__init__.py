"""The embedding model, owned here and nowhere else: its files, its tokenizer, and the
runtimes that turn text into vectors.

- ``model_files``: where the packaged model and the derived ONNX graphs are.
- ``tokens``: the model's WordPiece tokenizer and token counts.
- ``torch_runtime``: sentence-transformers on torch (CPU or CUDA).
- ``onnx_runtime``: the same weights on ONNX Runtime (fp32, or int8), batches and queries.
- ``backend``: which runtime embeds documents (``EMBEDDING_BACKEND``), and ``embed``.
- ``query``: a query's vector, in the documents' vector space.

Enrichment embeds documents with ``backend.embed``; search embeds queries with
``query.embed_query``; neither opens the model package itself.
"""
