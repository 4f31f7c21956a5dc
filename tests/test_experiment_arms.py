"""An experiment arm starts from the extraction the project's chats would get (the
``extraction_model`` setting, else the persona's model, else the ``model`` setting,
else the offline model; the project's limit per exchange) and changes only what it
names; the configuration it runs under is the one recorded in ``experiment_arms``."""

from __future__ import annotations

import hashlib
import json

import npc_nb


def _chat_on_the_default_model(nb: npc_nb.Project) -> None:
    """Two exchanges with a persona that names no model, in a project that names none."""
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help analyse field data.")
    nb.chat("analyst", "We decided to use DuckDB for all survey data. I prefer large fonts.")
    nb.chat("analyst", "By Friday I will send the ringing dataset. We agreed to ring adults.")
    nb.extraction.wait()


def _recorded(nb: npc_nb.Project, experiment: str) -> dict[str, tuple[dict, str]]:
    rows = nb.sql(
        "SELECT a.name, a.config, a.config_hash FROM experiment_arms a "
        "JOIN experiments e ON e.id = a.experiment_id WHERE e.name = ?",
        params=[experiment],
    )
    return {
        row["name"]: (json.loads(row["config"]), row["config_hash"]) for _, row in rows.iterrows()
    }


def test_an_arm_that_names_no_model_runs_on_the_model_the_chats_ran_on(
    nb: npc_nb.Project,
) -> None:
    _chat_on_the_default_model(nb)
    arms = {"A": {"max_memories_per_exchange": 1}, "B": {"max_memories_per_exchange": 5}}
    exp = nb.experiment("limits", arms=arms, npc="analyst")
    exp.run()
    status = exp.wait(timeout=120)
    rows = {row["arm"]: row for row in status.rows}
    assert rows["A"]["failed"] == 0 and rows["B"]["failed"] == 0, str(status)
    results = exp.results().set_index("arm")
    assert results.loc["A", "candidates"] == 2  # one per exchange, as arm A says
    assert results.loc["B", "candidates"] > results.loc["A", "candidates"]
    recorded = _recorded(nb, "limits")
    for arm, limit in (("A", 1), ("B", 5)):
        config, config_hash = recorded[arm]
        assert config["model"] == "npc_nb/offline"
        assert config["max_memories_per_exchange"] == limit
        assert (
            config_hash
            == hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
        )


def test_an_arm_inherits_the_personas_model_then_the_extraction_model_setting(
    nb: npc_nb.Project,
) -> None:
    _chat_on_the_default_model(nb)
    nb.configure(max_memories_per_exchange=3)
    arms = {"A": {"temperature": 0.2}, "B": {"model": "npc_nb/offline"}}
    nb.configure(model="scripted/other")
    nb.experiment("project", arms=arms, npc="analyst")
    assert _recorded(nb, "project")["A"][0]["model"] == "scripted/other"  # the model setting
    nb.npc("analyst", directive="You help analyse field data.", model="scripted/any")
    nb.experiment("persona", arms=arms, npc="analyst")
    persona = _recorded(nb, "persona")
    assert persona["A"][0]["model"] == "scripted/any"  # the persona's model comes first
    assert persona["A"][0]["max_memories_per_exchange"] == 3  # the project's limit
    assert persona["A"][0]["temperature"] == 0.2
    assert persona["B"][0]["model"] == "npc_nb/offline"  # named: kept
    nb.configure(extraction_model="scripted/extractor")
    nb.experiment("extraction", arms=arms, npc="analyst")
    assert _recorded(nb, "extraction")["A"][0]["model"] == "scripted/extractor"
