"""What the OpenAPI schema says beyond the views' own annotations: the error answers every
endpoint of a kind can give, declared once here (the token scheme and the working-directory
header are the teams app's: ``teams/openapi.py``).

Error answers by endpoint kind (a view's own ``@extend_schema`` responses take precedence
and add what is particular to it, such as a 409):

========================================================  ==============================
every endpoint behind authentication                      401, 403 (an API token without
                                                          the permission), 503 (and 429
                                                          if throttled)
a request body                                            400, 413, 415 (415 unless the
                                                          view takes any media type)
a write (POST, PUT, PATCH, DELETE)                        403: a role too low, or a
                                                          browser session without CSRF
query parameters                                          400
a path parameter or a pagination cursor                   404
a ``project`` parameter or body field                     404: a person naming a project
                                                          they cannot see
========================================================  ==============================

An optional query parameter sent empty counts as not given (``allowEmptyValue``).
Every error body carries a stable ``code`` (``core.error_codes``), listed as an enum.
"""

from __future__ import annotations

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular import openapi
from drf_spectacular.extensions import (
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.plumbing import (
    force_instance,
    is_serializer,
)
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from core import error_codes

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def error_code_field(**kwargs) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=error_codes.choices(),
        help_text="A stable code for programs (the table is in docs/api.md); `detail` is "
        "for people and may be reworded.",
        **kwargs,
    )


class ErrorSerializer(serializers.Serializer):
    """An error: ``detail`` says what went wrong and what to do, ``code`` which kind of
    error it is. Some errors add fields with the numbers involved (a 413 gives the sizes and
    the limit)."""

    detail = serializers.CharField()
    code = error_code_field()


class ValidationErrorSerializer(serializers.Serializer):
    """The request was refused as sent; ``code`` says which kind of error. Either ``detail``
    explains it (with the ``line`` and ``field`` of an uploaded file when known), or each
    other key names a field in error with a list of messages about it."""

    detail = serializers.CharField(required=False)
    code = error_code_field()
    line = serializers.IntegerField(required=False, allow_null=True)
    field = serializers.CharField(required=False, allow_null=True)


RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "description": "Seconds to wait before trying again.",
    }
}

ERRORS = {
    400: OpenApiResponse(ValidationErrorSerializer, description="Invalid request."),
    401: OpenApiResponse(ErrorSerializer, description="No valid credentials."),
    403: OpenApiResponse(
        ErrorSerializer,
        description="Not allowed: the caller's role is too low, the API token lacks the "
        "permission (read, write or delete) the action needs, or a browser session sent no "
        "CSRF token.",
    ),
    404: OpenApiResponse(ErrorSerializer, description="Not found (or not the caller's)."),
    409: OpenApiResponse(ErrorSerializer, description="Conflicts with the current state."),
    413: OpenApiResponse(ErrorSerializer, description="Too large; the answer gives the limit."),
    415: OpenApiResponse(ErrorSerializer, description="Unsupported Content-Type."),
    429: OpenApiResponse(ErrorSerializer, description="Too many requests; see Retry-After."),
    503: OpenApiResponse(
        ErrorSerializer, description="A backing service is down; try again after Retry-After."
    ),
}
HEADERS = {429: RETRY_AFTER, 503: RETRY_AFTER}


def error(code: int) -> OpenApiResponse:
    """The documented error answer for ``code``, for a view's own ``@extend_schema``."""
    return ERRORS[code]


class NonEmptyListExtension(OpenApiSerializerFieldExtension):
    """A list that may not be empty (``allow_empty=False``) says so: ``minItems: 1``."""

    target_class = "rest_framework.serializers.ListSerializer"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if not self.target.allow_empty and direction == "request":
            schema["minItems"] = max(schema.get("minItems", 0), 1)
        return schema


class NonEmptyListFieldExtension(NonEmptyListExtension):
    target_class = "rest_framework.fields.ListField"


# What Python's str.strip() removes, which DRF's CharField trims before checking for blank.
WHITESPACE = "\t\n\v\f\r \x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


class TextFieldExtension(OpenApiSerializerFieldExtension):
    """Request text says in a pattern what DRF's CharField checks beyond its length: no NUL
    character (unless the field allows them) and, unless it may be blank, something other
    than whitespace. (A blank-allowed field gets its empty alternative from
    drf-spectacular, so its pattern asks for at least one character.)"""

    target_class = "rest_framework.fields.CharField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        schema = auto_schema._map_serializer_field(field, direction, bypass_extensions=True)
        if direction != "request" or "pattern" in schema or schema.get("type") != "string":
            return schema
        refuses_nul = self._refuses_nul()
        if field.allow_blank or not field.trim_whitespace:
            if refuses_nul:
                schema["pattern"] = "^[^\\x00]+$"
        elif refuses_nul:
            schema["pattern"] = f"^[^\\x00]*[^{WHITESPACE}\\x00][^\\x00]*$"
        else:
            schema["pattern"] = f"^[\\s\\S]*[^{WHITESPACE}][\\s\\S]*$"
        return schema

    def _refuses_nul(self) -> bool:
        return any(isinstance(v, ProhibitNullCharactersValidator) for v in self.target.validators)


class CsvOrListFieldExtension(OpenApiSerializerFieldExtension):
    """Topics and artifacts are a list of strings or one comma-separated string."""

    target_class = "sessions.api.serializers.CsvOrListField"
    priority = 1  # over NonEmptyListFieldExtension, which it builds on

    def map_serializer_field(self, auto_schema, direction):
        listed = NonEmptyListFieldExtension(self.target).map_serializer_field(
            auto_schema, direction
        )
        if direction != "request":
            return listed
        # Each part, stripped, is 1 to max_length characters of the item (empty parts are
        # dropped).
        longest = self.target.child.max_length or 10_000
        ws, edge = f"[{WHITESPACE}]*", f"[^,{WHITESPACE}\\x00]"
        part = f"{ws}(?:{edge}(?:[^,\\x00]{{0,{longest - 2}}}{edge})?)?{ws}"
        csv = {
            "type": "string",
            "pattern": f"^{part}(?:,{part})*$",
            "description": "comma-separated",
        }
        return {"oneOf": [listed, csv]}


class KnownParametersOnlyExtension(OpenApiSerializerExtension):
    """The bodies carrying filters (search and context) refuse unknown names
    (search.api.views.reject_unknown), so they admit no other properties."""

    target_class = "sessions.filters.FiltersSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema, documenting the error answers of each endpoint kind."""

    errors = ERRORS  # the answer documented for each status (a subclass may say more)

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        if "requestBody" in operation and self._takes_any_media_type():
            # The view reads the raw bytes itself and refuses an empty body.
            operation["requestBody"]["required"] = True
        operation.setdefault("parameters", []).extend(self.extra_parameters(operation))
        if not operation["parameters"]:
            del operation["parameters"]
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query" and not parameter.get("required"):
                # As in an HTML form, an empty value means the parameter is not given.
                parameter["allowEmptyValue"] = True
        responses = operation["responses"]
        for code in sorted(self.error_codes(operation)):
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(self.errors[code], str(code))
        for code, headers in HEADERS.items():
            if str(code) in responses:
                responses[str(code)].setdefault("headers", {}).update(headers)
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def error_codes(self, operation) -> set[int]:
        codes = {503}
        if not all(isinstance(p, AllowAny) for p in self.view.get_permissions()):
            codes |= {401, 403}  # 403: a token without the permission, even to read
        if self.view.get_throttles():
            codes.add(429)
        parameters = {p["name"]: p["in"] for p in operation.get("parameters", [])}
        query = {name for name, where in parameters.items() if where == "query"}
        if "requestBody" in operation:
            codes |= {400, 413}
            if not self._takes_any_media_type():
                codes.add(415)
        if self.method in WRITE_METHODS:
            codes.add(403)
        if query:
            codes.add(400)
        if "path" in parameters.values() or "cursor" in query:
            codes.add(404)
        if self.names_a_project(operation):
            codes.add(404)
        return codes

    def extra_parameters(self, operation) -> list[dict]:
        """Parameters the views do not declare, added by what the operation takes (a
        subclass's: teams.openapi adds the working-directory header)."""
        return []

    def names_a_project(self, operation) -> bool:
        """Whether the endpoint takes a ``project`` (a query parameter or a body field)."""
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        return "project" in query or "project" in self._request_fields()

    def _takes_any_media_type(self) -> bool:
        return any(parser.media_type == "*/*" for parser in self.view.get_parsers())

    def _request_fields(self) -> set[str]:
        if self.method not in BODY_METHODS:
            return set()
        request = self.get_request_serializer()
        candidates = list(request.values()) if isinstance(request, dict) else [request]
        names = set()
        for candidate in candidates:
            if is_serializer(candidate) and hasattr(candidate, "fields"):
                names |= set(force_instance(candidate).fields)
        return names
