"""Showing text from a model, a memory or a candidate: always as data, never as markup.

Such text is written by a model (or by whoever the model quoted), so it may carry HTML,
scripts or terminal escape sequences. JupyterLab renders the outputs of the running
session as trusted, so raw HTML in an output would run in the page; a terminal obeys
the escape sequences it is sent.

The key design choice: we render Markdown to HTML here, with markdown-it-py, rather than
hand raw Markdown to the front end (whose renderer passes HTML through). Raw HTML is
off, so any tag in the text comes out as visible text; only http, https and mailto links
survive; images become plain links, so nothing is loaded from elsewhere. For the
terminal, every control and format character (escape sequences, bidi overrides, ...)
is shown as a visible escape such as ``\\x1b`` or ``\\u202e``.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["SAFE_SCHEMES", "markdown_html", "plain_text", "terminal_text"]

#: The only link targets a rendered reply may point to.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
# Characters a terminal may act on instead of printing: controls (C0, DEL, C1),
# format characters (bidi overrides and isolates, zero-width ones), lone surrogates,
# and the Unicode line and paragraph separators.
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def markdown_html(text: str) -> str:
    """``text`` as Markdown rendered to HTML that cannot run or load anything."""
    return _renderer().render(text)


@functools.cache
def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt  # on first use: importing it takes ~0.1 s

    renderer = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    renderer.enable(["table", "strikethrough"])
    # markdown-it's documented hook for link validation is replacing this method.
    renderer.validateLink = _is_safe_link  # type: ignore[method-assign]
    renderer.add_render_rule("image", _image_as_link)
    return renderer


def _is_safe_link(url: str) -> bool:
    """Only absolute http(s) and mailto targets: no script, data or relative file URL."""
    scheme = _SCHEME.match(url)
    return scheme is not None and scheme.group(1).lower() in SAFE_SCHEMES


def _image_as_link(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """An image becomes a link to it (its alt text, else its address): nothing loads."""
    token = tokens[idx]
    source = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    return f'<a href="{html.escape(source)}">{html.escape(alt or source)}</a>'


def terminal_text(text: str) -> str:
    """``text`` with every character a terminal could act on shown as a visible escape.

    Newlines are escaped too (as ``\\n``): a value is printed on the line it belongs to.
    """
    if text.isprintable():  # the common case; isprintable() is stricter than needed
        return text
    return "".join(_visible(char) for char in text)


def plain_text(text: str) -> str:
    """Multi-line text for a ``text/plain`` output: line breaks and tabs kept, every
    other character a terminal could act on shown as a visible escape."""
    return "\n".join(
        "\t".join(terminal_text(part) for part in line.split("\t")) for line in text.split("\n")
    )


def _visible(char: str) -> str:
    if unicodedata.category(char) not in _UNPRINTABLE_CATEGORIES:
        return char
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
