"""The retrieval benchmark's question sets, read from their files (no database needed).

A captured set (LoCoMo, the LongMemEval sample) is a list of ``Unit``: one team + project,
its sessions as ``POST /api/v1/sessions`` bodies, and its questions. Every message carries a
client id ``<session key>:<turn>``, so a ranked message maps back to its turn and its session
(``session_key``). The coding sets are imported from transcript files instead: their gold is
found in the stored messages after the import (``bench/retrieval.py``). ``coding`` asks about
the transcripts of ``shared/samples``; ``coding-dev`` (held out, issue 39) about the eight
real coding-agent transcripts of ``shared/data/memory_dev`` that no ranking was tuned on.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import zlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from bench.harness import REPO_ROOT, SHARED

LOCOMO_FILE = SHARED / "data" / "locomo" / "locomo10.json"
LONGMEMEVAL_FILE = (
    SHARED / "data" / "longmemeval_derived" / "longmemeval_s_3haystacks_MuhammadNoor7.json"
)
SAMPLES = SHARED / "samples"
CODING_QUESTIONS = REPO_ROOT / "bench" / "coding_questions.yaml"
DEV_TRANSCRIPTS = SHARED / "data" / "memory_dev" / "transcripts"
CODING_DEV_QUESTIONS = REPO_ROOT / "bench" / "coding_questions_dev.yaml"

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNE, HOLDOUT = range(0, 5), range(5, 10)
CODING_CATEGORIES = ("fix", "decision", "howto", "error", "command", "request")
# A LongMemEval sample question other than a haystack's original one (see longmemeval_units).
DERIVED = "derived"


@dataclass
class Question:
    id: str
    text: str
    category: str
    gold: list[str]  # message keys ("<session key>:<turn>"); empty when only sessions are
    gold_sessions: list[str]


@dataclass
class Unit:
    """One team + project: the sessions to capture and the questions asked of it."""

    team: str
    project: str
    part: str  # "tune" | "holdout" for LoCoMo, the haystack for LongMemEval
    sessions: list[dict]
    questions: list[Question]
    texts: dict[str, str] = field(default_factory=dict)  # message key -> the text captured
    docs: dict[str, str] = field(default_factory=dict)  # message key -> the baselines' text
    skipped: list[str] = field(default_factory=list)  # gold ids that resolve to no turn


def session_key(message_key: str) -> str:
    return message_key.rsplit(":", 1)[0]


# --- LoCoMo ------------------------------------------------------------------------------


def load_locomo() -> list[dict]:
    return json.loads(LOCOMO_FILE.read_text())


def turn_text(turn: dict) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares an image: {turn['blip_caption']}]"
    return text


def sessions_of(conversation: dict) -> list[tuple[int, datetime, list[dict]]]:
    conv = conversation["conversation"]
    found = []
    for key, turns in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list):
            n = int(match.group(1))
            when = datetime.strptime(conv[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
            found.append((n, when, turns))
    return sorted(found)


def questions_of(conversation: dict, known: set[str], skipped: list[str]) -> list[dict]:
    """Questions of categories 1-4 with their gold turns (ids that resolve to no turn go to
    ``skipped``; a question left with none is dropped)."""
    out = []
    for qa in conversation["qa"]:
        if qa.get("category") not in LOCOMO_CATEGORIES:
            continue
        ids = [i for raw in qa.get("evidence", []) for i in re.split(r"[;,\s]+", raw) if i]
        gold = [i for i in ids if i in known]
        skipped += [f"{conversation['sample_id']}:{i}" for i in ids if i not in known]
        if gold:
            out.append({**qa, "gold": gold})
    return out


def locomo_capture_body(conversation: dict, n: int, when: datetime, turns: list[dict]) -> dict:
    """One LoCoMo session as ``POST /api/v1/sessions`` takes it: one message per turn, the
    speaker as author, the session's date as the time, the ``dia_id`` as client id."""
    conv = conversation["conversation"]
    stamp = when.isoformat() + "Z"
    return {
        "external_id": f"{conversation['sample_id']}-session-{n}",
        "agent_name": "locomo",
        "title": f"{conv['speaker_a']} and {conv['speaker_b']}, session {n}",
        "started_at": stamp,
        "messages": [
            {
                "role": "user",
                "author": t["speaker"],
                "content": turn_text(t),
                "timestamp": stamp,
                "client_id": t["dia_id"],
            }
            for t in turns
        ],
    }


def locomo_units(indices: list[int], data: list[dict] | None = None) -> dict[int, Unit]:
    data = data if data is not None else load_locomo()
    units = {}
    for index in indices:
        conversation = data[index]
        sessions = sessions_of(conversation)
        texts = {t["dia_id"]: turn_text(t) for _, _, ts in sessions for t in ts}
        skipped: list[str] = []
        questions = [
            Question(
                id=f"{conversation['sample_id']}-q{i}",
                text=qa["question"],
                category=LOCOMO_CATEGORIES[qa["category"]],
                gold=qa["gold"],
                gold_sessions=sorted({session_key(g) for g in qa["gold"]}),
            )
            for i, qa in enumerate(questions_of(conversation, set(texts), skipped))
        ]
        units[index] = Unit(
            team=f"locomo-{index}",
            project="conversation",
            part="tune" if index in TUNE else "holdout",
            sessions=[locomo_capture_body(conversation, *s) for s in sessions],
            questions=questions,
            texts=texts,
            docs={
                t["dia_id"]: f"{t['speaker']}: {turn_text(t)}" for _, _, ts in sessions for t in ts
            },
            skipped=skipped,
        )
    return units


# --- LoCoMo as a chat --------------------------------------------------------------------
# Three things real chats between people have and LoCoMo does not: a turn is sent as several
# short messages, people's display names are handles, not the names they call each other
# by, and many people type in lower case. ``locomo-chat`` is LoCoMo with all three: each
# turn split into its sentences, one message each, each speaker renamed to a handle
# ("Caroline" -> "car_57"), and the second speaker writing in lower case ("hey caroline!");
# the questions and their gold turns are LoCoMo's, so a turn is found when any of its
# messages is.

CHAT_PIECE = "#"  # a chat message's key: "<turn key>#<sentence>"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\s\[])")


def chat_pieces(text: str) -> list[str]:
    """A turn as the messages a person would send: its sentences (an image's caption stays
    with the sentence before it)."""
    return [piece for piece in _SENTENCE_END.split(text) if piece.strip()]


def handle(name: str) -> str:
    """A display name as a chat app shows it: "Caroline" -> "car_57"."""
    return f"{name.lower()[:3]}_{zlib.crc32(name.encode()) % 90 + 10}"


def turn_of(message_key: str) -> str:
    return message_key.split(CHAT_PIECE)[0]


def locomo_chat_units(indices: list[int], data: list[dict] | None = None) -> dict[int, Unit]:
    data = data if data is not None else load_locomo()
    units = {}
    for index, unit in locomo_units(indices, data).items():
        sessions, docs = [], {}
        lower = data[index]["conversation"]["speaker_b"]
        for body in unit.sessions:
            names = {m["author"] for m in body["messages"]}
            title = body["title"]
            for name in names:
                title = title.replace(name, handle(name))
            messages = []
            for m in body["messages"]:
                content = m["content"].lower() if m["author"] == lower else m["content"]
                author = handle(m["author"])
                for n, piece in enumerate(chat_pieces(content)):
                    key = f"{m['client_id']}{CHAT_PIECE}{n}"
                    messages.append({**m, "author": author, "content": piece, "client_id": key})
                    docs[key] = f"{author}: {piece}"
            sessions.append({**body, "title": title, "messages": messages})
        units[index] = replace(unit, team=f"locomo-chat-{index}", sessions=sessions, docs=docs)
    return units


# --- LongMemEval sample ------------------------------------------------------------------


def load_longmemeval() -> list[dict]:
    return json.loads(LONGMEMEVAL_FILE.read_text())


def longmemeval_units(data: list[dict] | None = None) -> list[Unit]:
    """Each haystack as its own project, one session per haystack session (its date from
    ``haystack_dates``), its user/assistant turns as messages; each of its questions.

    The sample's questions share one ``question_type`` per haystack, which describes only the
    haystack's original LongMemEval question: the one whose answer sessions are the sessions
    holding ``has_answer`` turns. That question gets the type and those turns as turn-level
    gold; the third party's added questions are ``derived`` (sessions only)."""
    data = data if data is not None else load_longmemeval()
    units = []
    for item in data:
        ids = item["haystack_session_ids"]
        sessions, texts, answer_turns = [], {}, []
        for sid, date, turns in zip(
            ids, item["haystack_dates"], item["haystack_sessions"], strict=True
        ):
            stamp = datetime.strptime(date, "%Y/%m/%d (%a) %H:%M").isoformat() + "Z"
            messages = []
            for i, turn in enumerate(turns):
                key = f"{sid}:{i}"
                texts[key] = turn["content"]
                if turn.get("has_answer"):
                    answer_turns.append(key)
                messages.append(
                    {
                        "role": turn["role"],
                        "content": turn["content"],
                        "timestamp": stamp,
                        "client_id": key,
                    }
                )
            sessions.append(
                {
                    "external_id": f"{item['question_id']}-{sid}",
                    "agent_name": "longmemeval",
                    "title": f"haystack {item['question_id']}, session {sid}",
                    "started_at": stamp,
                    "messages": messages,
                }
            )
        answer_sessions = {session_key(k) for k in answer_turns}
        questions = []
        for i, (text, gold_sessions) in enumerate(
            zip(item["questions"], item["answer_session_ids"], strict=True)
        ):
            missing = set(gold_sessions) - set(ids)
            if missing:
                raise SystemExit(f"LongMemEval {item['question_id']} q{i}: no session {missing}")
            original = bool(answer_sessions) and set(gold_sessions) == answer_sessions
            questions.append(
                Question(
                    id=f"{item['question_id']}-q{i}",
                    text=text,
                    category=item.get("question_type", "all") if original else DERIVED,
                    gold=answer_turns if original else [],
                    gold_sessions=list(gold_sessions),
                )
            )
        units.append(
            Unit(
                team=f"longmemeval-{item['question_id']}",
                project="haystack",
                part=item["question_id"],
                sessions=sessions,
                questions=questions,
                texts=texts,
                docs=texts,
            )
        )
    return units


# --- coding transcripts ------------------------------------------------------------------


def sample_transcripts(root: Path = SAMPLES) -> list[Path]:
    """Every transcript under ``root`` (``shared/samples`` by default) the CLI would upload
    (an aider input history goes with its chat history, never alone)."""
    from transcripts.files import find_transcripts

    return [
        p
        for p in find_transcripts([root])
        if p.name != "README.md" and p.parent != root and "LICENSE" not in p.name
    ]


def load_coding_questions(path: Path = CODING_QUESTIONS, root: Path = SAMPLES) -> list[dict]:
    """A coding question set, checked: fields, category, a source that exists under ``root``
    (``SAMPLES`` for ``coding``, ``DEV_TRANSCRIPTS`` for ``coding-dev``)."""
    import yaml

    questions = yaml.safe_load(path.read_text())
    if not isinstance(questions, list) or not questions:
        raise SystemExit(f"{path}: expected a non-empty list of questions")
    seen = set()
    for q in questions:
        where = f"{path}: question {q.get('id', '?')}"
        for name in ("id", "category", "question", "source", "gold"):
            if not q.get(name):
                raise SystemExit(f"{where}: no {name}")
        if q["id"] in seen:
            raise SystemExit(f"{where}: id used twice")
        seen.add(q["id"])
        if q["category"] not in CODING_CATEGORIES:
            raise SystemExit(f"{where}: category {q['category']!r} not in {CODING_CATEGORIES}")
        if not (root / q["source"]).is_file():
            raise SystemExit(f"{where}: no sample file {q['source']} under {root}")
        if not isinstance(q["gold"], list) or not all(isinstance(g, str) and g for g in q["gold"]):
            raise SystemExit(f"{where}: gold must be a list of non-empty strings")
        q["gold"] = [resolve_gold(g, root / q["source"], where) for g in q["gold"]]
    return questions


GOLD_REFERENCE = re.compile(r"m(\d+):(\d+)-(\d+):([0-9a-f]{12})")


@functools.cache
def _message_texts(path: Path) -> tuple[str, ...]:
    from transcripts import parse_path

    return tuple(m.content for session in parse_path(path) for m in session.messages)


def resolve_gold(gold: str, path: Path, where: str = "") -> str:
    """A gold as the text it names: a reference ``m<index>:<start>-<end>:<sha256 prefix>``
    (bench/coding_questions_dev.yaml: that set names where its answer is, not the answer, as
    its transcripts ask) is read from the transcript and checked against its hash; any other
    gold is the text itself."""
    reference = GOLD_REFERENCE.fullmatch(gold)
    if reference is None:
        return gold
    index, start, end, digest = reference.groups()
    texts = _message_texts(path)
    if int(index) >= len(texts):
        raise SystemExit(f"{where}: {gold}: {path.name} has {len(texts)} messages")
    span = texts[int(index)][int(start) : int(end)]
    if hashlib.sha256(span.encode()).hexdigest()[:12] != digest:
        raise SystemExit(f"{where}: {gold}: the text there changed (an importer change?)")
    return span
