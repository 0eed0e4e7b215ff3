"""Brute-force protection on both sign-in pages (django-axes): after LOGIN_FAILURE_LIMIT
wrong passwords for one account, or from one address, that account (from anywhere) and that
address (for any account) are refused for LOGIN_COOLOFF_MINUTES, even with the right
password, on a page that says so (429 with Retry-After). API tokens are not throttled."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from teams.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
ATTACKER = "203.0.113.7"
ELSEWHERE = "198.51.100.20"
LOGIN_PAGES = ["/accounts/login/", "/admin/login/"]


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", is_staff=True)


@pytest.fixture
def bob(db):
    return UserFactory(username="bob", is_staff=True)


def sign_in(page: str, username: str, password: str, address: str, client=None):
    client = client or Client(REMOTE_ADDR=address)
    response = client.post(page, {"username": username, "password": password})
    return client, response


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail_until_locked(page: str, username: str, address: str):
    """LOGIN_FAILURE_LIMIT wrong passwords; returns the responses."""
    return [
        sign_in(page, username, f"wrong {i}", address)[1]
        for i in range(settings.AXES_FAILURE_LIMIT)
    ]


def assert_lockout_page(response):
    assert response.status_code == 429
    body = response.content.decode()
    assert "Too many failed sign-ins" in body
    minutes = int(settings.AXES_COOLOFF_TIME / timedelta(minutes=1))
    assert f"{minutes} minutes" in body
    assert response["Retry-After"] == str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    assert "Traceback" not in body


def test_limits_come_from_the_settings():
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60
    assert settings.AXES_LOCKOUT_PARAMETERS == ["username", "ip_address"]


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_wrong_passwords_then_the_right_one_is_refused(page, alice):
    responses = fail_until_locked(page, "alice", ATTACKER)
    for response in responses[:-1]:
        assert response.status_code == 200  # the form again, with its error
    assert_lockout_page(responses[-1])

    client, response = sign_in(page, "alice", PASSWORD, ATTACKER)
    assert_lockout_page(response)
    assert not signed_in(client)


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_the_account_is_locked_from_every_address(page, alice):
    fail_until_locked(page, "alice", ATTACKER)
    client, response = sign_in(page, "alice", PASSWORD, ELSEWHERE)
    assert_lockout_page(response)
    assert not signed_in(client)


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_the_address_is_locked_for_every_account(page, alice, bob):
    # Password spraying: one wrong password for each of many accounts from one address.
    for i in range(settings.AXES_FAILURE_LIMIT):
        sign_in(page, f"someone{i}", "guess", ATTACKER)
    client, response = sign_in(page, "bob", PASSWORD, ATTACKER)
    assert_lockout_page(response)
    assert not signed_in(client)


@pytest.mark.parametrize("page", LOGIN_PAGES)
def test_another_account_from_another_address_is_unaffected(page, alice, bob):
    fail_until_locked(page, "alice", ATTACKER)
    client, response = sign_in(page, "bob", PASSWORD, ELSEWHERE)
    assert response.status_code == 302
    assert signed_in(client)


def test_failures_below_the_limit_do_not_lock(alice):
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in("/accounts/login/", "alice", f"wrong {i}", ATTACKER)
    client, response = sign_in("/accounts/login/", "alice", PASSWORD, ATTACKER)
    assert response.status_code == 302
    assert signed_in(client)


def test_the_lock_ends_after_the_cool_off(alice):
    fail_until_locked("/accounts/login/", "alice", ATTACKER)
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME
    )
    client, response = sign_in("/accounts/login/", "alice", PASSWORD, ATTACKER)
    assert response.status_code == 302
    assert signed_in(client)


def test_a_shorter_cool_off_is_obeyed(alice, settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=2)
    fail_until_locked("/accounts/login/", "alice", ATTACKER)
    _, locked = sign_in("/accounts/login/", "alice", PASSWORD, ATTACKER)
    assert locked.status_code == 429 and locked["Retry-After"] == "120"
    assert "2 minutes" in locked.content.decode()
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=2)
    )
    _, response = sign_in("/accounts/login/", "alice", PASSWORD, ATTACKER)
    assert response.status_code == 302


def test_behind_the_tls_proxy_the_address_is_the_one_the_proxy_saw(alice, bob, settings):
    settings.BEHIND_TLS_PROXY = True
    proxy = "10.0.0.1"
    for i in range(settings.AXES_FAILURE_LIMIT):
        Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"1.2.3.{i}, {ATTACKER}").post(
            "/accounts/login/", {"username": f"someone{i}", "password": "guess"}
        )
    # The forged first entries did not split the attacker's count...
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER}
    locked = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=ATTACKER)
    assert_lockout_page(sign_in("/accounts/login/", "bob", PASSWORD, "", locked)[1])
    # ...and the other people behind the same proxy still sign in.
    other = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=ELSEWHERE)
    assert sign_in("/accounts/login/", "bob", PASSWORD, "", other)[1].status_code == 302


def test_api_tokens_are_not_throttled(alice, project):
    fail_until_locked("/accounts/login/", "alice", "127.0.0.1")
    _, raw = ApiToken.issue(project, name="agent")
    response = Client(REMOTE_ADDR="127.0.0.1").get(
        "/api/v1/sessions", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    assert response.status_code == 200
