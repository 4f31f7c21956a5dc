"""Experiment: one extraction experiment as the notebook holds it (``nb.experiment``).

It runs the arms (``runner``), reports progress (``status``), opens the blind review
(``blind``: the seeded order, what is hidden; a ``ReviewSession`` like
``nb.review_session()``'s, so decisions go through the same review engine with
``by=``), computes the results and the comparison (``results``) and promotes an arm
into live memory (``promotion``). Everything it knows is in the store: an Experiment
opened again in a new kernel is the same experiment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from html import escape as escape_html
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._foundations.utc import utc_now
from ..errors import ConfigError, InvalidValueError
from ..memory.core import MemoryCore
from ..review import ReviewSession
from ..store import Store
from ..store.experiments import experiment_results, experiment_rows
from .arms import Arm
from .blind import HIDDEN, card_key, ordered
from .progress import LiveProgress
from .promotion import Promotion, promote
from .results import compare_frame, results_frame
from .runner import Runner

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Experiment", "ExperimentStatus"]


@dataclass(frozen=True)
class ExperimentStatus:
    """How far an experiment's run is, per arm: jobs queued, running, done, failed,
    candidates proposed, the last failure's error (``rows``)."""

    name: str
    state: str
    rows: list[dict[str, Any]] = field(repr=False)
    #: Shown already as the run's live display (``run()`` in a notebook): as the cell's
    #: result it is then one line, not the bars a second time.
    shown_live: bool = field(default=False, repr=False)

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows).drop(columns=["position"], errors="ignore")

    @property
    def done(self) -> bool:
        return all(not row["queued"] and not row["running"] for row in self.rows)

    def __str__(self) -> str:
        lines = [f"experiment {self.name!r}: {self.state}"]
        for row in self.rows:
            total = row["queued"] + row["running"] + row["done"] + row["failed"]
            line = (
                f"  {row['arm']}: {row['done']}/{total} done, {row['failed']} failed, "
                f"{row['candidates']} candidates"
            )
            if row["last_error"]:
                line += f" (last error: {row['last_error']})"
            lines.append(line)
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        if self.shown_live:
            line = f"experiment {self.name!r}: {self.state} (progress shown above; exp.status())"
            return {"text/plain": line}
        bars = []
        for row in self.rows:
            total = max(1, row["queued"] + row["running"] + row["done"] + row["failed"])
            done = row["done"] + row["failed"]
            bars.append(
                f"<div>{escape_html(row['arm'])}: <progress value='{done}' max='{total}'>"
                f"</progress> {row['done']} done, {row['failed']} failed, "
                f"{row['candidates']} candidates</div>"
            )
        head = f"<div><b>experiment {escape_html(self.name)}</b>: {self.state}</div>"
        return {"text/plain": str(self), "text/html": head + "".join(bars)}


class Experiment:
    """An extraction experiment: ``run``, ``wait``, ``status``, ``review``,
    ``review_session``, ``results``, ``compare``, ``plot``, ``promote``."""

    def __init__(
        self, memory: MemoryCore, store: Store, row: dict, arms: dict[str, Arm], runner: Runner
    ) -> None:
        self._memory, self._store, self._row = memory, store, row
        self._arms = arms  # by arm id, in order
        self._runner = runner

    @property
    def name(self) -> str:
        return str(self._row["name"])

    @property
    def seed(self) -> int:
        return int(self._row["seed"])

    @property
    def arms(self) -> list[str]:
        """The arms' names, in order (the first is the default baseline)."""
        return [arm.name for arm in self._arms.values()]

    def configuration(self) -> dict[str, Any]:
        """Everything recorded: the seed, the conversation selection, each arm's whole
        configuration and its hash."""
        return {
            "name": self.name,
            "seed": self.seed,
            "npc": self._row["npc"],
            "selection": json.loads(self._row["selection"]),
            "exchanges": int(self._row["exchanges"]),
            "arms": {a.name: a.config | {"hash": a.config_hash} for a in self._arms.values()},
        }

    # -- running --------------------------------------------------------------------------

    def run(self, *, retry_failed: bool = False) -> ExperimentStatus:
        """Re-extract every selected exchange under every arm in the background; returns at
        once with the progress (in a notebook, a display the run keeps up to date). Run
        again after a killed kernel: only what is not done runs (``retry_failed=True``
        also runs failed jobs again)."""
        scripted = [
            a.name for a in self._arms.values() if a.config["extractor"] and not a.extractor
        ]
        if scripted:
            raise ConfigError(
                f"Arm(s) {', '.join(map(repr, scripted))} of experiment {self.name!r} are run "
                "by a Python callable this kernel was not given: open the experiment with its "
                f"arms, nb.experiment({self.name!r}, arms={{...}}), then run()."
            )
        live = None if self._runner.running else LiveProgress.show(self.status)
        if live is not None:
            self._runner.on_progress = live.update
        self._runner.start(retry_failed=retry_failed)
        return replace(self.status(), shown_live=live is not None)

    def wait(self, timeout: float | None = None) -> ExperimentStatus:
        """Block until the run is done (TimeoutError after ``timeout`` seconds)."""
        self._runner.wait(timeout)
        return self.status()

    def status(self) -> ExperimentStatus:
        found = experiment_rows.find(self._store, self.name)
        state = found[0]["state"] if found else "unknown"
        if state == "running" and not self._runner.running:
            state = "interrupted (run() resumes it)"
        rows = experiment_rows.arm_counts(self._store, self._row["id"])
        return ExperimentStatus(self.name, state, rows)

    # -- reviewing ------------------------------------------------------------------------

    def review_session(self, *, by: str | None = None, adjudicate: bool = False) -> ReviewSession:
        """The blind review of the experiment's open cards (every arm's, interleaved in
        the seeded order, nothing shown that tells the arm); recorded with its order.
        In independent review (``review_mode="independent"``) each decision is a vote,
        and ``adjudicate=True`` reviews the experiment's cards whose votes disagree."""
        keys = {
            memory_id: card_key(self.seed, arm, message, item)
            for memory_id, arm, message, item in experiment_rows.card_items(
                self._store, self._row["id"]
            )
        }
        session = ReviewSession(
            self._memory,
            by=by,
            arms=tuple(self._arms),
            order=lambda ids: ordered(ids, keys),
            blind=True,
            adjudicate=adjudicate,
        )
        experiment_rows.record_review(
            self._store,
            {
                "id": session.session_id,
                "experiment_id": self._row["id"],
                "opened_at": utc_now(),
                "opened_by": self._memory.actor(by),
                "seed": self.seed,
                "hidden": list(HIDDEN),
                "card_order": session.card_order(),
            },
        )
        return session

    def review(self, *, by: str | None = None, adjudicate: bool = False) -> Any:
        """The review panel (ipywidgets) over ``review_session()``: blind."""
        from ..review.panel import ReviewPanel  # ipywidgets: on first use

        return ReviewPanel(self.review_session(by=by, adjudicate=adjudicate))

    # -- results --------------------------------------------------------------------------

    def results(self) -> pd.DataFrame:
        """One row per arm: candidates, duplicates, flags, decisions, rates with Wilson
        95% intervals and counts, median review time (``results.results_frame``)."""
        cards = experiment_results.card_frame(self._store, self._row["id"])
        items = experiment_results.item_frame(self._store, self._row["id"])
        return results_frame(cards, items, self.arms, int(self._row["exchanges"]))

    def compare(self, metric: str = "approval_rate", baseline: str | None = None) -> pd.DataFrame:
        """Each arm against ``baseline`` (default: the first arm) on ``metric``:
        ``approval_rate``, ``edit_rate``, ``rejection_rate`` (Newcombe interval, Fisher
        p, Holm, the permutation test and a bootstrap interval over conversations, with
        a note where the bootstrap cannot be trusted) or ``decision`` (chi-square)."""
        baseline = self.arms[0] if baseline is None else self._arm_named(baseline)
        cards = experiment_results.card_frame(self._store, self._row["id"])
        return compare_frame(cards, self.arms, metric, baseline, self.seed)

    def plot(self, ax: Axes | None = None) -> Axes:
        """The arms' approval, edit and rejection rates with their 95% intervals."""
        from ..analytics.plots import arm_rates

        rates = ("approval_rate", "edit_rate", "rejection_rate")
        return arm_rates(self.results(), rates, title=f"Experiment {self.name}", ax=ax)

    def promote(self, arm: str, *, by: str | None = None) -> Promotion:
        """The arm's approved memories into live memory, through the live matcher (see
        ``promotion``); promoting again promotes only what was approved since."""
        name = self._arm_named(arm)
        arm_id = next(i for i, a in self._arms.items() if a.name == name)
        return promote(self._memory, self._store, arm_id, name, self.name, by)

    def _arm_named(self, arm: object) -> str:
        if arm not in self.arms:
            raise InvalidValueError(
                "arm", arm, tuple(self.arms), lead=f"Experiment {self.name!r} has no arm {arm!r}"
            )
        return str(arm)

    def __repr__(self) -> str:
        return f"<Experiment {self.name!r}: arms {', '.join(self.arms)}, seed {self.seed}>"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return self.status()._repr_mimebundle_()
