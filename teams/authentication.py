"""DRF authentication for agents: ``Authorization: Bearer <project API token>``."""

from rest_framework import authentication, exceptions

from teams.access import TokenPrincipal, find_active_token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None  # not ours: session authentication may still apply
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Malformed Authorization header: expected 'Bearer <token>'."
            )
        try:
            raw = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(
                "The token contains invalid characters."
            ) from None
        token = find_active_token(raw)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        return TokenPrincipal(token), token

    def authenticate_header(self, request):
        return self.keyword  # makes DRF answer 401 (not 403) with WWW-Authenticate
