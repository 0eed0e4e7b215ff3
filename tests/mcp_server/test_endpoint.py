"""``/mcp`` as an HTTP endpoint: the API's tokens and their permissions, and what it refuses
before the MCP SDK sees a request."""

from __future__ import annotations

import json

import pytest

from memories.models import Memory
from sessions.models import Session
from teams.models import ApiToken, Project
from tests.mcp_server.conftest import Agent
from tests.mcp_server.test_tools import data, error

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {
    "HTTP_ACCEPT": "application/json, text/event-stream",
    "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
}


def post(client, body, **headers):
    return client.post("/mcp", json.dumps(body), content_type="application/json", **headers)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("authorization", "says"),
    [(None, "Bearer mem_"), ("Bearer mem_wrong", "Invalid or revoked"), ("Bearer", "Malformed")],
)
def test_a_request_without_a_valid_token_is_a_401_before_the_sdk(client, authorization, says):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = post(client, LIST_TOOLS, **MCP_HEADERS, **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert says in response.json()["detail"]
    assert response.json()["code"] == "MEM_E110"


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "delete", "put"])
def test_only_post_is_served_since_the_endpoint_is_stateless(client, project, method):
    token = ApiToken.issue(project)[1]
    response = getattr(client, method)("/mcp", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert "stateless" in response.json()["detail"]


@pytest.mark.django_db
def test_one_json_rpc_request_gets_one_json_answer(client, project):
    token = ApiToken.issue(project)[1]
    response = post(client, LIST_TOOLS, HTTP_AUTHORIZATION=f"Bearer {token}", **MCP_HEADERS)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert "Mcp-Session-Id" not in response
    names = {tool["name"] for tool in response.json()["result"]["tools"]}
    assert "search_sessions" in names


@pytest.mark.django_db
def test_a_malformed_message_is_a_json_rpc_error_not_a_crash(client, project):
    token = ApiToken.issue(project)[1]
    response = client.post(
        "/mcp",
        b"{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **MCP_HEADERS,
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700  # JSON-RPC's parse error


@pytest.mark.django_db(transaction=True)
def test_the_tokens_permissions_apply_as_on_the_rest_api(live_server, project):
    reader = Agent("http", live_server.url, ApiToken.issue(project, permissions=["read"])[1])
    refused = reader.call("record_memory", {"type": "finding", "content": "Disk is full"})
    assert "403" in error(refused) and "'write' permission" in error(refused)
    assert data(reader.call("list_recent_sessions")) == {"sessions": []}

    writer = Agent("http", live_server.url, ApiToken.issue(project, permissions=["write"])[1])
    saved = data(
        writer.call(
            "save_session", {"agent_name": "ops", "transcript": "User: hi\n\nAssistant: hello"}
        )
    )
    assert saved["id"]
    assert "'read' permission" in error(writer.call("resume_session", {"session_id": saved["id"]}))


@pytest.mark.django_db(transaction=True)
def test_a_team_level_token_works_in_the_project_of_the_directory_header(live_server, team):
    """The header the error asks for reaches the tools' API calls: a team-level token over
    /mcp writes into the project of the agent's working directory (created with 'projects'),
    and without 'projects' a new directory is refused naming the permission."""
    creator = ApiToken.issue(None, team=team, permissions=["read", "write", "projects"])[1]
    here = {"X-Memoryapp-Directory": "/home/ada/repos/shop"}
    agent = Agent("http", live_server.url, creator, headers=here)
    saved = data(agent.call("save_session", {"agent_name": "dev", "transcript": "User: hi"}))
    recorded = data(agent.call("record_memory", {"type": "decision", "content": "Ship Fridays"}))

    shop = Project.objects.get(team=team, directory="-home-ada-repos-shop")
    assert Session.objects.get(public_id=saved["id"]).project == shop
    assert Memory.objects.get(public_id=recorded["id"], project__team=team).project == shop
    listed = data(agent.call("list_recent_sessions"))["sessions"]
    assert [row["id"] for row in listed] == [saved["id"]]

    reader = ApiToken.issue(None, team=team, permissions=["read", "write"])[1]
    elsewhere = {"X-Memoryapp-Directory": "/home/ada/repos/new"}
    refused = Agent("http", live_server.url, reader, headers=elsewhere).call(
        "save_session", {"agent_name": "dev", "transcript": "User: hi"}
    )
    assert "403" in error(refused) and "'projects' permission" in error(refused)
    assert not Project.objects.filter(team=team, directory="-home-ada-repos-new").exists()
