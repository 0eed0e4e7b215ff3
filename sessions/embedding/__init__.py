"""The embedding model, owned here and nowhere else: its files, its tokenizer, and the two
runtimes that turn text into vectors.

- ``model_files``: where the packaged model and the derived ONNX graph are.
- ``tokens``: the model's WordPiece tokenizer and token counts.
- ``torch_runtime``: sentence-transformers on torch, for batches (the enrichment pipeline).
- ``onnx_runtime``: the same weights on ONNX Runtime, for one query at a time (search).
- ``query``: a query's vector by the fastest runtime the process has.

Enrichment embeds documents with ``torch_runtime.embed``; search embeds queries with
``query.embed_query``; neither opens the model package itself.
"""
