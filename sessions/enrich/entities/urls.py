"""URL: ``http(s)://``, ``ftp://``, ``ws(s)://``; e-mail addresses are only kept from being
read as files."""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import MAX_VALUE, URL
from sessions.enrich.entities.normalize import strip_url
from sessions.enrich.entities.scan import Scan, run_before

_URL_RE = re.compile(r"(?:https?|ftp|wss?)://[^\s<>\"'`]+", re.I)
_EMAIL_AT = re.compile(r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_EMAIL_LOCAL_REVERSED = re.compile(r"[\w.+-]{1,64}")


def scan_urls(scan: Scan, text: str, base: int) -> None:
    if "://" in text:
        for match in scan.each(_URL_RE.finditer(text)):
            scan.block(base + match.start(), base + match.end())
            url = strip_url(match.group())
            host = url.split("://", 1)[1].split("/", 1)[0]
            if len(url) <= MAX_VALUE and re.fullmatch(r"[\w.\[\]:@-]+", host or "$"):
                scan.add(URL, url, base + match.start(), base + match.start() + len(url))
    if "@" in text:
        for match in scan.each(_EMAIL_AT.finditer(text)):
            local = run_before(text, match.start(), _EMAIL_LOCAL_REVERSED, 64)
            if local:
                scan.block(base + match.start() - local, base + match.end())
