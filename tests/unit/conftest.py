"""The fast tier's one rule, enforced: a test under tests/unit opens no database and no
IPython shell.

``make check`` runs this tier while a developer edits, so it must stay well under a
minute on two cores; one test that opens a store would start the slide back to the full
suite. Rather than trust review, every unit test runs with DuckDB's and psycopg's
``connect`` and IPython's ``InteractiveShell.instance`` replaced by a failure that says
where such a test belongs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn

import duckdb
import pytest
from IPython.core.interactiveshell import InteractiveShell


def _not_here(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError(
        "tests/unit holds pure tests (no store, no kernel, no browser, no PostgreSQL): "
        "move a test that needs one to tests/"
    )


@pytest.fixture(autouse=True)
def pure_logic_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(duckdb, "connect", _not_here)
    monkeypatch.setattr(InteractiveShell, "instance", classmethod(_not_here))
    try:
        import psycopg
    except ImportError:  # the shared store's driver is optional
        pass
    else:
        monkeypatch.setattr(psycopg, "connect", _not_here)
    yield
