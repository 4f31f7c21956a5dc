"""Who may do what in a project, ``nb.access``: the review policy every kernel follows,
and, on a shared store, which database roles may read or review the project.

``Access`` is built by the facade from the stores, the memory core (its vote desk
keeps the policy, its identity records who set it) and the project's name; the facade
exposes the object itself, so each method is written once, here. The key design choice:
the policy and the grants are the project's (kept in its store, set by its owner), never
a kernel's: a kernel's settings only fill the keys the project's policy leaves open.
"""

from __future__ import annotations

from typing import Annotated, Literal

from ..._foundations.arguments import checked_methods
from ..._foundations.results import RoleAccess
from ...store import Stores
from ..core import MemoryCore
from .lab_policy import ReviewPolicy

__all__ = ["Access", "Level"]

#: What ``grant`` gives a database role; ownership is not granted: it is the schema's.
Level = Annotated[
    Literal["reader", "reviewer"],
    "'reader' or 'reviewer' (there is no 'owner' to grant: the owner is the role that "
    "owns the project's schema)",
]


@checked_methods()
class Access:
    """The review policy and the database roles' access of one project."""

    def __init__(self, stores: Stores, core: MemoryCore, project: str) -> None:
        self._stores = stores
        self._core = core
        self._project = project

    def policy(self) -> ReviewPolicy:
        """The review policy this kernel follows: the project's stored policy (set by its
        owner) for the keys it sets, this kernel's settings for the others."""
        return self._core.votes.lab_policy()

    def set_policy(
        self,
        *,
        review_mode: Literal["single", "independent"] | None = None,
        reviewers_per_card: int | None = None,
        allow_self_adjudication: bool | None = None,
    ) -> ReviewPolicy:
        """As the project's owner: store the review policy that every kernel and the
        command line follow (the keys given); each change is kept in ``review_policy``."""
        given = {
            "review_mode": review_mode,
            "reviewers_per_card": reviewers_per_card,
            "allow_self_adjudication": allow_self_adjudication,
        }
        values = {key: value for key, value in given.items() if value is not None}
        return self._core.votes.set_policy(values, self._core.identity())

    def grant(self, role: str, level: Level) -> RoleAccess:
        """On a shared store, as the owner of the project's schema: let the database role
        ``role`` read or review this project, exactly that (see docs/lab.md)."""
        return self._stores.project.grant(role, level, project=self._project)

    def revoke(self, role: str) -> RoleAccess:
        """On a shared store, as the owner: take back every grant of ``role`` here."""
        return self._stores.project.grant(role, None, project=self._project)

    def __repr__(self) -> str:
        what = "policy(), set_policy(...), grant(role, level), revoke(role)"
        return f"<nb.access of {self._project!r}: {what}>"
