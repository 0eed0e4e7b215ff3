"""A local chat-completions server that answers every request with a recorded answer from
``llm_answers/`` (or a given status and body), and keeps the requests it was sent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.llm_stub import ChatServer

ANSWERS = Path(__file__).parent / "llm_answers"


def recorded(name: str) -> tuple[int, dict]:
    answer = json.loads((ANSWERS / f"{name}.json").read_text())
    return answer["status"], answer["body"]


class StubLLM(ChatServer):
    """Every request answered with ``status`` and ``body`` (a recorded answer's)."""

    def __init__(self, status: int, body: dict):
        payload = json.dumps(body).encode()
        super().__init__(lambda _request: (status, payload))
