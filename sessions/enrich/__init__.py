"""Enrich: what the background workers add to captured sessions.

``pipeline`` is the work queue (claim pending messages, embed them, mark them done);
``session`` enriches a quiet session with ``entities/``, ``summary/``, ``topics`` and the
summary's vector; ``chunking`` splits long messages for the model; ``text`` and
``transcript`` are the helpers they share.
"""
