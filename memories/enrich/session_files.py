"""The memory files of an imported BMAD session folder (decisions.yaml, findings.yaml, …).

The sessions importer keeps them as text in ``session.metadata["memory_files"]`` (sessions
never make memories); here they become the session's memories, once, in the extraction run
that reads the session's first messages, with their ``turn_ref`` naming the transcript's
``## Turn <n>``. A file that does not pass the checks fails the extraction with its file,
entry and field, like any extraction failure.
"""

from __future__ import annotations

from memories.models import Memory
from memories.portable.load import import_files
from sessions.models import Message, Session


def import_session_files(session: Session, messages: list[Message]) -> dict[str, Memory]:
    """The memories made from the session's files, by the files' ids; {} when it has none
    or they were read in an earlier run."""
    files = (session.metadata or {}).get("memory_files")
    if not isinstance(files, dict) or not files or not messages:
        return {}
    if Message.objects.of_session(session).filter(seq__lt=messages[0].seq).exists():
        return {}  # not the first run over this session: its files are in already
    encoded = {name: str(text).encode() for name, text in files.items()}
    return import_files(session.project, encoded, session=session, by_turn=True).memories
