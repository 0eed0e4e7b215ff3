"""The archive's manifest: what format version wrote it and, per member, its SHA-256, size
and record count. ``verify`` reads every member once against it, before an import writes
anything: an archive of another version, with a member missing, added or changed, is
refused whole."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

FORMAT = "memoryapp-project"
VERSION = 1
MANIFEST = "manifest.json"
PROJECT = "project.json"
SESSIONS = "sessions.jsonl"
SECTIONS_DIR = "sections/"
_CHUNK = 1024 * 1024


class ArchiveRefused(ValueError):
    """The archive cannot be imported; nothing was written. ``member`` names the file of
    the archive at fault, when one is."""

    def __init__(self, message: str, *, member: str | None = None):
        super().__init__(f"{member}: {message}" if member else message)
        self.member = member


@dataclass
class Member:
    """One file of the archive as it is written: its checksum follows the bytes."""

    name: str
    records: int = 0
    size: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def add(self, data: bytes, records: int = 1) -> bytes:
        self.digest.update(data)
        self.size += len(data)
        self.records += records
        return data

    def entry(self) -> dict[str, Any]:
        return {"sha256": self.digest.hexdigest(), "bytes": self.size, "records": self.records}


def manifest(members: list[Member], **about: Any) -> bytes:
    document = {
        "format": FORMAT,
        "version": VERSION,
        **about,
        "members": {member.name: member.entry() for member in members},
    }
    return json.dumps(document, ensure_ascii=False, indent=2).encode()


def read_manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        document = json.loads(archive.read(MANIFEST))
    except KeyError:
        raise ArchiveRefused(
            f"no {MANIFEST}: this is not a memoryapp project archive", member=MANIFEST
        ) from None
    except ValueError as exc:
        raise ArchiveRefused(f"not valid JSON ({exc})", member=MANIFEST) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ArchiveRefused(f"'format' must be {FORMAT!r}", member=MANIFEST)
    version = document.get("version")
    if version != VERSION:
        raise ArchiveRefused(
            f"format version {version!r} is not one this instance reads (it reads "
            f"version {VERSION}); import it with the memoryapp version that wrote it, or a "
            "newer one",
            member=MANIFEST,
        )
    if not isinstance(document.get("members"), dict):
        raise ArchiveRefused("'members' must be an object", member=MANIFEST)
    return document


def verify(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The manifest, once every member listed has its size and checksum and no other file is
    there; ``ArchiveRefused`` otherwise."""
    document = read_manifest(archive)
    listed = document["members"]
    present = {info.filename for info in archive.infolist() if not info.is_dir()} - {MANIFEST}
    for name in sorted(present - set(listed)):
        raise ArchiveRefused("a file the manifest does not list", member=name)
    for name in sorted(set(listed) - present):
        raise ArchiveRefused("listed in the manifest but missing", member=name)
    for name, entry in listed.items():
        digest, size = hashlib.sha256(), 0
        try:
            with archive.open(name) as member:
                while chunk := member.read(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ArchiveRefused(f"unreadable ({exc})", member=name) from None
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        if digest.hexdigest() != expected or size != entry.get("bytes"):
            raise ArchiveRefused(
                f"wrong checksum: the manifest says sha256 {expected}, the file has "
                f"{digest.hexdigest()} ({size:,} bytes); the archive is damaged or was edited",
                member=name,
            )
    return document
