"""Credentials out of everything shown or stored: one place that knows every form a
URL or a connection string carries a secret in.

The forms: a URL's userinfo (``scheme://user:password@host``, the user name kept), a
secret parameter in its query or fragment (``?password=``, ``&sslpassword=``,
``api_key=``, ``token=``, ...: ``is_secret_name``), libpq's ``key=value`` connection
strings (``host=h password=p``), a quoted ``'name': 'value'`` pair, and an unencoded
``@`` inside a password (``postgresql://ada:p@ss@host/db``), and SQL's ``PASSWORD
'...'`` (``CREATE ROLE ... PASSWORD``, which a server's error may quote back).

A URL is read every way it could be meant, and whatever any reading calls a secret is
hidden: the password runs from the first ``:`` to the *last* ``@`` (libpq stops at the
first and reports the rest as a host, ``'ss@host'``: hence a quoted ``...@host`` token
is redacted too, and a driver's message first loses the URL's own secrets,
``url_secrets``), and each secret parameter after the first ``?`` or ``#``, with and
without a ``?`` inside its value. A URL with an ``@`` in a query value so shows less,
never more. ``strip_credentials`` keeps scheme, host, port and path, read so as to
hold none of those secrets (else the scheme alone); the whole URL then stays in the
kernel's memory only.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_plus

__all__ = [
    "SECRET_NAMES",
    "SECRET_SUFFIXES",
    "has_credentials",
    "is_secret_name",
    "redact_text",
    "redact_url",
    "strip_credentials",
    "url_secrets",
]

#: A parameter holds a secret if its name (case and ``-``/``_`` folded) ends in one of
#: ``SECRET_SUFFIXES`` (``password``, ``sslpassword``, ``api_key``, ``apikey``,
#: ``access_token``, ``client_secret``, ``X-Amz-Credential`` ...) or, in a URL or a
#: quoted pair, is one of ``SECRET_NAMES`` (``key`` and ``sig`` of signed URLs, ``code``
#: of a function key, ...): in free text ``key = 'x'`` is far more often SQL.
SECRET_NAMES = frozenset(
    {"key", "code", "sig", "signature", "auth", "authorization", "pass", "pwd", "credential",
     "credentials"}
)  # fmt: skip
SECRET_SUFFIXES = (
    "password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
    "access_key", "private_key", "secret_key", "subscription_key", "_sig", "_signature",
    "_credential", "_credentials", "pwd",
)  # fmt: skip
HIDDEN = "***"
#: Known secrets shorter than this are not searched for in free text: they would
#: garble the message (a password "ab" inside every "table") and hide nothing.
MIN_KNOWN = 4

_SCHEME = re.compile(r"[a-zA-Z][\w+.-]*://")
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][\w+.-]*://[^\s'\"<>`]*")
# A URL's ``name=value`` parameter, a ``?`` inside the value kept in it (or not).
_URL_PARAM = re.compile(r"(?<![^&;#?])(?P<name>[^&;#=]*)=(?P<value>[^&;#]*)")
_URL_PARAM_SPLIT_AT_QUESTION = re.compile(r"(?<![^&;#?])(?P<name>[^&;#?=]*)=(?P<value>[^&;#?]*)")
_HOST_AND_PATH = re.compile(r"[^/?#]*[^?#]*")
_AUTHORITY_END = re.compile(r"[/?#]")
_NAME = r"[A-Za-z_][\w.-]*"
_DSN_START = re.compile(rf"\s*{_NAME}\s*=")
# ``name=value`` of a connection string (not one of a URL's query, handled with it).
_DSN_PAIR = re.compile(
    rf"(?<![\w.?&;/-])(?P<name>{_NAME})(?P<eq>\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|[^\s'\"]+)"
)
# ``name=value`` after ``?``, ``&`` or ``;`` outside a URL the text pass recognised.
_QUERY_PAIR = re.compile(rf"(?<=[?&;])(?P<name>{_NAME})(?P<eq>=)(?P<value>[^\s&#;'\"]*)")
# ``'name': 'value'`` / ``"name": "value"`` (a dict or JSON quoted in an error).
_QUOTED_PAIR = re.compile(
    rf"(?P<q>['\"])(?P<name>{_NAME})(?P=q)(?P<eq>\s*:\s*)(?P<value>'[^']*'|\"[^\"]*\")"
)
# A quoted token with an ``@`` (no URL): ``'ss@127.0.0.1'`` when libpq split a
# password at its first ``@``. Everything up to the last ``@`` goes.
_QUOTED_AT = re.compile(r"(?P<q>['\"])(?:(?!://)[^'\"\s])*@(?P<rest>[^'\"\s@]*)(?P=q)")
# SQL's ``PASSWORD 'secret'`` (``E'...'`` too; ``''`` and ``\'`` inside), as a server's
# error quotes back the line of a ``CREATE ROLE`` or ``ALTER ROLE``.
_SQL_PASSWORD = re.compile(r"(?i)(?P<word>\bpassword\s+)(?P<e>e?)'(?:''|\\.|[^'\\])*'?")


def is_secret_name(name: str, *, in_url: bool = True) -> bool:
    """Whether a parameter called ``name`` holds a secret (see ``SECRET_SUFFIXES``);
    ``in_url``: a URL's parameter or a quoted pair, where ``key=`` and friends count."""
    folded = unquote_plus(name).strip().lower().replace("-", "_")
    return folded.endswith(SECRET_SUFFIXES) or (in_url and folded in SECRET_NAMES)


def redact_url(url: str) -> str:
    """``url`` with its password and secret parameters shown as ``***`` (the user
    name, host, port, path and other parameters kept). A text without a scheme that
    starts like a libpq connection string (``host=h password=p``) is read as one."""
    if not _SCHEME.match(url) and _DSN_START.match(url):
        return _redact_pairs(url)
    shown, last = [], 0
    for start, end in _merged(_secret_spans(url)):
        shown += [url[last:start], HIDDEN]
        last = end
    return "".join([*shown, url[last:]])


def _secret_spans(url: str) -> list[tuple[int, int]]:
    """Where ``url``'s secrets are, under every reading of it: the password up to the
    last ``@``, and each secret parameter after the first ``?`` or ``#``, a ``?``
    inside a value read both as part of it and as a separator."""
    spans = []
    start = len(found.group()) if (found := _SCHEME.match(url)) else 0
    at = url.rfind("@", start)
    colon = url.find(":", start, at) if at >= 0 else -1
    if colon >= 0:
        spans.append((colon + 1, at))
    marks = [index for index in (url.find("?", start), url.find("#", start)) if index >= 0]
    if marks:
        for pattern in (_URL_PARAM, _URL_PARAM_SPLIT_AT_QUESTION):
            spans += [
                found.span("value")
                for found in pattern.finditer(url, min(marks) + 1)
                if is_secret_name(found["name"])
            ]
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans in order, overlapping or touching ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _hide_value(found: re.Match[str], *, in_url: bool = True) -> str:
    if not is_secret_name(found["name"], in_url=in_url):
        return found.group()
    value = found["value"]
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{found['name']}{found['eq']}{quote}{HIDDEN}{quote}"


def _hide_quoted_value(found: re.Match[str]) -> str:
    if not is_secret_name(found["name"]):
        return found.group()
    quote, value_quote = found["q"], found["value"][0]
    return f"{quote}{found['name']}{quote}{found['eq']}{value_quote}{HIDDEN}{value_quote}"


def _redact_pairs(text: str) -> str:
    text = _DSN_PAIR.sub(lambda found: _hide_value(found, in_url=False), text)
    text = _QUERY_PAIR.sub(_hide_value, text)
    return _QUOTED_PAIR.sub(_hide_quoted_value, text)


def redact_text(text: str, *known: str) -> str:
    """``text`` (an engine's error, a log line) with every credential hidden: the
    ``known`` secrets first (a URL's password, from ``url_secrets``), then every URL,
    connection-string pair, quoted ``...@host`` token and SQL ``PASSWORD '...'`` in it."""
    for secret in sorted({k for k in known if len(k) >= MIN_KNOWN}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    text = _URL_IN_TEXT.sub(lambda found: redact_url(found.group()), text)
    text = _redact_pairs(text)
    text = _SQL_PASSWORD.sub(rf"\g<word>\g<e>'{HIDDEN}'", text)
    return _QUOTED_AT.sub(rf"\g<q>{HIDDEN}@\g<rest>\g<q>", text)


def url_secrets(url: str) -> list[str]:
    """The secret values in ``url`` (its password, its secret parameters' values), as
    written and decoded: what a driver may quote back without the URL around it."""
    if not _SCHEME.match(url) and _DSN_START.match(url):
        return [
            found["value"].strip("'")
            for found in _DSN_PAIR.finditer(url)
            if is_secret_name(found["name"], in_url=False) and found["value"].strip("'")
        ]
    found = [url[start:end] for start, end in _secret_spans(url)]
    found += [decode(secret) for decode in (unquote, unquote_plus) for secret in found]
    return [secret for secret in dict.fromkeys(found) if secret]


def strip_credentials(url: str) -> str:
    """What of an endpoint may be stored: its scheme, host, port and path (no user
    name or password, no query, no fragment); a connection string redacted.

    The host is read after the last ``@`` of the authority (up to the first ``/``,
    ``?`` or ``#``), else after the last ``@`` of all; whichever reading keeps no
    secret of any reading (``_secret_spans``) is used, else the scheme alone."""
    if not _SCHEME.match(url) and _DSN_START.match(url):
        return _redact_pairs(url)
    start = len(found.group()) if (found := _SCHEME.match(url)) else 0
    authority_end = found.start() if (found := _AUTHORITY_END.search(url, start)) else len(url)
    secrets = _secret_spans(url)
    for at in (url.rfind("@", start, authority_end), url.rfind("@", start)):
        kept = _HOST_AND_PATH.match(url, max(at + 1, start))
        assert kept is not None  # both parts may be empty: it always matches
        if not any(s < kept.end() and kept.start() < e for s, e in secrets):
            return url[:start] + kept.group()
    return url[:start]


def has_credentials(url: str) -> bool:
    """Whether ``url`` holds anything ``strip_credentials`` drops (which is then kept
    in memory only)."""
    return strip_credentials(url) != url
