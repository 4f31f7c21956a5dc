"""A value outside its allowed set is one error, whichever public call took it.

Each call below gets one value that is not allowed (an unknown status, category,
scope, decision, metric dimension, format or kind, a bad ``as_of``, a bad setting):
it raises ``InvalidValueError`` (an ``NpcError`` and a ``ValueError``) whose ``what``
names the parameter, ``value`` holds what was given and ``allowed`` what would do,
with a message that names both; and it writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import npc_nb
from npc_nb import InvalidValueError
from tests.helpers import propose

Call = Callable[[npc_nb.Project, Path, str], Any]

#: (id, the call (project, a scratch folder, a pending memory id), what, the bad value)
CASES: list[tuple[str, Call, str, object]] = [
    ("memories-status", lambda nb, d, m: nb.memories(status="bogus"), "status", "bogus"),
    ("memories-as_of", lambda nb, d, m: nb.memories(as_of="nope"), "as_of", "nope"),
    ("queue-category", lambda nb, d, m: nb.review_queue(category="x"), "category", "x"),
    ("queue-scope", lambda nb, d, m: nb.review_queue(scope="planet"), "scope", "planet"),
    (
        "session-category",
        lambda nb, d, m: nb.review_session(category="gossip"),
        "category",
        "gossip",
    ),
    (
        "candidate-category",
        lambda nb, d, m: nb.add_candidate("Uses R", category="opinion", npc="analyst"),
        "category",
        "opinion",
    ),
    (
        "candidate-scope",
        lambda nb, d, m: nb.add_candidate("Uses R", category="fact", npc="a", scope="planet"),
        "scope",
        "planet",
    ),
    (
        "context-as_of",
        lambda nb, d, m: nb.context("analyst", as_of="not a date"),
        "as_of",
        "not a date",
    ),
    (
        "context_block-as_of",
        lambda nb, d, m: nb.context_block("analyst", as_of="yesterday-ish"),
        "as_of",
        "yesterday-ish",
    ),
    ("graph-as_of", lambda nb, d, m: nb.graph.frames(as_of="nope"), "as_of", "nope"),
    ("graph-category", lambda nb, d, m: nb.graph.frames(category="x"), "category", "x"),
    ("diff-as_of", lambda nb, d, m: nb.diff("nope"), "as_of", "nope"),
    (
        "metric-dimension",
        lambda nb, d, m: nb.metrics.approval_rate(group_by="colour"),
        "dimension",
        "colour",
    ),
    (
        "metric-as_of",
        lambda nb, d, m: nb.metrics.approval_rate(as_of="nope"),
        "as_of",
        "nope",
    ),
    (
        "agreement-dimension",
        lambda nb, d, m: nb.metrics.agreement(group_by="colour"),
        "dimension",
        "colour",
    ),
    ("plot-rate", lambda nb, d, m: nb.metrics.plot_rate("speed"), "rate", "speed"),
    ("export-format", lambda nb, d, m: nb.exports.tables(d, format="xls"), "format", "xls"),
    ("export_to-kind", lambda nb, d, m: nb.exports.to("excel", d / "x"), "kind", "excel"),
    (
        "configure-model_replay",
        lambda nb, d, m: nb.configure(model_replay="sometimes"),
        "model_replay",
        "sometimes",
    ),
    (
        "configure-review_mode",
        lambda nb, d, m: nb.configure(review_mode="majority"),
        "review_mode",
        "majority",
    ),
    (
        "context-intent",
        lambda nb, d, m: nb.approve(m, context=npc_nb.ReviewContext(intent="bless")),  # type: ignore[arg-type]
        "intent",
        "bless",
    ),
    ("defer-until", lambda nb, d, m: nb.defer(m, until="someday"), "until", "someday"),
    (
        "set_validity-valid_from",
        lambda nb, d, m: nb.set_validity(m, valid_from="soon"),
        "valid_from",
        "soon",
    ),
    ("configure-pin", lambda nb, d, m: nb.configure(pin="v9"), "pin", "v9"),
    (
        "set_policy-review_mode",
        lambda nb, d, m: nb.access.set_policy(review_mode="majority"),  # type: ignore[arg-type]
        "review_mode",
        "majority",
    ),
    ("queue-npc", lambda nb, d, m: nb.review_queue(npc="nobody"), "persona", "nobody"),
]


def _written(nb: npc_nb.Project) -> dict[str, object]:
    """Everything a call could have written: each table's row count, and the settings."""
    tables = nb.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
        "ORDER BY table_name"
    )["table_name"].tolist()
    counts: dict[str, object] = {
        name: int(nb.sql(f'SELECT count(*) AS n FROM "{name}"')["n"].iloc[0]) for name in tables
    }
    counts["settings"] = nb.settings.model_dump()
    return counts


@pytest.mark.parametrize(
    ("call", "what", "value"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_value_that_is_not_allowed_is_an_invalid_value_error_and_writes_nothing(
    nb: npc_nb.Project, tmp_path: Path, call: Call, what: str, value: object
) -> None:
    pending = propose(nb, "The lab meets on Mondays.")
    before = _written(nb)
    with pytest.raises(InvalidValueError) as raised:
        call(nb, tmp_path / "out", pending)
    error = raised.value
    assert isinstance(error, npc_nb.NpcError) and isinstance(error, ValueError)
    assert (error.what, error.value) == (what, value)
    assert error.allowed, "allowed says what would do"
    assert repr(value) in str(error)
    allowed = error.allowed if isinstance(error.allowed, str) else error.allowed[0]
    assert allowed in str(error)
    assert _written(nb) == before
    assert not (tmp_path / "out").exists()


def test_a_bad_setting_at_open_is_an_invalid_value_error(project_dir: Path) -> None:
    with pytest.raises(InvalidValueError) as raised:
        npc_nb.open(project_dir, review_mode="majority")
    assert (raised.value.what, raised.value.value) == ("review_mode", "majority")
    assert raised.value.allowed == ("single", "independent")


def test_every_public_error_class_is_importable_from_npc_nb() -> None:
    from npc_nb import errors

    classes = {
        name
        for name, obj in vars(errors).items()
        if isinstance(obj, type) and issubclass(obj, errors.NpcError)
    }
    assert classes <= set(npc_nb.__all__), sorted(classes - set(npc_nb.__all__))
    assert "UnrecordedCallError" in npc_nb.__all__ and "UnknownFilterError" not in classes
