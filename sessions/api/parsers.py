"""The API's JSON parser: DRF's, with nesting bounded
(``transcripts.sanitize.MAX_JSON_DEPTH``) and numbers held to finite values
(``transcripts.sanitize.load_json``: ``1e400`` is refused like ``NaN``, not stored as
infinity for PostgreSQL to refuse at INSERT).

Set as the default parser in REST_FRAMEWORK and used by the sessions API, so every JSON
endpoint answers a body nested too deeply, or a number jsonb cannot hold, with 400, not
with a 500.
"""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from transcripts.sanitize import MAX_JSON_DEPTH, could_be_too_deep, json_too_deep, load_json

TOO_DEEP = (
    f"JSON parse error - the request body nests objects and arrays more than {MAX_JSON_DEPTH} "
    "levels deep; send a flatter document."
)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        # DRF's charset choice (the Content-Type's, with its guard against codecs that
        # decompress); DRF's own parse would read numbers without the finiteness check.
        encoding = parsers.get_encoding(parser_context or {})
        try:
            data = load_json(raw.decode(encoding))
        except RecursionError:  # Python's parser gave up: the body is nested too deeply
            raise ParseError(TOO_DEEP) from None
        except ValueError as exc:  # not JSON, not in its charset, or a non-finite number
            raise ParseError(f"JSON parse error - {exc}") from None
        if could_be_too_deep(raw) and json_too_deep(data):
            raise ParseError(TOO_DEEP)
        return data
