"""A bare chat message (``{"role": …, "content": …}``) is Anthropic's or OpenAI's: which one
its tool fields and content blocks show (``anthropic_session`` and ``openai_chat`` both ask)."""

from __future__ import annotations

from typing import Any

from ._json import tag


def is_chat_message(obj: dict[str, Any]) -> bool:
    return "role" in obj and ("content" in obj or "tool_calls" in obj)


def message_flavour(objs: list[dict[str, Any]]) -> str:
    """Anthropic blocks (tool_use/tool_result) or OpenAI fields (tool_calls/tool_call_id)?
    The first message that shows either decides; '' when none does."""
    for obj in objs:
        if "tool_calls" in obj or "tool_call_id" in obj or tag(obj, "role") == "function":
            return "openai_chat"
        content = obj.get("content")
        if isinstance(content, list):
            kinds = {tag(b) for b in content if isinstance(b, dict)}
            if kinds & {"tool_use", "tool_result", "thinking"}:
                return "anthropic_session"
            if kinds & {"image_url", "input_audio"}:
                return "openai_chat"
    return ""
