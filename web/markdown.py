"""Message content as safe HTML: Markdown (raw HTML off), code highlighted by Pygments, and
the result sanitised by nh3 (an allow-list), so no message can inject script or markup.

Two layers on purpose: markdown-it escapes any HTML in the text and refuses ``javascript:``
and ``data:`` links; nh3 then drops whatever is not on its allow-list, should either
library change its mind.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, guess_lexer
from pygments.util import ClassNotFound

# Beyond this, content is shown as plain preformatted text: Markdown and highlighting of
# megabytes of tool output would slow the page for nothing.
MARKDOWN_MAX_CHARS = 100_000
HIGHLIGHT_MAX_CHARS = 50_000

ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "img", "li", "ol", "p", "pre", "s", "span", "strong", "table", "tbody", "td", "th",
    "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "div": {"class"},
    "pre": {"class"},
    "span": {"class"},
    "td": {"class"},
    "th": {"class"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}

_FORMATTER = HtmlFormatter(nowrap=True)
_STYLE = HtmlFormatter(cssclass="hl")


def _highlight(code: str, lang: str, attrs) -> str:
    if len(code) > HIGHLIGHT_MAX_CHARS:
        return f'<pre class="hl"><code>{escape(code)}</code></pre>'
    lexer = None
    name = (lang or "").strip().split()[0] if (lang or "").strip() else ""
    if name:
        try:
            lexer = get_lexer_by_name(name, stripnl=False)
        except ClassNotFound:
            lexer = None
    if lexer is None:
        try:
            lexer = guess_lexer(code, stripnl=False)
        except ClassNotFound:
            lexer = None
        if lexer is None or lexer.name == "Text only":
            return f'<pre class="hl"><code>{escape(code)}</code></pre>'
    body = highlight(code, lexer, _FORMATTER)
    return f'<pre class="hl"><code>{body}</code></pre>'  # starts with "<pre": used as is


def _alignment_as_classes(state) -> None:
    """Table cells say their alignment with a class (``align-right``), not the
    ``style="text-align:right"`` markdown-it writes: the Content-Security-Policy refuses
    style attributes."""
    for token in state.tokens:
        if token.type in ("th_open", "td_open"):
            style = token.attrs.pop("style", "")
            if style.startswith("text-align:"):
                token.attrs["class"] = "align-" + style.removeprefix("text-align:")


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.options["highlight"] = _highlight
    md.core.ruler.push("alignment_as_classes", _alignment_as_classes)
    return md


def sanitize(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def render_markdown(text: str) -> SafeString:
    """Safe HTML of a message's Markdown."""
    text = text or ""
    if len(text) > MARKDOWN_MAX_CHARS:
        return mark_safe(f'<pre class="plain">{escape(text)}</pre>')  # escaped above
    return mark_safe(sanitize(_renderer().render(text)))  # sanitised by nh3


def render_code(text: str, language: str = "") -> SafeString:
    """Tool input or output: a highlighted block (JSON and the like), else plain text."""
    text = text or ""
    if len(text) > HIGHLIGHT_MAX_CHARS or not language:
        return mark_safe(f'<pre class="plain">{escape(text)}</pre>')  # escaped above
    return mark_safe(sanitize(_highlight(text, language, None)))  # sanitised by nh3


def pygments_css() -> str:
    return _STYLE.get_style_defs(".hl")
