"""Secrets out of text before anything is written.

``redact(text)`` replaces what is a credential with ``[REDACTED:<kind>]`` and says how many
it replaced; ``redact_json(value)`` does the same through dicts and lists, and also
redacts a whole string stored under a secret-named key (``{"password": "hunter2"}``).

Two families of rules, applied in this order:

1. **Shapes** that are secrets wherever they appear: PEM private key blocks, provider keys
   with a fixed prefix (``sk-ant-``, ``sk-``, ``AKIA``, ``ghp_``, ``xoxb-``, ``AIza``,
   ``sk_live_``, ...), JWTs, ``Authorization: Bearer`` headers and the password of a URL
   (``postgres://user:pass@host``).
2. **Assignments** to a secret-named key (``...password``, ``...secret``, ``...token``,
   ``...api_key``, ``..._pass``, ``SECRET_KEY`` ...) in env, shell, config, YAML, JSON or
   code style: the key stays, the value goes, but only when the value is a literal.
   ``password = request.POST["password"]``, ``token = get_token()``, ``secret:
   ${{ secrets.X }}``, ``PASSWORD=$DB_PASSWORD`` and ``password: str`` are code or
   references and stay. A quoted value is a literal (unless it is a placeholder such as
   ``""``, ``"<your key>"`` or ``"YOUR_API_KEY"``); an unquoted one is redacted in
   ``UPPER_CASE=value`` env style (and ``--password=value`` flags), elsewhere only when
   it looks like a secret (six characters or more, a letter and a digit or symbol), so
   prose such as "password: must be 8 characters" stays.

Precision: ordinary words, git SHAs, UUIDs and hex digests are never matched by a shape
rule; they are redacted only as the value of a secret-named key.

Every regex is compiled once, anchored at the start of a token (so a failed match costs
the length of one token) and guarded by a cheap substring test; the whole pass is linear
in the length of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sessions.capture.personal_data import find_emails, find_phones, replace_found
from transcripts.sanitize import clean_json

MARK = "[REDACTED:{}]"
_MARK_PREFIX = "[REDACTED"


def _mark(kind: str) -> str:
    return MARK.format(kind)


# --- 1. shapes ------------------------------------------------------------------------------

_PEM = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
    # The body cannot contain "-----", so a scan stops at the next marker (linear even on
    # a text made of BEGIN lines); a block cut off before its END line is still redacted.
    r"(?:(?!-----)[A-Za-z0-9+/=\s:,.()\"'\-])*+"
    r"(?:-----END (?P=label)-----)?"
)

_Check = Callable[[str], bool] | None


def _has_digit_and_letter(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _mixed_case(token: str) -> bool:
    return any(c.isupper() for c in token) and any(c.islower() for c in token)


# Provider keys that start a token: one alternation (one pass over the text), each branch a
# named group; the check, if any, gets the part after the prefix.
_TOKEN_SHAPES: list[tuple[str, str, _Check]] = [
    ("anthropic_key", r"sk-ant-(?P<anthropic_key>[A-Za-z0-9_-]{20,})", None),
    # "sk-" + a long hyphenated name ("sk-learn-compatible-estimator") is not a key.
    (
        "openai_key",
        r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?P<openai_key>[A-Za-z0-9_-]{20,})",
        _has_digit_and_letter,
    ),
    (
        "github_token",
        r"(?:gh[pousr]_(?P<github_token>[A-Za-z0-9]{20,255})"
        r"|github_pat_[A-Za-z0-9_]{20,255})(?![\w-])",
        None,
    ),
    ("gitlab_token", r"glpat-(?P<gitlab_token>[A-Za-z0-9_-]{20,})", None),
    ("slack_token", r"xox[abprse]-(?P<slack_token>[A-Za-z0-9-]{10,})", None),
    ("google_api_key", r"AIza(?P<google_api_key>[0-9A-Za-z_-]{35})(?![\w-])", None),
    (
        "stripe_key",
        r"(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})",
        None,
    ),
    ("npm_token", r"npm_(?P<npm_token>[A-Za-z0-9]{36})(?![\w-])", None),
    ("huggingface_token", r"hf_(?P<huggingface_token>[A-Za-z]{34})(?![\w-])", _mixed_case),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?![\w-])",
        None,
    ),
]
_TOKEN_SHAPE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(f"(?P<is_{kind}>{pattern})" for kind, pattern, _ in _TOKEN_SHAPES)
    + ")"
)
_TOKEN_CHECKS = {f"is_{kind}": (kind, check) for kind, _, check in _TOKEN_SHAPES}
_TOKEN_HINTS = ("sk-", "gh", "glpat-", "xox", "AIza", "_live_", "_test_", "whsec_", "npm_")
_TOKEN_HINTS += ("hf_", "eyJ")

# Shapes with their own pass: (kind, pattern, substring the text must contain).
_OTHER_SHAPES: list[tuple[str, re.Pattern[str], str]] = [
    (
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        "A",
    ),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"),
        "hooks.slack.com",
    ),
]

_BEARER = re.compile(
    r"(?P<head>\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|basic)[ \t]+)"
    r"(?P<value>[A-Za-z0-9._~+/=-]{8,})",
    re.IGNORECASE,
)

_URL_CREDENTIALS = re.compile(
    r"(?<![\w+.-])(?P<head>[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/?#@\"'<>\[\]]+:)"
    r"(?P<password>[^\s/?#@\"'<>]+)@"
)

# --- 2. assignments -------------------------------------------------------------------------

_KEY_WORDS = (
    r"(?:password|passwd|passphrase|(?<![A-Za-z0-9])pass|secret|token"
    r"|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
    r"|signing[_-]?key|encryption[_-]?key)"
)
_SECRET_KEY_NAME = re.compile(rf"[\w.-]*?{_KEY_WORDS}(?:[_-]?key)?", re.IGNORECASE)

_ASSIGNMENT = re.compile(
    # The key starts at the start of a token: one attempt per token keeps this linear.
    r"(?<![\w.-])"
    r"(?P<q>\\?[\"']?)"
    rf"(?P<key>[\w.-]*?{_KEY_WORDS}(?:[_-]?key)?)"
    r"(?P=q)"
    r"(?P<sep>[ \t]*(?:=>|:=|=(?![=~])|:(?![:=/]))[ \t]*)"
    r"(?P<value>"
    r"\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\""  # \"...\" (JSON inside a JSON string)
    r"|\"(?:[^\"\\\n]|\\.)*\""
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|`[^`\n]*`"
    r"|[^\s\"'`,;&<]+"
    r")?",
    re.IGNORECASE,
)
_ASSIGNMENT_HINT = re.compile(
    r"pass|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|signing|encrypt",
    re.IGNORECASE,
)

# Values that are names, types or keywords rather than a secret.
_NOT_SECRET_WORDS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "yes", "no", "on", "off"}
    | {"str", "string", "bytes", "int", "integer", "bool", "boolean", "optional", "any"}
    | {"secretstr", "text", "required", "password", "secret", "token", "bearer", "basic"}
    | {"redacted", "hidden", "masked"}
)
# A value that is code: a (dotted) name called or subscripted, e.g. get_token(), os.environ[.
_CALL = re.compile(r"[A-Za-z_][\w.]*[ \t]*[(\[]")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w./-]*")
_PLACEHOLDER = re.compile(
    r"^(?:your|my|enter|insert|put|replace|add)[\s_-]"
    r"|[\s_-](?:here|goes[\s_-]here)$"
    r"|^[*xX.#?•_-]+$"
    r"|^<[^<>]*>$",
    re.IGNORECASE,
)
_REFERENCE_STARTS = ("$", "{{", "%(", "%s", "#{")


def _kind_of_key(key: str) -> str:
    low = key.lower()
    if "aws" in low and "secret" in low:
        return "aws_secret_access_key"
    if "pass" in low:
        return "password"
    if "token" in low:
        return "token"
    if "key" in low and "api" in low:
        return "api_key"
    return "secret"


def _is_placeholder(value: str) -> bool:
    """A quoted value that stands for a secret without being one."""
    stripped = value.strip()
    if not stripped or _MARK_PREFIX in stripped:
        return True
    if stripped.startswith(_REFERENCE_STARTS):
        return True
    if stripped.lower() in _NOT_SECRET_WORDS:
        return True
    return bool(_PLACEHOLDER.search(stripped))


def _looks_secret(value: str) -> bool:
    """An unquoted value outside env style: redact only what does not read as prose/code."""
    if len(value) < 6 or not any(c.isalpha() for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    if _IDENTIFIER.fullmatch(value):
        # hunter2, a8f5f167f44f..., Passw0rd; not password, api_key2 (code-like names).
        return has_digit and "_" not in value
    return has_digit or any(not c.isalnum() and c not in "-._" for c in value)


def _keep_unquoted(value: str, key: str, env_style: bool) -> bool:
    if not value or value.startswith(("$", "%", "{", "<", "(", "[", "@", "|", ">", "*", "!")):
        return True  # reference, template, code, YAML block indicator, mask, YAML tag
    if value.lower() in _NOT_SECRET_WORDS and not env_style:
        return True
    if value.lower() in ("none", "null", "nil", "true", "false", "undefined"):
        return True
    if _CALL.match(value):
        return True  # get_token(), os.environ["X"], request.POST["password"]
    if env_style:
        return False
    low = key.lower()
    if "aws" in low and "secret" in low and len(value) == 40:
        return False
    if _DOTTED.fullmatch(value) or _PATH.fullmatch(value):
        return True  # settings.SECRET_KEY, self.password, /run/secrets/db
    return not _looks_secret(value)


def _trim(value: str, env_style: bool) -> tuple[str, str]:
    """Split an unquoted value into what may be the secret and trailing punctuation."""
    end = len(value)
    while end:
        ch = value[end - 1]
        opener = {")": "(", "]": "[", "}": "{"}.get(ch)
        if opener is not None and value.count(ch, 0, end) > value.count(opener, 0, end):
            end -= 1  # f(token=abc123) -> "abc123" + ")"
        elif ch in ".:" and not env_style:
            end -= 1  # sentence punctuation
        else:
            break
    return value[:end], value[end:]


def _replace_assignment(match: re.Match[str]) -> str | None:
    """The replacement of one key/separator/value match; None keeps it."""
    value = match["value"]
    if not value:
        return None
    key = match["key"]
    kind = _kind_of_key(key)
    prefix = match[0][: match.start("value") - match.start()]
    if value.startswith('\\"'):
        inner, open_q, close_q = value[2:-2], '\\"', '\\"'
    elif value[0] in "\"'`":
        inner, open_q, close_q = value[1:-1], value[0], value[0]
    else:
        env_style = (
            match["sep"] == "=" and not match["q"] and key.upper() == key
        ) or key.startswith("-")
        core, tail = _trim(value, env_style)
        if _keep_unquoted(core, key, env_style):
            return None
        return f"{prefix}{_mark(kind)}{tail}"
    if _is_placeholder(inner):
        return None
    return f"{prefix}{open_q}{_mark(kind)}{close_q}"


def _redact_assignments(text: str) -> tuple[str, int]:
    """Assignments never span lines, so only lines holding a secret-ish word are matched."""
    count = 0
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    for hint in _ASSIGNMENT_HINT.finditer(text):
        if hint.start() < done:
            continue  # on a line already handled
        line_start = text.rfind("\n", 0, hint.start()) + 1
        line_end = text.find("\n", hint.end())
        line_end = len(text) if line_end < 0 else line_end
        pieces.append(text[done:line_start])
        piece, n = _sub_counted(_ASSIGNMENT, _replace_assignment, text[line_start:line_end])
        pieces.append(piece)
        count += n
        done = line_end
    if not pieces:
        return text, 0
    pieces.append(text[done:])
    return "".join(pieces), count


# --- driver ---------------------------------------------------------------------------------


def _sub_counted(
    pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str | None], text: str
) -> tuple[str, int]:
    """``pattern.subn`` where ``replace`` may keep a match (by returning None): only the
    matches it replaced are counted."""
    count = 0

    def substitute(match: re.Match[str]) -> str:
        nonlocal count
        replacement = replace(match)
        if replacement is None:
            return match[0]
        count += 1
        return replacement

    return pattern.sub(substitute, text), count


def _sub_shape(text: str, kind: str, pattern: re.Pattern[str]) -> tuple[str, int]:
    mark = _mark(kind)
    return pattern.subn(lambda _match: mark, text)


def _token_shape(match: re.Match[str]) -> str | None:
    kind, check = _TOKEN_CHECKS[match.lastgroup or ""]
    if check is not None and not check(match[kind]):
        return None
    return _mark(kind)


def _bearer(match: re.Match[str]) -> str | None:
    value = match["value"]
    # A real token is random: it has a digit, or both cases and some length; "TOKEN",
    # "ACCESS_TOKEN" and "<token>" are placeholders.
    if _is_placeholder(value) or not (
        any(c.isdigit() for c in value) or (_mixed_case(value) and len(value) >= 16)
    ):
        return None
    return match["head"] + _mark("bearer_token")


def _url_credentials(match: re.Match[str]) -> str | None:
    password = match["password"]
    if _is_placeholder(password) or password.startswith(("{", "%")):
        return None
    return f"{match['head']}{_mark('password')}@"


def redact(text: str) -> tuple[str, int]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and how many were replaced.

    Kinds: private_key, anthropic_key, openai_key, aws_access_key_id, github_token,
    gitlab_token, slack_token, slack_webhook, google_api_key, stripe_key, npm_token,
    huggingface_token, jwt, bearer_token, password (URL credentials and assignments),
    aws_secret_access_key, token, api_key, secret.
    """
    if not text:
        return text, 0
    total = 0
    if "PRIVATE KEY" in text:
        text, n = _sub_shape(text, "private_key", _PEM)
        total += n
    if any(hint in text for hint in _TOKEN_HINTS):
        text, n = _sub_counted(_TOKEN_SHAPE, _token_shape, text)
        total += n
    for kind, pattern, hint in _OTHER_SHAPES:
        if hint in text:
            text, n = _sub_shape(text, kind, pattern)
            total += n
    if "uthorization" in text or "UTHORIZATION" in text:
        text, n = _sub_counted(_BEARER, _bearer, text)
        total += n
    if "://" in text:
        text, n = _sub_counted(_URL_CREDENTIALS, _url_credentials, text)
        total += n
    if "=" in text or ":" in text:
        text, n = _redact_assignments(text)
        total += n
    return text, total


def is_secret_key(name: str) -> bool:
    """Whether a mapping key names a secret (``password``, ``DB_PASS``, ``api_key`` ...)."""
    return bool(_SECRET_KEY_NAME.fullmatch(name))


def redact_json(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with secrets redacted in every string, keys included.

    A non-empty string under a secret-named key (``"password"``, ``"api_key"``,
    ``"client_secret"``, ``"access_token"`` ...) is a literal by construction, so it is
    replaced whole unless it is a placeholder or the text rules already redacted in it.
    Numbers, booleans and null are kept. Tuples come back as tuples.
    """
    return clean_json(value, redact, member=_redact_secret_value)


def _redact_secret_value(key: str, item: Any) -> tuple[str, int] | None:
    """The redacted value of a secret-named key; None when the key or value is not one."""
    if not isinstance(item, str) or not is_secret_key(key) or _is_placeholder(item):
        return None
    redacted, n = redact(item)
    return (redacted, n) if n else (_mark(_kind_of_key(key)), 1)


# --- personal contact data, by project switch ----------------------------------------------


@dataclass(frozen=True)
class RedactionPolicy:
    """What a project redacts before storing messages: secrets, e-mail addresses (as
    ``[REDACTED:email]``), phone numbers (``[REDACTED:phone]``); each its own switch."""

    secrets: bool = True
    emails: bool = False
    phones: bool = False

    @classmethod
    def of(cls, project) -> RedactionPolicy:
        return cls(project.redact_secrets, project.redact_emails, project.redact_phones)

    def __bool__(self) -> bool:
        return self.secrets or self.emails or self.phones

    def text(self, text: str) -> tuple[str, int]:
        total = 0
        if self.secrets:
            text, total = redact(text)
        # After secrets: "postgres://user:pass@host" has lost its password, not become an
        # e-mail address.
        for on, find, kind in (
            (self.emails, find_emails, "email"),
            (self.phones, find_phones, "phone"),
        ):
            if on and text:
                found, mark = find(text), _mark(kind)
                text = replace_found(text, found, lambda _span: mark)  # noqa: B023 (used at once)
                total += len(found)
        return text, total

    def json(self, value: Any) -> tuple[Any, int]:
        return clean_json(value, self.text, member=_redact_secret_value if self.secrets else None)


def redact_for(project, value: Any) -> tuple[Any, int]:
    """``value`` (a string, or a JSON-like value of dicts and lists) as ``project`` stores
    it: through the policy its messages go through, and how many values were replaced. The
    one call every write path makes, so a project's switches act on everything it keeps."""
    policy = RedactionPolicy.of(project)
    if not policy or value is None:
        return value, 0
    if isinstance(value, str):
        return policy.text(value)
    return policy.json(value)


__all__ = ["MARK", "RedactionPolicy", "is_secret_key", "redact", "redact_for", "redact_json"]
