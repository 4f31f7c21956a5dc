"""Experiments from the front ends and in the numbers: the CLI's and the magic's blind
review, compare() against hand-computed statistics, and the new tables in a bundle and
a store move."""

from __future__ import annotations

import json
from pathlib import Path

import npc_nb
from npc_nb import Approve, Reject
from npc_nb.analytics.comparison import fisher_exact, newcombe_interval
from npc_nb.store.moving.move import migrate_store
from tests.helpers import cell, run_cli

WORDS = (
    "amber basalt cobalt dune ember fjord glacier harbor indigo jasper kelp lagoon meadow "
    "nebula obsidian prairie quartz reef sierra tundra umber violet willow xenon yarrow "
    "zephyr anvil bramble canyon delta estuary fern grotto heath islet juniper knoll "
    "lichen moor nectar oasis pebble quarry ridge savanna thicket upland vale wharf"
).split()


def _statements(start: int, count: int) -> list[str]:
    return [f"The {WORDS[i]} protocol is final." for i in range(start, start + count)]


def _scripted(statements: list[str]):
    def extractor(user: str, reply: str) -> str:
        return json.dumps({"memories": [{"statement": s, "category": "fact"} for s in statements]})

    return extractor


def _experiment(nb: npc_nb.Project, a: int, b: int) -> npc_nb.Experiment:
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help.", model="npc_nb/offline")
    nb.chat("analyst", "Hello there.")
    arms = {
        "control": {"extractor": _scripted(_statements(0, a)), "max_memories_per_exchange": 40},
        "treatment": {
            "extractor": _scripted(_statements(a, b)),
            "max_memories_per_exchange": 40,
            "prompt_version": "v2-secret",
        },
    }
    exp = nb.experiment("numbers", arms=arms, npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    return exp


def test_compare_matches_hand_computed_newcombe_and_fisher(nb: npc_nb.Project) -> None:
    exp = _experiment(nb, 10, 10)
    # control: 2 of 10 approved; treatment: 7 of 10 (the rest rejected)
    approve = set(_statements(0, 2)) | set(_statements(10, 7))
    session = exp.review_session(by="bob")
    while (card := session.card()) is not None:
        session.decide((Approve if card.text in approve else Reject)(session.current))
    results = exp.results().set_index("arm")
    assert results.loc["control", ["decided", "approved"]].tolist() == [10, 2]
    assert results.loc["treatment", ["decided", "approved"]].tolist() == [10, 7]
    row = exp.compare().iloc[0]
    assert (row["arm"], row["baseline"]) == ("treatment", "control")
    assert abs(row["difference"] - 0.5) < 1e-12
    # Fisher's exact test on [[7, 3], [2, 8]]: two-sided p = 0.06978 (hand-computed:
    # the tables at least as extreme, hypergeometric probabilities summed)
    assert abs(row["p_value"] - 0.0698) < 1e-3
    assert row["p_value"] == fisher_exact([[7, 3], [2, 8]])
    _, low, high = newcombe_interval(7, 10, 2, 10)
    assert (row["ci_low"], row["ci_high"]) == (low, high)
    # Newcombe's hybrid score interval by hand: Wilson bounds of 0.7 (0.3968, 0.8922)
    # and of 0.2 (0.0567, 0.5098); 0.5 - sqrt(0.3032² + 0.3098²) = 0.0665 and
    # 0.5 + sqrt(0.1922² + 0.1433²) = 0.7397
    assert abs(low - 0.0665) < 1e-3 and abs(high - 0.7397) < 1e-3
    categories = exp.compare("decision").iloc[0]
    assert categories["test"] == "chi-square" and categories["df"] == 1


def test_the_cli_review_of_an_experiment_names_no_arm(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    _experiment(nb, 3, 3)
    nb.close()
    done = run_cli("review", "--experiment", "numbers", "--by", "bob", cwd=project_dir,
                   keys="a\n" * 6 + "q\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "protocol is final." in done.stdout
    for revealing in ("control", "treatment", "v2-secret", "tests.test_experiment", "numbers"):
        assert revealing not in done.stdout.replace("--experiment numbers", "")
    again = npc_nb.open(project_dir)
    assert again.experiment("numbers").results()["decided"].tolist() == [3, 3]
    again.close()


def test_the_magic_opens_the_blind_panel(shell, project_dir: Path) -> None:
    nb = npc_nb.open(project_dir)
    _experiment(nb, 2, 2)
    panel = cell(shell, "%npc_review --experiment numbers")
    html = panel.card_html() if hasattr(panel, "card_html") else repr(panel)
    assert panel.session.remaining == 4
    assert "treatment" not in html and "control" not in html
    nb.close()


_EXPERIMENT_ROWS = (
    "SELECT (SELECT count(*) FROM experiments) AS experiments, "
    "(SELECT count(*) FROM experiment_arms) AS arms, "
    "(SELECT count(*) FROM experiment_jobs WHERE state = 'done') AS jobs, "
    "(SELECT count(*) FROM experiment_items) AS items, "
    "(SELECT count(*) FROM experiment_reviews) AS reviews, "
    "(SELECT count(*) FROM memories WHERE experiment_arm IS NOT NULL) AS cards"
)


def _reviewed(nb: npc_nb.Project) -> dict:
    exp = _experiment(nb, 3, 2)
    session = exp.review_session(by="bob")
    while session.card() is not None:
        session.decide(Approve(session.current))
    return nb.sql(_EXPERIMENT_ROWS).iloc[0].to_dict()


def test_a_bundle_carries_an_experiment(nb: npc_nb.Project, tmp_path: Path) -> None:
    counts = _reviewed(nb)
    assert counts == {"experiments": 1, "arms": 2, "jobs": 2, "items": 5, "reviews": 1, "cards": 5}
    copy = npc_nb.import_bundle(
        nb.export_bundle(tmp_path / "b.zip"), tmp_path / "copy", create=True
    )
    opened = npc_nb.open(tmp_path / "copy")
    assert opened.sql(_EXPERIMENT_ROWS).iloc[0].to_dict() == counts
    assert opened.experiment("numbers").results()["approved"].tolist() == [3, 2]
    assert opened.review_queue().empty  # still kept out of live memory
    opened.close()
    assert copy is not None


def test_migrate_store_moves_an_experiment(
    nb: npc_nb.Project, tmp_path: Path, project_dir: Path
) -> None:
    counts = _reviewed(nb)
    nb.close()
    target = tmp_path / "moved"
    target.mkdir()
    migrate_store(project_dir, target)
    moved = npc_nb.open(target)
    assert moved.sql(_EXPERIMENT_ROWS).iloc[0].to_dict() == counts
    assert moved.experiment("numbers").results()["approved"].tolist() == [3, 2]
    moved.close()


def test_an_experiment_runs_on_postgresql(project_dir: Path, postgres_url: str) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    counts = _reviewed(nb)
    assert counts["cards"] == 5 and counts["jobs"] == 2
    exp = nb.experiment("numbers")
    assert exp.results()["approved"].tolist() == [3, 2]
    assert nb.review_queue().empty and nb.memories(status="approved").empty
    assert exp.promote("control").counts["approved"] == 3
    assert len(nb.memories(status="approved")) == 3
    nb.close()


def test_in_a_notebook_run_shows_progress_that_the_run_keeps_up_to_date(
    project_dir: Path, isolated_home: Path
) -> None:
    """exp.run() in a real kernel (nbclient) shows the bars per arm at once, as one
    display the run updates: once the run is done the display holds the final counts,
    and the cell's result is one line, not the bars a second time."""
    import nbformat
    from nbclient import NotebookClient

    opening = (
        "import json, npc_nb\n"
        f"nb = npc_nb.open({str(project_dir)!r}, create=True, extract_in_background=False)\n"
        "nb.npc('analyst', directive='You help.', model='npc_nb/offline')\n"
        "for n in range(4):\n"
        "    nb.chat('analyst', f'We decided to use tool {n} for the survey.', new=True)\n"
        "nb.extraction.cancel()\n"
        "def one(user, reply):\n"
        "    s = user.split(' for ')[0]\n"
        "    return json.dumps({'memories': [{'statement': s + '.', 'category': 'decision',"
        " 'evidence_quote': s}]})\n"
        "exp = nb.experiment('live', arms={'A': {'extractor': one}, "
        "'B': {'extractor': one, 'prompt_version': 'v2'}}, npc='analyst')"
    )
    cells = [opening, "exp.run()", "exp.wait(); None"]
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(book, timeout=300, kernel_name="python3").execute()
    outputs = book.cells[1].outputs
    shown = [o for o in outputs if o["output_type"] == "display_data"]
    assert len(shown) == 1 and shown[0]["metadata"] == {}
    assert "transient" not in shown[0]  # saved without its id; updated in place before
    html = shown[0]["data"]["text/html"]
    assert "<progress value='4' max='4'>" in html and html.count("<progress") == 2
    assert "4 done, 0 failed" in html
    result = [o for o in outputs if o["output_type"] == "execute_result"]
    assert "progress shown above" in result[0]["data"]["text/plain"]
