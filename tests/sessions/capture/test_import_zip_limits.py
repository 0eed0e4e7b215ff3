"""Zip bombs (issue 14 #3): an ``anthropic_session`` archive is read within limits on the
decompressed size of each file, of all of them and on the compression ratio, streaming, and
refused at once with 413 and the numbers; the web process's memory does not grow with what
the archive claims to hold."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile

import pytest
from rest_framework.test import APIClient

from sessions.models import Message, Session
from teams.models import ApiToken
from transcripts import ImportFormatError, ImportTooLarge, UnzipLimits, parse

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
ZEROS = bytes(MiB)


@pytest.fixture
def agent(project):
    _, raw = ApiToken.issue(project, name="test")
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def zeros_zip(mebibytes: int, *, level: int = 6, folder: str = "bomb") -> bytes:
    """A session folder whose transcript.jsonl is ``mebibytes`` MiB of zeros, written a MiB
    at a time so that building it never holds more than one MiB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        archive.writestr(f"{folder}/metadata.json", json.dumps({"title": "bomb"}))
        with archive.open(f"{folder}/transcript.jsonl", "w", force_zip64=True) as member:
            for _ in range(mebibytes):
                member.write(ZEROS)
    return buffer.getvalue()


def transcript(lines: int, seed: str) -> bytes:
    """JSON Lines of distinct text, which compresses like real transcripts do (a few to 1)."""
    return "\n".join(
        json.dumps({"role": "user", "content": f"{seed} {i} {hash((seed, i)):x} " * 8})
        for i in range(lines)
    ).encode()


def folders_zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def post_zip(agent, data: bytes):
    return agent.post(
        "/api/v1/import?format=anthropic_session", data, content_type="application/zip"
    )


def nothing_written():
    return Session.objects.count() == 0 and Message.objects.count() == 0


@pytest.fixture(scope="module")
def gibibyte_bomb() -> bytes:
    # 1 GiB of zeros; level 1 keeps building it quick (~230:1, a few MB), level 9 gives 1000:1.
    return zeros_zip(1024, level=1)


def test_a_zip_bomb_is_refused_at_once_with_the_numbers_and_memory_stays_flat(
    agent, gibibyte_bomb, settings
):
    tracemalloc.start()
    try:
        response = post_zip(agent, gibibyte_bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 413, response.content[:500]
    body = response.json()
    assert body["member"] == "bomb/transcript.jsonl"
    assert body["member_bytes"] == 1024 * MiB
    assert body["member_limit_bytes"] == settings.IMPORT_UNZIP_MAX_MEMBER_BYTES
    assert body["total_limit_bytes"] == settings.IMPORT_UNZIP_MAX_BYTES
    assert body["compressed_bytes"] < len(gibibyte_bomb)
    assert body["ratio"] > body["ratio_limit"] == settings.IMPORT_UNZIP_MAX_RATIO
    assert f"{1024 * MiB:,} bytes" in body["detail"]
    # The request holds the upload a few times over, never what it expands to.
    assert peak < 8 * len(gibibyte_bomb) + 32 * MiB, f"peak {peak:,} bytes"
    assert nothing_written()


def test_a_file_over_the_ratio_is_refused_before_it_is_inflated(agent, settings):
    settings.IMPORT_UNZIP_MAX_MEMBER_BYTES = settings.IMPORT_UNZIP_MAX_BYTES = 64 * MiB
    response = post_zip(agent, zeros_zip(8))
    assert response.status_code == 413, response.content[:500]
    body = response.json()
    assert body["member_bytes"] == 8 * MiB
    assert body["ratio"] > 500 and body["ratio_limit"] == 100
    assert "100:1" in body["detail"]
    assert nothing_written()


def test_files_within_limits_but_over_the_total_are_refused(agent, settings):
    one, two = transcript(3000, "one"), transcript(3000, "two")
    settings.IMPORT_UNZIP_MAX_MEMBER_BYTES = len(one) + 1
    settings.IMPORT_UNZIP_MAX_BYTES = len(one) + len(two) - 1
    response = post_zip(agent, folders_zip({"a/transcript.jsonl": one, "b/transcript.jsonl": two}))
    assert response.status_code == 413, response.content[:500]
    body = response.json()
    assert body["total_bytes"] == len(one) + len(two)
    assert body["total_limit_bytes"] == settings.IMPORT_UNZIP_MAX_BYTES
    assert nothing_written()
    settings.IMPORT_UNZIP_MAX_BYTES = len(one) + len(two)
    assert post_zip(agent, folders_zip({"a/transcript.jsonl": one})).status_code == 201


def test_a_file_over_the_member_limit_is_refused(agent, settings):
    data = transcript(3000, "big")
    settings.IMPORT_UNZIP_MAX_MEMBER_BYTES = len(data) - 1
    response = post_zip(agent, folders_zip({"s/transcript.jsonl": data}))
    assert response.status_code == 413, response.content[:500]
    body = response.json()
    assert body["member_bytes"] == len(data)
    assert body["member_limit_bytes"] == len(data) - 1
    assert nothing_written()


def lying_about_its_size(archive: bytes, name: str, declared: int) -> bytes:
    """``archive`` with the central directory entry of ``name`` claiming ``declared``
    decompressed bytes (zipfile trusts the central directory)."""
    start = archive.index(b"PK\x01\x02")
    while True:
        name_length = struct.unpack_from("<H", archive, start + 28)[0]
        if archive[start + 46 : start + 46 + name_length] == name.encode():
            break
        start = archive.index(b"PK\x01\x02", start + 4)
    return archive[: start + 24] + struct.pack("<I", declared) + archive[start + 28 :]


def test_an_archive_lying_about_sizes_never_inflates_past_what_it_declares():
    real = folders_zip({"s/transcript.jsonl": bytes(16 * MiB)})
    forged = lying_about_its_size(real, "s/transcript.jsonl", 1000)
    tracemalloc.start()
    try:
        with pytest.raises(ImportFormatError) as refused:
            parse(forged, format="anthropic_session", unzip_limits=UnzipLimits())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not isinstance(refused.value, ImportTooLarge)
    assert "not a readable zip archive" in str(refused.value)  # the CRC does not match
    assert peak < 8 * MiB, f"peak {peak:,} bytes"


def test_reading_stops_one_chunk_past_a_limit():
    """The check runs as the file is read, not only on what the archive declares."""
    from transcripts.formats import anthropic_session

    data = folders_zip({"s/transcript.jsonl": transcript(20_000, "x")})
    limits = UnzipLimits(member_bytes=2 * MiB, total_bytes=100 * MiB, ratio=1000)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        [info] = archive.infolist()
        assert info.file_size > 2 * MiB + anthropic_session._CHUNK
        tracemalloc.start()
        try:
            with pytest.raises(ImportTooLarge) as refused:
                anthropic_session._read_member(archive, info, 0, limits)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert refused.value.numbers["member_bytes"] <= 2 * MiB + anthropic_session._CHUNK
    assert peak < 2 * MiB + 3 * anthropic_session._CHUNK
