"""What the campaign asserts of one answer: no word a caller may not read, a 404 that is the
same as for a session that never existed, and answers equal to those of a world without the
private session (issue 38: "results must be identical to a world where the private sessions
do not exist")."""

from __future__ import annotations

import io
import json
import re
import zipfile

from tests.isolation.world import TAGS, Reading, World, forbidden_words

# What a caller reads of each session (by its tag), by caller. Tokens read as the person they
# act for; a team token (no person) and a token acting for a teammate read what the team reads.
TEAM_MEMBER = {
    "private": Reading.NONE,
    "summary": Reading.SUMMARY,
    "team": Reading.CONTENT,
    "otherteam": Reading.NONE,
}
OWNER = {"private": Reading.CONTENT, "summary": Reading.CONTENT, "team": Reading.CONTENT}
OUTSIDER = {"private": Reading.NONE, "summary": Reading.NONE, "team": Reading.NONE}
READS = {
    "owner": {**OWNER, "otherteam": Reading.NONE},
    "owner_token": {**OWNER, "otherteam": Reading.NONE},
    "admin": {**TEAM_MEMBER, "private": Reading.LISTED},
    "member": TEAM_MEMBER,
    "viewer": TEAM_MEMBER,
    "member_token": TEAM_MEMBER,
    "team_token": TEAM_MEMBER,
    "outsider": {**OUTSIDER, "otherteam": Reading.CONTENT},
    "outsider_token": {**OUTSIDER, "otherteam": Reading.CONTENT},
}
CALLERS = tuple(READS)
PEOPLE = ("owner", "admin", "member", "viewer", "outsider")
TOKENS = ("owner_token", "member_token", "team_token", "outsider_token")
# Those for whom the private session must not exist at all.
BLIND_TO_PRIVATE = tuple(c for c in CALLERS if READS[c]["private"] == Reading.NONE)
# Those whose answers are compared with a world without the private session: a teammate in
# person, by a token acting for it, and a team token (a viewer reads as a member does, and
# another team's caller is held apart by team first; the words' checks cover both).
COMPARED = ("member", "member_token", "team_token")


def reads(caller: str, tag: str) -> int:
    return READS[caller][tag]


def name(reading: int) -> str:
    return Reading.NAMES[reading]


def text_of(response) -> str:
    """Everything an answer says, as text: a zip's members (an export, an archive) and a
    streamed body included."""
    if getattr(response, "streaming", False):
        raw = b"".join(response.streaming_content)
    else:
        raw = response.content
    if raw[:4] == b"PK\x03\x04":
        parts = []
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            for info in archive.infolist():
                parts.append(info.filename)
                parts.append(archive.read(info).decode("utf-8", "replace"))
        return "\n".join(parts)
    return raw.decode("utf-8", "replace")


def leaks(world: World, caller: str, text: str) -> list[str]:
    """The words in ``text`` of sessions ``caller`` may not read that far: '<word> (of the
    <tag> session, read at <reading>)'. A session it may not list also may not be named by
    its id."""
    found = []
    for tag in TAGS:
        reading = reads(caller, tag)
        secret = forbidden_words(tag, reading)
        if reading == Reading.NONE:
            secret = [*secret, world.sessions[tag].public_id]
        found += [
            f"{word!r} (of the {tag} session, which {caller} reads at '{name(reading)}')"
            for word in secret
            if word.lower() in text.lower()
        ]
    return found


def assert_no_leak(world: World, caller: str, where: str, text: str) -> None:
    found = leaks(world, caller, text)
    assert not found, f"{caller} on {where}: the answer shows " + "; ".join(found)


# --- answers compared with a world without the private session ------------------------------

VOLATILE_KEYS = re.compile(
    r"(^|_)(ms|took|elapsed|timing|timings|duration|generated_at|last_used_at|now|"
    r"accessed_at|last_accessed_at|read_at|queried_at|cursor|next|previous|access_count|"
    r"accesses|read_count)$"
)


def stable_json(value):
    """``value`` without what may change between two identical requests (timings, cursors,
    the read counts the first request raised) and without scores (floats): ids, order,
    counts and texts stay."""
    if isinstance(value, dict):
        return {k: stable_json(v) for k, v in value.items() if not VOLATILE_KEYS.search(k)}
    if isinstance(value, list):
        return [stable_json(v) for v in value]
    if isinstance(value, float):
        return "<float>"
    return value


HTML_VOLATILE = [
    (re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"'), 'name="csrfmiddlewaretoken"'),
    (re.compile(r'(?i)(csrf[-_]?token["\']?\s*[:=]\s*["\'])[^"\']*'), r"\1"),
    (re.compile(r'nonce="[^"]*"'), 'nonce=""'),
    (re.compile(r"\b\d+(\.\d+)? ?ms\b"), "<ms>"),
]


def stable(response) -> object:
    """What of an answer must not change when a session the caller may not read is gone."""
    content_type = response.get("Content-Type", "")
    if "json" in content_type:
        try:
            return (response.status_code, stable_json(json.loads(response.content)))
        except ValueError:
            pass
    text = text_of(response)
    for pattern, replacement in HTML_VOLATILE:
        text = pattern.sub(replacement, text)
    return (response.status_code, text)


def normalized_text(response, real_id: str = "", fake_id: str = "") -> str:
    """An answer's text without its volatile parts, with ``real_id`` (or ``fake_id``) said
    as <id>."""
    text = text_of(response)
    for pattern, replacement in HTML_VOLATILE:
        text = pattern.sub(replacement, text)
    for public_id in filter(None, (real_id, fake_id)):
        text = text.replace(public_id, "<id>")
    return text


def first_difference(a, b, path="") -> str:
    """Where two stable answers first differ, said briefly."""
    if type(a) is not type(b):
        return f"{path or 'answer'}: {str(a)[:200]!r} != {str(b)[:200]!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}: present in only one ({'with' if key in a else 'without'})"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path or 'answer'}: {len(a)} items with the private session, {len(b)} without"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    if isinstance(a, str) and a != b:
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        at = min(len(a), len(b)) if at is None else at
        return (
            f"{path or 'text'} differs at {at}: with: {a[max(0, at - 80) : at + 120]!r}; "
            f"without: {b[max(0, at - 80) : at + 120]!r}"
        )
    return f"{path or 'answer'}: {str(a)[:200]!r} != {str(b)[:200]!r}"


def remove_private_session(world: World) -> None:
    """Make this test's transaction a world where the private session never existed: it,
    its messages, vectors, entities and memories (cascade), the owner's private diary entries
    made of it; and forget what the search caches counted."""
    from memories.diary.models import DiaryEntry
    from search import keyword
    from search.speed import team_indexes
    from sessions.models import Session

    private = world.sessions["private"]
    DiaryEntry.objects.filter(
        visibility="private", owner=world.owner, sessions__contains=[private.public_id]
    ).delete()
    Session.objects.filter(pk=private.pk).delete()
    keyword._documents_cache.clear()
    keyword._stats_cache["at"] = float("-inf")
    team_indexes.forget()


def clear_search_caches() -> None:
    from search import keyword
    from search.speed import team_indexes

    keyword._documents_cache.clear()
    team_indexes.forget()
