"""The OpenAPI schema's parts that are the teams app's: the Bearer token scheme of its API
tokens, and the working-directory header by which a team token names a project. Settings'
DEFAULT_SCHEMA_CLASS is this module's ``AutoSchema``, so loading it registers the scheme."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from drf_spectacular.utils import OpenApiResponse

from core import openapi
from teams.directories import DIRECTORY_HEADER
from teams.models import DIRECTORY_MAX_LENGTH, TOKEN_PREFIX


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "teams.authentication.ApiTokenAuthentication"
    name = "ApiToken"

    def get_security_definition(self, auto_schema):
        scheme = build_bearer_security_scheme_object(
            header_name="Authorization",
            token_prefix=self.target.keyword,
            bearer_format=f"{TOKEN_PREFIX}…",
        )
        scheme["description"] = (
            f"A project API token (`{TOKEN_PREFIX}…`, made on the Tokens page): "
            "`Authorization: Bearer <token>`. It may do in that project what its permissions "
            "(read, write, delete; chosen when it is made) allow."
        )
        return scheme


# teams/viewsets.py (ScopedMixin.named_project): the project by the agent's working directory.
DIRECTORY_PARAMETER = {
    "name": DIRECTORY_HEADER,
    "in": "header",
    "required": False,
    # No maxLength: a project token ignores the header, whatever its length.
    "schema": {"type": "string"},
    "description": "The agent's working directory (a path, or seed 004's slug: "
    "/home/user/repos/myapp → -home-user-repos-myapp; percent-encoded UTF-8). When no "
    "`project` is given, a team-level token works in that directory's project, created on "
    "first use when the token has the 'projects' permission (403 naming it otherwise); "
    f"longer than {DIRECTORY_MAX_LENGTH} characters is a 400. A project token ignores it.",
}


class AutoSchema(openapi.AutoSchema):
    """core's AutoSchema, with the working-directory header where a project is named, and
    the token a 401 asks for."""

    errors = {
        **openapi.ERRORS,
        401: OpenApiResponse(
            openapi.ErrorSerializer,
            description=f"No valid credentials: send `Authorization: Bearer {TOKEN_PREFIX}…`.",
        ),
    }

    def extra_parameters(self, operation) -> list[dict]:
        return [DIRECTORY_PARAMETER] if self.names_a_project(operation) else []
