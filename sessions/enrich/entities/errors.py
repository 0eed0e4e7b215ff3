"""ERROR messages: tracebacks, panics, Rust and TypeScript error codes, HTTP error statuses,
segmentation faults and the ``error:``/``fatal:`` lines a tool printed. (Error class names,
``ValueError``, are found with the other identifiers, in ``code_names``.)"""

from __future__ import annotations

import re

from sessions.enrich.entities.kinds import ERROR
from sessions.enrich.entities.scan import Scan, char, has

MAX_ERROR_LINE = 120  # an "error: ..." line is cut here

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_PANIC = re.compile(r"^[ \t]*(panic: [^\n]{1,120})", re.M)
_RUST_CODE = re.compile(r"error\[(E\d{4})\]|(E0\d{3})")
_TS_CODE = re.compile(r"error (TS\d{4,5})\b")
_HTTP_STATUS = re.compile(
    r"([45]\d\d)[ \t]+(?:Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|"
    r"Method Not Allowed|Not Acceptable|Request Timeout|Conflict|Gone|Payload Too Large|"
    r"Unsupported Media Type|Unprocessable (?:Entity|Content)|Too Many Requests|"
    r"Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Gateway Timeout)\b",
    re.I,
)
_SEGFAULT = re.compile(r"Segmentation fault\b")
# An error line a tool printed: "fatal: not a git repository", "Error: payment failed".
_ERROR_LINE = re.compile(
    r"^[ \t]*((?:error|fatal|Error|ERROR|FATAL)(?:\[\w{1,10}\])?:[ \t]+\S[^\n]{2,300}"
    r"|npm ERR! [^\n]{3,300})",
    re.M,
)


def scan_errors(scan: Scan, text: str, base: int, output: bool) -> None:
    if "Traceback" in text:
        for match in scan.each(_TRACEBACK.finditer(text)):
            scan.add(ERROR, "Traceback", base + match.start(), base + match.start() + 9)
    if "panic: " in text:
        for match in scan.each(_PANIC.finditer(text)):
            value = match.group(1).rstrip()
            scan.add(ERROR, value, base + match.start(1), base + match.start(1) + len(value))
    if "E0" in text:
        for match in scan.each(_RUST_CODE.finditer(text)):
            group = 1 if match.group(1) else 2
            start, end = match.span(group)
            if group == 2 and (
                char(text, start - 1).isalnum()
                or char(text, end).isalnum()
                or "-" in (char(text, start - 1) + char(text, end))
            ):
                continue
            scan.add(ERROR, match.group(group), base + start, base + end)
    if "error TS" in text:
        for match in scan.each(_TS_CODE.finditer(text)):
            scan.add(ERROR, match.group(1), base + match.start(1), base + match.end(1))
    for match in scan.each(_HTTP_STATUS.finditer(text)):
        if char(text, match.start() - 1).isalnum() or char(text, match.start() - 1) in "._":
            continue
        scan.add(ERROR, match.group(), base + match.start(), base + match.end())
    if "Segmentation fault" in text:
        for match in scan.each(_SEGFAULT.finditer(text)):
            scan.add(ERROR, match.group(), base + match.start(), base + match.end())
    if output and has(text, "rror:", "RROR:", "atal:", "ATAL:", "rror[", "npm ERR!"):
        for match in scan.each(_ERROR_LINE.finditer(text)):
            value = match.group(1).strip()
            if len(value) > MAX_ERROR_LINE:
                cut = value[:MAX_ERROR_LINE]
                space = cut.rfind(" ")
                value = cut[:space] if space > MAX_ERROR_LINE // 2 else cut
            start = base + match.start(1)
            scan.add(ERROR, value, start, start + len(value))
