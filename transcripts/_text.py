"""Reading an importer's input as text: decoding (UTF-8, or UTF-16 with a byte-order mark),
refusing empty input, splitting lines. Errors are ``ImportFormatError`` with the line."""

from __future__ import annotations

from .base import ImportFormatError


def decode_text(data: bytes | bytearray | memoryview | str, *, what: str = "the file") -> str:
    """Decode ``data`` as UTF-8 text (a UTF-8 or UTF-16 byte-order mark is honoured).

    Raises with the line and byte offset of the first byte that is not UTF-8, so the
    person can find it; ``str`` input is returned as is.
    """
    if isinstance(data, str):
        return data
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ImportFormatError(f"expected bytes for {what}, got {type(data).__name__}")
    raw = bytes(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        # Windows tools (PowerShell's ">" redirection) write UTF-16 with a BOM.
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(
                f"{what} starts with a UTF-16 byte-order mark but is not valid UTF-16 "
                f"(byte offset {exc.start}); save it as UTF-8"
            ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ImportFormatError(
            f"invalid UTF-8 in {what} at byte offset {exc.start} (byte {column} of the line): "
            "the file must be UTF-8 text",
            line=line,
        ) from None


def require_text(text: str, *, what: str = "the file") -> None:
    """Refuse empty or whitespace-only input with a clear message."""
    if not text.strip():
        raise ImportFormatError(f"{what} is empty: there is nothing to import")


def split_lines(text: str) -> list[str]:
    r"""Split on "\n" only (a trailing "\r" is dropped).

    ``str.splitlines`` also splits on U+2028, U+0085, form feeds, ...: characters that
    JSON strings and Markdown prose may legitimately contain, raw.
    """
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]
