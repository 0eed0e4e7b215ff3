"""Capture: sessions in, stored once, searchable by keyword at commit.

``service`` writes sessions and appended messages (idempotent by external id and client id),
``importers/`` turn transcript files into sessions, ``redaction`` removes secrets,
``sanitize`` makes text and JSON storable, ``keyword_context`` gives each message the words
around it, and ``shell_tools`` says which tool calls ran a shell command.
"""
