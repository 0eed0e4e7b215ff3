"""What anonymisation replaces and with what: the project's known names, and their placeholders.

Names come from what the project knows, not from guessing: the team's members (full, first
and last name, username), the person each session was with (``Session.user_name``), the
authors of users' messages, and metadata fields that name a person (``user``, ``author``,
``owner`` ...). Project names are the names and slugs of the team and its projects. A name
is one alias of one person, so "John Smith", "John", "Smith" and "jsmith" are all "User-1".

Placeholders are numbered per project and kept (as ``Pseudonym`` rows keyed by a keyed hash
of the value, never the value), so the same person is the same "User-N" in every session of
the project, whenever each was anonymised.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import string
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings

from sessions.models import Message, Pseudonym, Session, SpeakerAlias
from teams.models import Membership, Project

# Metadata keys whose string value names a person.
PERSON_KEYS = re.compile(
    r"(?:^|_)(?:user|username|user_name|author|author_name|person|owner|committer|assignee"
    r"|reporter|sender_name|full_name|display_name|first_name|last_name|git_user)$",
    re.IGNORECASE,
)
# Shorter names would replace parts of ordinary words and code.
MIN_ALIAS_CHARS = 3
# Words of the placeholders themselves: a project named "Path" must not rewrite "/path/…".
_PLACEHOLDER_WORDS = frozenset({"user", "project", "path", "email", "phone", "ip", "removed"})
GENERIC = "[REMOVED]"
# A placeholder met again (a second run) is not a name.
_PLACEHOLDER = re.compile(r"User-\d+|Project-[A-Z]+|\[(?:EMAIL|PHONE|IP)-\d+\]|\[REMOVED\]")


@dataclass
class Alias:
    text: str
    identity: str  # who or what it names: "member:7", "name:bob", "project:3"
    kind: str  # "user" or "project"
    any_case: bool  # usernames and slugs match in any case; proper names not in lowercase


@dataclass
class Vocabulary:
    aliases: dict[str, Alias] = field(default_factory=dict)  # by casefolded text

    def add(self, text: str, identity: str, kind: str, *, any_case: bool = False) -> None:
        text = " ".join(text.split())
        key = text.casefold()
        if len(text) < MIN_ALIAS_CHARS or text.isdigit() or key in _PLACEHOLDER_WORDS:
            return
        if _PLACEHOLDER.fullmatch(text):
            return
        known = self.aliases.get(key)
        if known is None:
            self.aliases[key] = Alias(text, identity, kind, any_case or text.islower())
        elif any_case and known.identity == identity:
            known.any_case = True  # "E-Commerce" is also its slug, "e-commerce"

    def add_person(self, name: str) -> None:
        """A name met in a session: one of a known person's aliases, or a new person."""
        name = " ".join(name.split())
        if not name or "@" in name:
            return  # e-mail addresses are their own kind
        known = self.aliases.get(name.casefold())
        identity = known.identity if known else f"name:{name.casefold()}"
        self.add(name, identity, "user")
        if " " in name:  # "Bob Jones" is also "Bob" and "Jones" (unless they are someone's)
            for part in name.split():
                self.add(part, identity, "user")

    def add_people_in(self, value) -> None:
        """Names under person keys of a JSON value (metadata), at any depth."""
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and isinstance(key, str) and PERSON_KEYS.search(key):
                    self.add_person(item)
                else:
                    self.add_people_in(item)
        elif isinstance(value, list):
            for item in value:
                self.add_people_in(item)


def project_vocabulary(project: Project) -> Vocabulary:
    """The names the project knows: its team's members and projects, and the people its
    sessions name (as the session's person or the author of a user's message)."""
    vocabulary = Vocabulary()
    team = project.team
    for membership in Membership.objects.filter(team=team).select_related("user").order_by("pk"):
        user, identity = membership.user, f"member:{membership.user_id}"
        vocabulary.add(user.get_full_name(), identity, "user")
        vocabulary.add(user.first_name, identity, "user")
        vocabulary.add(user.last_name, identity, "user")
        vocabulary.add(user.get_username(), identity, "user", any_case=True)
    vocabulary.add(team.name, f"team:{team.pk}", "project")
    vocabulary.add(team.slug, f"team:{team.pk}", "project", any_case=True)
    for other in team.projects.order_by("pk"):
        vocabulary.add(other.name, f"project:{other.pk}", "project")
        vocabulary.add(other.slug, f"project:{other.pk}", "project", any_case=True)
    sessions = Session.objects.filter(project=project)
    for name in sessions.exclude(user_name="").values_list("user_name", flat=True).distinct():
        vocabulary.add_person(name)
    authors = Message.objects.filter(
        team_id=project.team_id, session__project=project, role="user"
    ).exclude(author="")
    for name in authors.values_list("author", flat=True).distinct():
        vocabulary.add_person(name)
    for metadata in sessions.exclude(metadata={}).values_list("metadata", flat=True):
        vocabulary.add_people_in(metadata)
    # What people are called besides their names ("Kate" for katherine_s), as learned from
    # the sessions: the same person, the same placeholder. Capitalised: a learned alias is
    # a proper name, and "will" in lower case is not Will.
    known = SpeakerAlias.objects.filter(project=project, is_agent=False)
    for alias, speaker in known.values_list("alias", "speaker").order_by("pk"):
        person = vocabulary.aliases.get(" ".join(speaker.split()).casefold())
        identity = person.identity if person else f"name:{speaker.casefold()}"
        vocabulary.add(alias[:1].upper() + alias[1:], identity, "user")
    return vocabulary


def _letters(number: int) -> str:
    """1 → A, 26 → Z, 27 → AA (spreadsheet columns)."""
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = string.ascii_uppercase[rest] + letters
    return letters


LABELS = {
    "user": lambda n: f"User-{n}",
    "project": lambda n: f"Project-{_letters(n)}",
    "email": lambda n: f"[EMAIL-{n}]",
    "phone": lambda n: f"[PHONE-{n}]",
    "ip": lambda n: f"[IP-{n}]",
}


class Pseudonyms:
    """The project's placeholders: the kept ones, and those this run gives out (written by
    ``save``, which an apply calls and a preview does not)."""

    def __init__(self, project: Project, *, numbered: bool = True):
        self.project = project
        self.numbered = numbered
        self.known: dict[tuple[str, str], str] = {}
        self.counts: dict[str, int] = {}
        self.new: list[Pseudonym] = []
        self.reload()

    def reload(self) -> None:
        """Read the kept placeholders again (another run may have given some out since),
        under the caller's project lock; those of this run not yet saved are dropped."""
        # Called before each session of a project's run: rows as tuples, not model instances
        # (a project with thousands of placeholders read them a thousand times over).
        rows = Pseudonym.objects.filter(project=self.project).values_list("kind", "digest", "label")
        self.known = {(kind, digest): label for kind, digest, label in rows}
        self.counts = Counter(kind for kind, _ in self.known)
        self.new = []

    def _digest(self, kind: str, identity: str) -> str:
        message = f"{self.project.pk}:{kind}:{identity}".encode()
        key = f"memoryapp-pseudonym:{settings.SECRET_KEY}".encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    def label(self, kind: str, identity: str) -> str:
        if not self.numbered:
            return GENERIC
        digest = self._digest(kind, identity)
        label = self.known.get((kind, digest))
        if label is None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            label = LABELS[kind](self.counts[kind])
            self.known[(kind, digest)] = label
            self.new.append(Pseudonym(project=self.project, kind=kind, digest=digest, label=label))
        return label

    def save(self) -> None:
        Pseudonym.objects.bulk_create(self.new)
        self.new = []


def alias_pattern(aliases: Iterable[Alias]) -> re.Pattern[str] | None:
    """One pattern for all aliases, longest first (so "John Smith" wins over "John"), each a
    whole word; a name's spaces match any whitespace."""
    texts = sorted({a.text for a in aliases}, key=len, reverse=True)
    if not texts:
        return None
    body = "|".join(r"\s+".join(map(re.escape, text.split())) for text in texts)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
