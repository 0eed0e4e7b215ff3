"""The API's JSON parser: DRF's, with nesting bounded
(``sessions.capture.sanitize.MAX_JSON_DEPTH``).

Set as the default parser in REST_FRAMEWORK and used by the sessions API, so every JSON
endpoint answers a body nested too deeply with 400, not with a RecursionError's 500.
"""

from __future__ import annotations

import io

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from sessions.capture.sanitize import MAX_JSON_DEPTH, could_be_too_deep, json_too_deep

TOO_DEEP = (
    f"JSON parse error - the request body nests objects and arrays more than {MAX_JSON_DEPTH} "
    "levels deep; send a flatter document."
)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:  # Python's parser gave up: the body is nested too deeply
            raise ParseError(TOO_DEEP) from None
        if could_be_too_deep(raw) and json_too_deep(data):
            raise ParseError(TOO_DEEP)
        return data
