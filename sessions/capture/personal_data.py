"""Where personal contact data is in a text: e-mail addresses, phone numbers, IP addresses.

One definition for the two places that remove them: redaction at capture
(``sessions/capture/redaction.py``) and anonymisation (``sessions/forget/anonymize.py``).
Each ``find_*`` returns ``Found`` spans, in order, that do not overlap, with a normal form of
the value (so the same address written twice is recognised as one).

- Phone numbers are Google's libphonenumber rules (``phonenumbers``): a number must be valid
  for its country, written with ``+`` and a country code or as a national number of
  ``PHONE_DEFAULT_REGION``. Digits glued to other digits, dots, slashes or letters are never
  a phone number: that is what timestamps (``1772743184.9849733250``), versions, ids, hashes
  and paths look like.
- E-mail addresses: ``local@domain.tld`` with a letter-only top-level domain, so
  ``pkg@1.2.3`` is not one; ``git@host`` (an SSH remote) names no person and stays.
- IP addresses: v4 and v6, checked by ``ipaddress``; loopback and unspecified addresses
  (``127.0.0.1``, ``0.0.0.0``, ``::1``) say nothing about anyone and stay.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import phonenumbers
from django.conf import settings


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    value: str  # normal form: lowercase e-mail, E.164 phone number, compressed IP


EMAIL = re.compile(
    r"(?<![\w.%+-])(?P<local>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@"
    r"(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})"
    r"(?![\w-]|\.[A-Za-z0-9])"
)
# Local parts of service addresses that name no person.
_SERVICE_LOCALS = frozenset({"git"})


def find_emails(text: str) -> list[Found]:
    if "@" not in text:
        return []
    return [
        Found(m.start(), m.end(), m[0].lower())
        for m in EMAIL.finditer(text)
        if m["local"].lower() not in _SERVICE_LOCALS
    ]


# A phone number is written apart from other tokens: not glued to these characters.
_GLUE_BEFORE = frozenset("._/:#=@\\-+")
_GLUE_AFTER = frozenset("_/:#@\\")
# Enough digits for a phone number, allowing the usual separators: a cheap test that keeps
# the (slower) matcher off texts without one.
_DIGIT_RUN = re.compile(r"\d(?:[\s().-]{0,3}\d){6,}")


def _glued(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    if before.isalnum() or before in _GLUE_BEFORE:
        return True
    if after.isalnum() or after in _GLUE_AFTER:
        return True
    # "555 0100.5" or "555-0100-7": a dot or dash that goes on with a digit
    return after in ".-," and end + 1 < len(text) and text[end + 1].isdigit()


def find_phones(text: str) -> list[Found]:
    if not _DIGIT_RUN.search(text):
        return []
    found = []
    matcher = phonenumbers.PhoneNumberMatcher(
        text, settings.PHONE_DEFAULT_REGION, leniency=phonenumbers.Leniency.VALID
    )
    for match in matcher:
        if _glued(text, match.start, match.end):
            continue
        e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
        found.append(Found(match.start, match.end, e164))
    return found


_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
# Candidates only; ipaddress decides. A digit is required, and three groups or "::", so
# "std::map", "a:b" and clock times ("12:30:45") are not read as addresses.
_IPV6 = re.compile(
    r"(?<![\w:.])(?=[0-9A-Fa-f:]*\d)(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])"
)


def _address(candidate: str) -> str | None:
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if address.is_loopback or address.is_unspecified:
        return None
    return address.compressed


def find_ips(text: str) -> list[Found]:
    found = []
    if "." in text:
        found += [
            Found(m.start(), m.end(), value)
            for m in _IPV4.finditer(text)
            if (value := _address(m[0]))
        ]
    if "::" in text or text.count(":") >= 3:
        found += [
            Found(m.start(), m.end(), value)
            for m in _IPV6.finditer(text)
            if (value := _address(m[0]))
        ]
    return sorted(found, key=lambda f: f.start)


def replace_found(text: str, found: list[Found], replacement) -> str:
    """``text`` with each span of ``found`` (in order, not overlapping) replaced by
    ``replacement(span)``."""
    if not found:
        return text
    pieces, done = [], 0
    for span in found:
        pieces += [text[done : span.start], replacement(span)]
        done = span.end
    pieces.append(text[done:])
    return "".join(pieces)
