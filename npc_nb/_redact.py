"""Credentials out of everything shown or stored: one place that knows every form a
URL or a connection string carries a secret in.

The forms: a URL's userinfo (``scheme://user:password@host``, the user name kept), a
secret parameter in its query or fragment (``?password=``, ``&sslpassword=``,
``api_key=``, ``token=``, ...: ``is_secret_name``), libpq's ``key=value`` connection
strings (``host=h password=p``), a quoted ``'name': 'value'`` pair, and an unencoded
``@`` inside a password (``postgresql://ada:p@ss@host/db``). Userinfo is everything
up to the *last* ``@``: libpq stops at the first and would report the rest as a host
(``'ss@host'``), which is why a quoted ``...@host`` token is redacted too, and why the
known secrets of a URL (``url_secrets``) are taken out of a driver's message before
anything else.

The rules are structural and lean towards hiding too much: a query value holding an
``@`` is read as the end of a userinfo (so a URL with one shows less), never the other
way round. ``strip_credentials`` keeps what may be stored of an endpoint: scheme,
host, port and path; anything else stays in the kernel's memory only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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
_TAIL = re.compile(r"(?P<host>[^/?#]*)(?P<path>[^?#]*)(?:\?(?P<query>[^#]*))?(?:#(?P<frag>.*))?")
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


@dataclass(frozen=True)
class _Url:
    scheme: str  # "postgresql://", or "" when the text has none
    userinfo: str | None  # everything before the last "@", without it
    host: str  # host and port
    path: str
    query: str | None
    fragment: str | None


def _split(url: str) -> _Url:
    """``url`` in parts, leniently (see the module docstring): any text splits."""
    found = _SCHEME.match(url)
    scheme = found.group() if found else ""
    rest = url[len(scheme) :]
    userinfo: str | None
    userinfo, at, tail = rest.rpartition("@")
    if not at:
        userinfo, tail = None, rest
    parts = _TAIL.fullmatch(tail)
    assert parts is not None  # every group may be empty: any text matches
    return _Url(
        scheme,
        userinfo,
        parts["host"],
        parts["path"],
        parts["query"],
        parts["frag"],
    )


def is_secret_name(name: str, *, in_url: bool = True) -> bool:
    """Whether a parameter called ``name`` holds a secret (see ``SECRET_SUFFIXES``);
    ``in_url``: a URL's parameter or a quoted pair, where ``key=`` and friends count."""
    folded = unquote_plus(name).strip().lower().replace("-", "_")
    return folded.endswith(SECRET_SUFFIXES) or (in_url and folded in SECRET_NAMES)


def redact_url(url: str) -> str:
    """``url`` with its password and secret parameters shown as ``***`` (the user
    name, host, port, path and other parameters kept). A text without a scheme is
    read as a libpq connection string (``host=h password=p``) if it has an ``=``."""
    if not _SCHEME.match(url) and _DSN_START.match(url):
        return _redact_pairs(url)
    parts = _split(url)
    shown = parts.scheme + _shown_userinfo(parts.userinfo) + parts.host + parts.path
    if parts.query is not None:
        shown += "?" + _redact_params(parts.query)
    if parts.fragment is not None:
        shown += "#" + _redact_params(parts.fragment)
    return shown


def _shown_userinfo(userinfo: str | None) -> str:
    if userinfo is None:
        return ""
    if any(mark in userinfo for mark in "/?#"):  # an "@" of a path or query: hide it all
        return f"{HIDDEN}@"
    user, colon, _ = userinfo.partition(":")
    return f"{user}:{HIDDEN}@" if colon else f"{user}@"


def _redact_params(params: str) -> str:
    pieces = []
    for piece in re.split(r"([&;])", params):
        name, eq, _ = piece.partition("=")
        pieces.append(f"{name}={HIDDEN}" if eq and is_secret_name(name) else piece)
    return "".join(pieces)


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
    connection-string pair and quoted ``...@host`` token in it."""
    for secret in sorted({k for k in known if len(k) >= MIN_KNOWN}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    text = _URL_IN_TEXT.sub(lambda found: redact_url(found.group()), text)
    text = _redact_pairs(text)
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
    parts = _split(url)
    found: list[str] = []
    if parts.userinfo is not None:
        _, colon, password = parts.userinfo.partition(":")
        found += [password, unquote(password)] if colon else []
    # Parameters wherever a "?" or "#" starts them, also inside what _split took for
    # a userinfo (an "@" in a query value).
    params = url.partition("?")[2] + "&" + url.partition("#")[2]
    for piece in re.split(r"[&;#?]", params):
        name, eq, value = piece.partition("=")
        if eq and is_secret_name(name):
            found += [value, unquote_plus(value)]
    return [secret for secret in dict.fromkeys(found) if secret]


def strip_credentials(url: str) -> str:
    """What of an endpoint may be stored: its scheme, host, port and path (no user
    name or password, no query, no fragment); a connection string redacted."""
    if not _SCHEME.match(url) and _DSN_START.match(url):
        return _redact_pairs(url)
    parts = _split(url)
    return parts.scheme + parts.host + parts.path


def has_credentials(url: str) -> bool:
    """Whether ``url`` holds anything ``strip_credentials`` drops (which is then kept
    in memory only)."""
    return strip_credentials(url) != url
