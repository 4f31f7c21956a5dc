"""Facade members that are a service's methods, written once: in the service.

``chat = Forward("_chat", Conversations.chat)`` in the ``Project`` class makes
``nb.chat`` the service's method, bound to the service the facade built, with the
service's own signature and docstring (``help(nb.chat)``, ``inspect.signature``), behind
the same argument checks every public method has (``arguments.checked``). Nothing is
copied, so a parameter added to the service is the facade's at once.

The key design choice: a descriptor, not generated source and not ``__getattr__``. The
member is a real class attribute, so ``dir()``, completion, ``help(Project)`` and the
docs' signature checks see it; ``Project.chat`` (read on the class) is the checked
function itself, its first parameter the service's ``self``. A method that adds a step
to another one's call (``nb.review`` shows a panel over ``nb.review_session``) takes
that one's parameters by construction: ``same_signature``. ``service`` may be a dotted
path (``"_memory.snapshots"``) to a service the facade's services hold.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import ArgumentError, NpcError
from .arguments import checked

__all__ = ["Forward", "same_signature"]

F = TypeVar("F", bound=Callable[..., Any])


class Forward:
    """A facade member that is ``function`` (a service method) bound to ``service``."""

    def __init__(
        self,
        service: str,
        function: Callable[..., Any],
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
