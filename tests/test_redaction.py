"""A URL's credentials are never shown: not in a repr, a status, a setting or an error,
whatever form they take (a password in the userinfo, one with an unencoded ``@``, a
``?password=`` or other secret parameter, a libpq connection string), and not when a
driver quotes a piece of them without the URL around it.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_redaction.py (the fast tier).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.unit.test_redaction import SECRET, STORE_URLS


@pytest.mark.parametrize("form", STORE_URLS)
def test_a_store_that_cannot_be_reached_never_shows_its_password(
    project_dir: Path, form: str
) -> None:
    url, shown = STORE_URLS[form]
    with pytest.raises(npc_nb.StoreError) as failed:
        npc_nb.open(project_dir, store=url)
    message = str(failed.value)
    assert SECRET not in message and SECRET not in repr(failed.value.args)
    assert shown in message  # says which store, as it may be shown
    assert failed.value.__cause__ is None  # the driver's exception (with the URL) is gone
