"""API clients for tests: as a signed-in person, or as an agent with a token."""

from __future__ import annotations

from rest_framework.test import APIClient


def client_for(user=None, token: str | None = None) -> APIClient:
    """An API client authenticated as ``user`` and/or with the raw API ``token``."""
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client
