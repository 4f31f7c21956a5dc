"""Checking a public method's arguments against its type hints, at the API's edge.

A researcher calling ``nb.context(None)`` or ``nb.approve(None)`` should read what to
pass, not a ``TypeError`` from deep inside pandas or DuckDB. ``checked_methods`` wraps
every public method of a class so that an argument whose type does not match its
annotation raises ``ArgumentError`` (a ``TypeError``, whatever the method) naming the
method, the parameter and what it accepts. Text must be valid Unicode (no lone
surrogates) and numbers finite, else the method's own error class; ``bool`` is not an
``int``.
``Annotated[float | None, "a number from 0 to 1"]`` gives a parameter its own words, and
an error class in the metadata its own error (``Annotated[str, ..., UnknownMemoryError]``).
A filter from a closed set (``Category``, ``Scope``, ``StatusFilter``: ``OneOf`` in the
metadata) must also be one of its values, else ``InvalidValueError`` lists them, with a
"did you mean" when one is close (``unknown_choice``, also used for persona names).
The check is shallow and cheap (a few microseconds): it reads the annotations once per
method, not on every call.

``Forward`` makes a facade member a service's method, written once, in the service:
``chat = Forward("_chat", Conversations.chat)`` in ``Project`` is ``nb.chat``, the
service's function bound to the service the facade built, its signature and docstring
the service's (``help``, ``inspect.signature``), behind the same checks. A descriptor,
not generated source or ``__getattr__``: ``dir()``, completion and the docs' signature
checks see it; read on the class it is the checked function (first parameter: the
service). ``same_signature`` gives a method that adds a step to another's call
(``nb.review`` shows a panel over ``nb.review_session``) that one's parameters.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from ..errors import ArgumentError, InvalidValueError, NpcError, UnknownMemoryError
from ..vocabulary import CATEGORIES, SCOPES, STATUSES
from .results import Snapshot
from .suggestions import did_you_mean

__all__ = [
    "AS_OF_FORMS",
    "AsOf",
    "Category",
    "Forward",
    "MemoryId",
    "OneOf",
    "Scope",
    "StatusFilter",
    "check_value",
    "checked",
    "checked_methods",
    "same_signature",
    "unknown_choice",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")
#: A memory id parameter: anything else is an UnknownMemoryError, as an unknown id is.
MemoryId = Annotated[
    str,
    "a memory id (a string from the id column of review_queue() or memories())",
    UnknownMemoryError,
]
_OK = None


@dataclass(frozen=True)
class OneOf:
    """``Annotated`` metadata: the value must be one of ``values`` (a closed set)."""

    what: str  # what a value is called: "category"
    values: tuple[str, ...]


#: A filter by category, scope, or status (``"approved"``: the approval predicate).
Category = Annotated[str, OneOf("category", CATEGORIES)]
Scope = Annotated[str, OneOf("scope", SCOPES)]
#: What an ``as_of`` may be: the ``allowed`` of every InvalidValueError(what="as_of").
AS_OF_FORMS = "a Snapshot, its id or label, or a time (a datetime, a date or an ISO 8601 string)"
#: A state of the memory to read at: a snapshot (or its id or label: a string), a time.
AsOf = Annotated[datetime | Snapshot, AS_OF_FORMS]
StatusFilter = Annotated[str, OneOf("status", ("approved", *STATUSES))]


def unknown_choice(
    what: str, value: str, known: Collection[str], *, lead: str | None = None
) -> InvalidValueError:
    """The error for a ``what`` (category, persona, ...) that is none of ``known``: it
    lists them (in the order given), and suggests the closest when the value looks like
    a typo of one. ``lead`` replaces the opening "Unknown <what> '<value>'"."""
    choices = tuple(known)
    lead = lead or f"Unknown {what} {value!r}"
    guess = did_you_mean(value, list(choices)) if choices else ""
    return InvalidValueError(what, value, choices, lead=lead, hint=guess)


def checked_methods(
    errors: Mapping[str, type[NpcError]] | None = None,
) -> Callable[[type[T]], type[T]]:
    """A class decorator: wrap every public method (its bases' included) with argument
    checks. An argument of the wrong type is an ``ArgumentError`` (a ``TypeError``) in
    every method, and so is a call it cannot bind (a misspelt keyword, a keyword-only
    argument passed by position), as Python's own. ``errors`` names the error class of a
    method's concern (``{"approve": DecisionError}``), raised for a value of the right
    type it cannot use (a lone surrogate, a NaN); other methods raise ``ArgumentError``
    for those too."""

    def decorate(cls: type[T]) -> type[T]:
        for klass in reversed(cls.__mro__[:-1]):
            for name, member in vars(klass).items():
                if not name.startswith("_") and inspect.isfunction(member):
                    error = (errors or {}).get(name, ArgumentError)
                    setattr(cls, name, checked(member, error))
        return cls

    return decorate


def checked(method: Callable[..., Any], error: type[NpcError]) -> Callable[..., Any]:
    """``method`` with its arguments checked (``checked_methods``, for one function)."""
    if getattr(method, "__npc_checked__", False):
        return method
    signature = inspect.signature(method)

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:  # a call Python itself would refuse: a TypeError
            raise ArgumentError(f"{method.__name__}(): {exc}.") from None
        try:
            _check_bound(method, signature, bound.arguments)
        except _UnusableValue as exc:  # the right type: the method's concern decides
            raise error(str(exc)) from None
        return method(*args, **kwargs)

    wrapper.__npc_checked__ = True  # type: ignore[attr-defined]  # a marker on the function
    return wrapper


@functools.cache
def _hints(method: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's annotation, evaluated; one that names a type imported only for
    type checkers is left unchecked (Any)."""
    hints = {}
    for name, annotation in inspect.get_annotations(method).items():
        if name == "return":
            continue
        try:  # our own source's annotations, as typing.get_type_hints would evaluate them
            hints[name] = (
                eval(annotation, method.__globals__) if isinstance(annotation, str) else annotation
            )
        except NameError:
            hints[name] = Any
    return hints


def _check_bound(
    method: Callable[..., Any], signature: inspect.Signature, arguments: Mapping[str, Any]
) -> None:
    hints = _hints(method)
    for name, value in arguments.items():
        parameter = signature.parameters[name]
        hint = hints.get(name)
        if name == "self" or hint is None or value is parameter.default:
            continue
        if parameter.kind is parameter.VAR_KEYWORD:
            _check_keywords(method, hint, value)
        elif parameter.kind is not parameter.VAR_POSITIONAL:
            check_value(f"{method.__name__}(): {name}", value, hint)


def _check_keywords(method: Callable[..., Any], hint: Any, values: dict[str, Any]) -> None:
    if typing.get_origin(hint) is typing.Unpack:  # **context: Unpack[SomeTypedDict]
        fields = typing.get_type_hints(typing.get_args(hint)[0])  # a TypedDict's keys
        for key, value in values.items():
            if key in fields:
                check_value(f"{method.__name__}(): {key}", value, fields[key])
        return
    for key, value in values.items():
        check_value(f"{method.__name__}(): {key}", value, hint)


class _UnusableValue(ArgumentError):
    """A value of the right type that no method can use (text that is not valid
    Unicode, a number that is not finite): ``checked_methods`` raises it as the error of
    the method's concern (a CandidateError from ``add_candidate``)."""


def check_value(where: str, value: Any, hint: Any) -> None:
    """Raise ArgumentError if ``value`` is not of the type ``hint`` names (or the error
    class an ``Annotated`` hint names, e.g. UnknownMemoryError for a memory id)."""
    problem = _problem(value, hint)
    choices = _literal_choices(hint) if problem is not None else ()
    if choices and isinstance(value, str) and all(isinstance(c, str) for c in choices):
        raise InvalidValueError(
            where.rpartition(": ")[2],
            value,
            choices,
            lead=f"{where}={value!r} is not allowed",
            hint=_words(hint),
        )
    if problem is not None:
        message = f"{where} must be {_describe(hint)}, not {_show(value)}{problem}."
        own = _own_error(hint)
        raise (_UnusableValue if problem and own is ArgumentError else own)(message)
    closed = _one_of(hint)
    if closed is not None and isinstance(value, str) and value not in closed.values:
        raise unknown_choice(closed.what, value, closed.values)


def _words(hint: Any) -> str:
    """The words an ``Annotated`` hint gives its values ("" if none), as a sentence."""
    if typing.get_origin(hint) is not typing.Annotated:
        return ""
    said = [m for m in typing.get_args(hint)[1:] if isinstance(m, str)]
    return f"It takes {said[0]}." if said else ""


def _literal_choices(hint: Any) -> tuple[Any, ...]:
    """The values a ``Literal`` hint allows (directly, annotated, or in a union); ()."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return typing.get_args(hint)
    if origin is typing.Annotated:
        return _literal_choices(typing.get_args(hint)[0])
    if origin in (typing.Union, types.UnionType):
        return tuple(c for option in typing.get_args(hint) for c in _literal_choices(option))
    return ()


def _one_of(hint: Any) -> OneOf | None:
    """The closed set a hint names (directly, or in one option of a union)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return next((m for m in typing.get_args(hint)[1:] if isinstance(m, OneOf)), None)
    if origin in (typing.Union, types.UnionType):
        return next(filter(None, map(_one_of, typing.get_args(hint))), None)
    return None


def _own_error(hint: Any) -> type[NpcError]:
    if typing.get_origin(hint) is typing.Annotated:
        for meta in typing.get_args(hint)[1:]:
            if isinstance(meta, type) and issubclass(meta, NpcError):
                return meta
    return ArgumentError


def _problem(value: Any, hint: Any) -> str | None:
    """None if ``value`` fits ``hint``, else a short reason ("" when the type is wrong)."""
    if hint is Any or isinstance(hint, TypeVar):
        return _OK
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _problem(value, typing.get_args(hint)[0])
    if origin in (typing.Union, types.UnionType):
        reasons = [_problem(value, option) for option in typing.get_args(hint)]
        return _OK if _OK in reasons else next((r for r in reasons if r), "")
    if origin is typing.Literal:
        return _OK if value in typing.get_args(hint) else ""
    if origin is not None:
        return _generic_problem(value, origin, typing.get_args(hint))
    return _plain_problem(value, hint)


def _generic_problem(value: Any, origin: Any, args: tuple[Any, ...]) -> str | None:
    if origin is Callable:  # collections.abc.Callable, what get_origin gives for both
        return _OK if callable(value) else ""
    if origin in (list, Sequence, tuple) and not isinstance(value, str | bytes):
        if not isinstance(value, list | tuple):
            return ""
        inner = args[0] if args else Any
        return next((p for p in (_problem(v, inner) for v in value) if p is not None), _OK)
    if origin in (dict, Mapping):
        return _OK if isinstance(value, Mapping) else ""
    return _plain_problem(value, origin)


def _plain_problem(value: Any, hint: Any) -> str | None:
    if hint is None or hint is type(None):
        return _OK if value is None else ""
    if hint is str:
        return _text_problem(value)
    if hint is bool:
        return _OK if isinstance(value, bool) else ""
    if hint in (int, float):
        return _number_problem(value, hint)
    if hint is Path:
        return _OK if isinstance(value, os.PathLike) else ""
    if hint is datetime:
        return _OK if isinstance(value, datetime | date | str) else ""
    if isinstance(hint, type):
        return _OK if isinstance(value, hint) else ""
    return _OK  # a hint this checker does not understand: the method checks it


def _text_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return " (it holds a lone surrogate, which is not valid Unicode text)"
    return _OK


def _number_problem(value: Any, hint: type) -> str | None:
    allowed = (int,) if hint is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed):
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return " (a finite number is needed)"
    return _OK


def _describe(hint: Any) -> str:
    """What a hint accepts, in words; ``Annotated[type, "words"]`` says it itself."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        said = [m for m in typing.get_args(hint)[1:] if isinstance(m, str)]
        closed = _one_of(hint)
        if closed is not None and not said:
            said = [f"a {closed.what} ({', '.join(closed.values)})"]
        return said[0] if said else _describe(typing.get_args(hint)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(option) for option in typing.get_args(hint))
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(hint))
    if hint is None or hint is type(None):
        return "None"
    if hint is datetime:
        return "a datetime, a date or an ISO 8601 string"
    if origin in (list, tuple, Sequence) and typing.get_args(hint):
        return f"a list of {_describe(typing.get_args(hint)[0]).removeprefix('a ')}"
    name = getattr(origin or hint, "__name__", str(hint))
    return {"str": "a string", "int": "a whole number", "float": "a number"}.get(name, f"a {name}")


def _show(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else f"a {type(value).__name__}"


# -- facade members written once, in their service ---------------------------------------


class Forward(Generic[S, P, R]):
    """A facade member that is ``function`` (a service method) bound to ``service``;
    typed as the function without its first parameter, so type checkers see
    ``nb.chat``'s own parameters."""

    def __init__(
        self,
        service: str,
        function: Callable[Concatenate[S, P], R],
        error: type[NpcError] = ArgumentError,
    ) -> None:
        self._path = service.split(".")
        self._source = function
        self._error = error
        self._function = checked(function, error)
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        # The facade's name in every message: "snapshot(): ...", not the service's "take".
        renamed = _renamed(self._source, name, f"{owner.__name__}.{name}")
        self._function = checked(renamed, self._error)

    @overload
    def __get__(
        self, project: None, owner: type | None = None
    ) -> Callable[Concatenate[S, P], R]: ...

    @overload
    def __get__(self, project: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, project: object, owner: type | None = None) -> Any:
        if project is None:
            return self._function
        service = project
        for part in self._path:
            service = getattr(service, part)
        return types.MethodType(self._function, service)


def _renamed(function: Callable[..., Any], name: str, qualname: str) -> Callable[..., Any]:
    """A copy of ``function`` called ``name`` (its code, defaults and annotations)."""
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"Forward takes a plain function, not {function!r}")
    copy = types.FunctionType(
        function.__code__, function.__globals__, name, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__annotations__ = dict(function.__annotations__)
    copy.__doc__ = function.__doc__
    copy.__qualname__ = qualname
    copy.__module__ = function.__module__
    copy.__dict__.update(function.__dict__)
    return copy


def same_signature(source: Callable[..., Any]) -> Callable[[F], F]:
    """Give a method that passes its keywords on to ``source`` (``nb.review`` to
    ``review_session``) ``source``'s parameters, keeping its own return annotation: the
    parameters are written once, in ``source``."""

    def decorate(function: F) -> F:
        own = inspect.signature(function).return_annotation
        shared = inspect.signature(source).replace(return_annotation=own)
        function.__signature__ = shared  # type: ignore[attr-defined]  # read by inspect
        return function

    return decorate
