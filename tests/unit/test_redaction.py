"""A URL's credentials are never shown: not in a repr, a status, a setting or an error,
whatever form they take (a password in the userinfo, one with an unencoded ``@``, a
``?password=`` or other secret parameter, a libpq connection string), and not when a
driver quotes a piece of them without the URL around it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

import npc_nb
from npc_nb._foundations.store_url import redact as redact_url
from npc_nb._foundations.store_url import redact_text
from npc_nb.models import gateway

SECRET = "hunter2secret"
CLOSED = "127.0.0.1:1"  # nothing listens on port 1: the driver fails at once
#: Every form of a store URL carrying SECRET, and how it is shown.
STORE_URLS = {
    "userinfo": (f"postgresql://ada:{SECRET}@{CLOSED}/lab", f"postgresql://ada:***@{CLOSED}/lab"),
    "password parameter": (
        f"postgresql://ada@{CLOSED}/lab?password={SECRET}",
        f"postgresql://ada@{CLOSED}/lab?password=***",
    ),
    "sslpassword among others": (
        f"postgresql://ada@{CLOSED}/lab?sslmode=disable&sslpassword={SECRET}",
        f"postgresql://ada@{CLOSED}/lab?sslmode=disable&sslpassword=***",
    ),
    "unresolvable host": (
        f"postgresql://ada:{SECRET}@nohost.invalid/lab",
        "postgresql://ada:***@nohost.invalid/lab",
    ),
    "encoded @ in the password": (
        f"postgresql://ada:p%40{SECRET}@{CLOSED}/lab",
        f"postgresql://ada:***@{CLOSED}/lab",
    ),
    "bad percent-encoding quoted back by libpq": (
        f"postgresql://ada:p%zz{SECRET}@{CLOSED}/lab",
        f"postgresql://ada:***@{CLOSED}/lab",
    ),
}


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://ada:p@{SECRET}@{CLOSED}/lab",  # libpq would resolve '{SECRET}@...'
        f"postgresql://ada:p@{SECRET}@nohost.invalid/lab",
        f"postgresql://ada@lab:{SECRET}@{CLOSED}/lab",  # an @ in the user name
    ],
)
def test_an_unencoded_at_in_the_password_is_refused_without_repeating_it(
    project_dir: Path, url: str
) -> None:
    with pytest.raises(npc_nb.InvalidValueError) as refused:
        npc_nb.open(project_dir, store=url)
    message = str(refused.value)
    assert SECRET not in message and SECRET not in str(refused.value.value)
    assert "%40" in message and "unencoded @" in message


def test_the_settings_never_show_a_password_given_as_a_parameter(project_dir: Path) -> None:
    settings = npc_nb.load_settings(store=f"postgresql://ada@db.lab/mem?password={SECRET}")
    shown = [repr(settings), str(settings)]
    assert all(SECRET not in text and "password=***" in text for text in shown), shown


def test_a_driver_message_loses_a_password_it_quotes_without_its_url() -> None:
    # libpq takes a password's text after its first "@" for the host's name
    assert redact_text("failed to resolve host 'ss@127.0.0.1': [Errno -2]") == (
        "failed to resolve host '***@127.0.0.1': [Errno -2]"
    )
    assert redact_text(f'invalid percent-encoded token: "{SECRET}"', SECRET) == (
        'invalid percent-encoded token: "***"'
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            f"host=db user=ada password={SECRET} dbname=lab",
            "host=db user=ada password=*** dbname=lab",
        ),
        (f"host=db password='with {SECRET} space'", "host=db password='***'"),
        (f"sslpassword = {SECRET} port=5432", "sslpassword = *** port=5432"),
        (
            f"options {{'api_key': '{SECRET}', 'model': 'm'}}",
            "options {'api_key': '***', 'model': 'm'}",
        ),
        (
            f"calling https://api.lab/v1?key={SECRET}&alt=json failed",
            "calling https://api.lab/v1?key=***&alt=json failed",
        ),
        (
            f"calling https://api.lab/v1#access_token={SECRET} failed",
            "calling https://api.lab/v1#access_token=*** failed",
        ),
        (
            f"GET https://h/v1?X-Amz-Credential={SECRET}&X-Amz-Signature={SECRET}",
            "GET https://h/v1?X-Amz-Credential=***&X-Amz-Signature=***",
        ),
    ],
)
def test_every_form_of_credential_in_a_text_is_hidden(text: str, shown: str) -> None:
    assert redact_text(text) == shown


def test_plain_sql_in_an_error_keeps_its_values() -> None:
    text = "LINE 1: SELECT * FROM memories WHERE key = 'abc' AND code = 5"
    assert redact_text(text) == text


# -- property: no generated password survives, in any URL shape --------------------------

_USERS = st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12)
_HOSTS = st.sampled_from(["db.lab", "127.0.0.1", "127.0.0.1:5432", "[::1]:5432", "nohost.invalid"])
# Raw: anything but whitespace, quotes and the marks that end an authority (/ ? #);
# ":" and an unencoded "@" included. Encoded: any text at all, percent-encoded.
_RAW_PASSWORDS = st.text(
    st.characters(
        min_codepoint=33, max_codepoint=0x2FFF, blacklist_characters="/?#'\"`<>\\",
        blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
    ),
    min_size=1,
    max_size=24,
)  # fmt: skip
_ENCODED_PASSWORDS = st.text(min_size=1, max_size=24).map(lambda p: quote(p, safe=""))
_PASSWORDS = _RAW_PASSWORDS | _ENCODED_PASSWORDS
_PARAMETERS = st.sampled_from(
    ["password", "PASSWORD", "passwd", "sslpassword", "api_key", "apikey", "api-key", "token",
     "access_token", "secret", "client_secret", "key", "sig"]
)  # fmt: skip
_OTHERS = st.sampled_from(["", "sslmode=require&", "application_name=npc&"])


@given(user=_USERS, password=_PASSWORDS, host=_HOSTS)
def test_a_userinfo_password_never_survives(user: str, password: str, host: str) -> None:
    url = f"postgresql://{user}:{password}@{host}/lab"
    shown = f"postgresql://{user}:***@{host}/lab"
    assert redact_url(url) == shown
    assert redact_text(f"cannot open {url} now") == f"cannot open {shown} now"
    assert redact_text(f"cannot open '{url}'") == f"cannot open '{shown}'"


@given(
    user=_USERS,
    password=_PASSWORDS.filter(lambda p: not set(p) & set("&;")),
    host=_HOSTS,
    name=_PARAMETERS,
    before=_OTHERS,
)
def test_a_secret_parameter_never_survives(
    user: str, password: str, host: str, name: str, before: str
) -> None:
    head, tail = f"postgresql://{user}@{host}/lab?{before}{name}=", "&connect_timeout=3"
    url = head + password + tail
    if "@" not in password:
        assert redact_url(url) == head + "***" + tail
        assert redact_text(f"cannot open {url} now") == f"cannot open {head}***{tail} now"
        return
    # An "@" in a query value may also end a userinfo: more is hidden, never less.
    kept_before, *_, kept_after = redact_url(url).split("***")
    assert url.startswith(kept_before) and len(kept_before) <= len(head)
    assert url.endswith(kept_after) and len(kept_after) <= len(tail)


@given(
    user=_USERS,
    password=_PASSWORDS,
    host=_HOSTS,
    name=_PARAMETERS,
    scheme=st.sampled_from(["http", "https", "postgresql"]),
)
def test_a_stored_endpoint_keeps_no_credential(
    user: str, password: str, host: str, name: str, scheme: str
) -> None:
    stored = f"{scheme}://{host}/v1"
    for url in (
        f"{scheme}://{user}:{password}@{host}/v1",
        f"{scheme}://{user}@{host}/v1?{name}={quote(password, safe='')}&x=1",
        f"{scheme}://{user}@{host}/v1?x=1&{name}={password.replace('&', '').replace(';', '')}",
        f"{scheme}://{host}/v1#{name}={quote(password, safe='')}",
    ):
        kept = gateway.endpoint_options({"api_base": url})["api_base"]
        # An "@" in a query value beside a port may also end a userinfo that holds
        # "host:port/...": then no reading is safe to keep but the scheme.
        assert kept == stored or ("@" in url.partition("?")[2] and kept == f"{scheme}://")
        assert gateway.secret_options({"api_base": url}) == {"api_base": url}  # memory only


@given(password=_RAW_PASSWORDS.filter(lambda p: not set(p) & set(" '\\")))
def test_a_connection_string_password_never_survives(password: str) -> None:
    dsn = f"host=db.lab user=ada password={password} dbname=lab"
    assert redact_text(dsn) == "host=db.lab user=ada password=*** dbname=lab"
    assert redact_url(dsn) == "host=db.lab user=ada password=*** dbname=lab"
