"""Wrong input gets an NpcError that says what to do, never a raw TypeError, DuckDB or
pandas error, and it loses nothing: every public Project method is called with
arguments of the wrong kind (hypothesis), and the store is intact afterwards."""

from __future__ import annotations

import contextlib
import inspect
from functools import cached_property

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npc_nb
from tests.helpers import propose, status_of

PUBLIC = sorted(
    name
    for name, member in inspect.getmembers(npc_nb.Project)
    if not name.startswith("_")
    and inspect.isfunction(member)
    and not isinstance(inspect.getattr_static(npc_nb.Project, name), property | cached_property)
)
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "npc"]), st.integers(), max_size=1),
    st.just("\ud800"),
    st.just("x\x00y"),
    st.just(float("nan")),
    st.builds(object),
    st.text(max_size=6),
)


def test_every_public_method_is_covered() -> None:
    assert {"approve", "add_candidate", "chat", "context", "sql", "memories"} <= set(PUBLIC)


@settings(max_examples=300)
@given(name=st.sampled_from(PUBLIC), data=st.data())
def test_every_public_method_answers_wrong_input_with_an_npc_error(
    nb: npc_nb.Project, name: str, data: st.DataObject
) -> None:
    method = getattr(nb, name)
    args, kwargs = [], {}
    for parameter in inspect.signature(method).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        required = parameter.default is parameter.empty
        if not required and not data.draw(st.booleans(), label=f"pass {parameter.name}"):
            continue
        value = data.draw(WRONG, label=parameter.name)
        if parameter.kind is parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    with contextlib.suppress(npc_nb.NpcError):  # anything else fails the test
        method(*args, **kwargs)


def test_wrong_input_loses_nothing(nb: npc_nb.Project) -> None:
    kept = propose(nb, "We use DuckDB")
    nb.approve(kept)
    for call in (
        lambda: nb.approve(None),
        lambda: nb.edit(kept, None),
        lambda: nb.context(["analyst"]),
        lambda: nb.add_candidate(float("nan"), category="fact", npc="analyst"),
        lambda: nb.defer(kept, until=float("nan")),
        lambda: nb.sql(b"SELECT 1"),
    ):
        try:
            call()
        except npc_nb.NpcError as exc:
            assert str(exc)
        else:
            raise AssertionError("wrong input was accepted")
    assert "We use DuckDB" in nb.context("analyst")
    assert len(nb.decisions(kept)) == 2


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda nb, m: nb.defer(m, until="tomorrow"), npc_nb.InvalidValueError),
        (lambda nb, m: nb.set_validity(m, valid_from=42), npc_nb.ArgumentError),
        (lambda nb, m: nb.memories(as_of="last week"), npc_nb.InvalidValueError),
        (lambda nb, m: nb.context("analyst", max_chars=50), npc_nb.InvalidValueError),
        (lambda nb, m: nb.context("analyst", max_chars="1000"), npc_nb.ArgumentError),
        (
            lambda nb, m: nb.add_candidate("bad \ud800 text", category="fact", npc="a"),
            npc_nb.CandidateError,
        ),
        (lambda nb, m: nb.add_candidate("x", category="fact", npc=["a"]), npc_nb.ArgumentError),
        (lambda nb, m: nb.approve(m, time_spent="2"), npc_nb.ArgumentError),
        (
            lambda nb, m: nb.approve(m, context=npc_nb.ReviewContext(time_spent=float("nan"))),
            npc_nb.InvalidValueError,
        ),
        (lambda nb, m: nb.apply(m), npc_nb.ArgumentError),
    ],
)
def test_bad_arguments_are_domain_errors_and_change_nothing(
    nb: npc_nb.Project, call, error
) -> None:
    memory = propose(nb, "untouched")
    with pytest.raises(error):
        call(nb, memory)
    assert status_of(nb, memory) == "pending_approval"
    assert len(nb.decisions()) == 1


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda nb: nb.context(None), "context(): npc must be a string, not None."),
        (lambda nb: nb.context_block(None), "context_block(): npc must be a string"),
        (lambda nb: nb.get_npc(None), "get_npc(): name must be a string, not None."),
        (lambda nb: nb.npc("critic", directive=None), "npc(): directive must be a string"),
        (lambda nb: nb.chat(None, "hello"), "chat(): npc must be a string, not None."),
        (lambda nb: nb.add_candidate(None, category="fact", npc="a"), "text must be a string"),
        (lambda nb: nb.reject(propose(nb, "x"), reason=3), "reason must be a string or None"),
        (
            lambda nb: nb.metrics.approval_rate(group_by=None),
            "approval_rate(): group_by must be a string",
        ),
        (
            lambda nb: nb.metrics.backlog(period=None),
            "backlog(): period must be a string, not None.",
        ),
    ],
)
def test_an_argument_of_the_wrong_type_is_a_type_error_whatever_the_method(
    nb: npc_nb.Project, call, named: str
) -> None:
    """context(None) was a ConfigError (the method's concern), metrics' group_by=None a bare
    TypeError from pandas: a wrong type is an ArgumentError, a TypeError, everywhere."""
    with pytest.raises(npc_nb.ArgumentError) as raised:
        call(nb)
    assert type(raised.value) is npc_nb.ArgumentError and isinstance(raised.value, TypeError)
    assert named in str(raised.value)
