"""Experiments: the service the facade builds (``nb.experiment``, ``nb.experiments``).

Creating an experiment records, in one transaction, the experiment (its seed, the
conversation selection as asked and the exchanges it found), its arms' whole
configurations, and its work list: exchange by exchange, the arms in a seeded order
within each. Asking again for an experiment by name opens it (in any kernel); asking
with other arms than recorded is refused: a new configuration is a new experiment.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .._foundations.ids import new_id
from .._foundations.results import CandidateOutcome
from .._foundations.settings import Settings
from .._foundations.utc import to_utc, utc_now
from ..errors import ConfigError
from ..memory.core import MemoryCore
from ..models.recording import Recorder
from ..store import Store
from ..store.experiments import experiment_rows
from .arms import Arm, checked_arms
from .experiment import Experiment
from .runner import Runner

__all__ = ["Experiments"]


class Experiments:
    """The project's experiments: create or open one, list them, stop their runs."""

    def __init__(
        self,
        store: Store,
        memory: MemoryCore,
        settings: Settings,
        recorder: Recorder,
        folder: Path,
        propose: Callable[..., CandidateOutcome],
        default_model: Callable[[str | None], str],
    ) -> None:
        """``default_model(npc)``: the model an arm that names none runs on (the one the
        persona's live extraction would use)."""
        self._store, self._memory, self._settings = store, memory, settings
        self._default_model = default_model
        self._recorder, self._folder, self._propose = recorder, folder, propose
        self._runners: dict[str, Runner] = {}  # one per experiment in this process
        self._lock = threading.Lock()

    def experiment(
        self,
        name: str,
        arms: dict[str, dict[str, Any]] | None = None,
        *,
        conversation: Any = None,
        npc: str | None = None,
        seed: int = 0,
    ) -> Experiment:
        """An extraction experiment: the stored exchanges of ``conversation`` (an id, a
        list of ids, or a dict of ids, npc, since, until; default: all of ``npc``'s)
        re-extracted under each arm (``arms={"A": {"model": ..., "prompt": ...}, "B":
        {...}}``), matched only within its arm, reviewed blind, compared, promoted (see
        ``npc_nb.experiments``). Asked again by name, the recorded experiment opens."""
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("An experiment needs a name: nb.experiment('prompt-v2', arms=...).")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(f"seed must be a whole number, not {seed!r}.")
        found = experiment_rows.find(self._store, name)
        if found is None:
            if arms is None:
                raise ConfigError(
                    f"There is no experiment {name!r}; create it with "
                    f"nb.experiment({name!r}, arms={{'A': {{...}}, 'B': {{...}}}})."
                )
            checked = self._checked(arms, npc)
            self._create(name, checked, _selection(conversation, npc), npc, seed)
            found = experiment_rows.find(self._store, name)
            assert found is not None
        row, recorded = found
        given = None if arms is None else self._checked(arms, npc)
        return self._opened(row, recorded, given)

    def _checked(self, arms: Any, npc: str | None) -> list[Arm]:
        """The arms resolved against what the project's extraction of ``npc`` uses now."""
        return checked_arms(arms, self._settings, self._folder, self._default_model(npc))

    def listing(self) -> pd.DataFrame:
        """Every experiment with its state, arms, exchanges, jobs and cards."""
        return experiment_rows.listing(self._store)

    def stop(self) -> None:
        for runner in self._runners.values():
            runner.stop()

    def _create(
        self, name: str, arms: list[Arm], selection: dict[str, Any], npc: str | None, seed: int
    ) -> None:
        exchanges = experiment_rows.exchanges(self._store, selection)
        if not exchanges:
            raise ConfigError(
                f"No stored exchange matches the experiment's conversations ({selection}); "
                "chat first, or select conversations that exist (conversation=[ids], npc=)."
            )
        experiment_id = new_id()
        arm_ids = {arm.name: new_id() for arm in arms}
        jobs = []
        for place, exchange in enumerate(exchanges):
            shuffled = list(arms)
            random.Random(f"{seed}:{exchange['message_id']}").shuffle(shuffled)
            jobs += [
                {
                    "arm_id": arm_ids[arm.name],
                    "experiment_id": experiment_id,
                    "position": place * len(arms) + within,
                    "state": "queued",
                    "attempts": 0,
                    **exchange,
                }
                for within, arm in enumerate(shuffled)
            ]
        experiment_rows.create(
            self._store,
            {
                "id": experiment_id,
                "name": name,
                "npc": npc,
                "seed": seed,
                "selection": json.dumps(selection, sort_keys=True, default=str),
                "exchanges": len(exchanges),
                "state": "created",
                "created_at": utc_now(),
                "created_by": self._memory.actor(None),
            },
            [
                {
                    "id": arm_ids[arm.name],
                    "experiment_id": experiment_id,
                    "name": arm.name,
                    "position": arm.position,
                    "config": arm.config_json,
                    "config_hash": arm.config_hash,
                }
                for arm in arms
            ],
            jobs,
        )

    def _opened(self, row: dict, recorded: list[dict], given: list[Arm] | None) -> Experiment:
        """The experiment as recorded; ``given`` arms must be the recorded ones."""
        if given is not None:
            mine = [(a.name, a.config_hash) for a in given]
            theirs = [(a["name"], a["config_hash"]) for a in recorded]
            if mine != theirs:
                raise ConfigError(
                    f"Experiment {row['name']!r} exists with other arms ({theirs}); open it "
                    f"with nb.experiment({row['name']!r}) or give a new name for new arms."
                )
        callables = {a.name: a.extractor for a in given or []}
        arms = {
            a["id"]: Arm(
                a["name"], a["position"], json.loads(a["config"]), callables.get(a["name"])
            )
            for a in recorded
        }
        with self._lock:
            runner = self._runners.get(row["id"])
            if runner is None or (given is not None and not runner.running):
                runner = self._runners[row["id"]] = Runner(
                    self._store, self._settings, self._recorder, self._propose, row["id"], arms
                )
        return Experiment(self._memory, self._store, row, arms, runner)


def _selection(conversation: Any, npc: str | None) -> dict[str, Any]:
    """The conversation selection as recorded: ids, a persona, a time range."""
    if conversation is None:
        return {"npc": npc}
    if isinstance(conversation, str):
        return {"ids": [conversation], "npc": npc}
    if isinstance(conversation, list | tuple):
        if not all(isinstance(c, str) for c in conversation):
            raise ConfigError("conversation= takes conversation ids (text).")
        return {"ids": list(conversation), "npc": npc}
    if isinstance(conversation, dict):
        unknown = set(conversation) - {"ids", "npc", "since", "until"}
        if unknown:
            raise ConfigError(
                f"conversation= takes ids, npc, since and until; not {sorted(unknown)}."
            )
        picked = {"npc": conversation.get("npc", npc), "ids": conversation.get("ids")}
        for key in ("since", "until"):
            if conversation.get(key) is not None:
                picked[key] = _moment(conversation[key], key)
        return {k: v for k, v in picked.items() if v is not None} or {"npc": None}
    raise ConfigError(
        "conversation= takes None (all of the persona's), ids, or a dict of ids, npc, "
        f"since, until; not {type(conversation).__name__}."
    )


def _moment(value: Any, key: str) -> datetime:
    if not isinstance(value, datetime):
        raise ConfigError(f"conversations[{key!r}] must be a datetime.")
    return to_utc(value, name=f"conversations[{key!r}]")
