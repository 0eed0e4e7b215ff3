"""Long sessions load in pages (htmx "load more"); long outputs fold; tool pairs across
page boundaries stay paired."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import MessageFactory, SessionFactory
from web.transcript import PAGE_SIZE

pytestmark = pytest.mark.django_db


@pytest.fixture
def long_session(project):
    session = SessionFactory(project=project, title="Long one", message_count=250)
    for seq in range(250):
        MessageFactory(session=session, seq=seq, role="user", content=f"message number {seq}")
    return session


def test_first_page_then_load_more(member_client, long_session):
    url = reverse("web:session", args=[long_session.public_id])
    body = member_client.get(url).content.decode()
    assert 'id="m-0"' in body and f'id="m-{PAGE_SIZE - 1}"' in body
    assert f'id="m-{PAGE_SIZE}"' not in body
    assert "Load more messages" in body
    more = member_client.get(
        reverse("web:messages", args=[long_session.public_id]) + f"?after={PAGE_SIZE - 1}",
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert f'id="m-{PAGE_SIZE}"' in more and "<html" not in more
    # Without htmx, the same link is a full page starting there.
    plain = member_client.get(
        reverse("web:messages", args=[long_session.public_id]) + f"?after={PAGE_SIZE - 1}"
    )
    assert plain.status_code == 302 and f"from={PAGE_SIZE}" in plain["Location"]


def test_jump_to_a_late_message(member_client, long_session):
    url = reverse("web:session", args=[long_session.public_id])
    body = member_client.get(f"{url}?at=230").content.decode()
    assert 'id="m-230"' in body and 'id="m-0"' not in body
    assert "Earlier messages" in body
    assert "End of the session" in body


@pytest.mark.parametrize("query", ["from=abc", "at=-5", "from=99999999", "at=1e9"])
def test_odd_positions_do_not_break(member_client, long_session, query):
    url = reverse("web:session", args=[long_session.public_id])
    assert member_client.get(f"{url}?{query}").status_code == 200


def test_long_output_is_folded(member_client, project):
    session = SessionFactory(project=project)
    MessageFactory(session=session, seq=0, role="assistant", content="x", tool_name="Read",
                   tool_call_id="t1")  # fmt: skip
    MessageFactory(
        session=session, seq=1, role="tool", tool_call_id="t1",
        content="\n".join(f"line {i}" for i in range(500)),
    )  # fmt: skip
    body = member_client.get(reverse("web:session", args=[session.public_id])).content.decode()
    assert "Show the whole output (500 lines" in body
    assert 'id="m-1"' in body


def test_tool_result_on_the_next_page_stays_with_its_call(member_client, project):
    session = SessionFactory(project=project)
    for seq in range(PAGE_SIZE - 1):
        MessageFactory(session=session, seq=seq, content=f"m{seq}")
    MessageFactory(session=session, seq=PAGE_SIZE - 1, role="assistant", content="ls",
                   tool_name="Bash", tool_call_id="late")  # fmt: skip
    MessageFactory(session=session, seq=PAGE_SIZE, role="tool", content="README.md",
                   tool_call_id="late")  # fmt: skip
    MessageFactory(session=session, seq=PAGE_SIZE + 1, content="after")
    first = member_client.get(reverse("web:session", args=[session.public_id])).content.decode()
    assert "README.md" in first  # the result, shown with its call
    more = member_client.get(
        reverse("web:messages", args=[session.public_id]) + f"?after={PAGE_SIZE - 1}",
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "README.md" not in more and "after" in more
