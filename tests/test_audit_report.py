"""Reporting audited batches: ``nb.metrics.audits()`` (one row per audit, its counts
and the bound on the batch's error rate, checked against a bound computed by hand),
the bundle's manifest (each audit stated in it, read back from a written bundle), and
the review summary once the rest is approved (it states the bound).

Real DuckDB files; the sampled cards are decided through the public API.
"""

from __future__ import annotations

import json
import zipfile
from math import comb
from pathlib import Path

import pandas as pd

import npc_nb
from tests.audit_flow import decide_sample, plain_cards

TOLERANCE = 0.2
COLUMNS = [
    "audit", "name", "population", "excluded", "look", "looks", "sample", "reviewed",
    "errors", "bound", "tolerance", "confidence", "nominal_confidence", "meets", "status",
    "approved", "seed", "method", "started_at", "started_by",
]  # fmt: skip


def hand_bound(errors: int, sample: int, population: int, confidence: float) -> float:
    """The exact hypergeometric upper bound, by counting: the largest number of bad
    cards D in the batch for which seeing ``errors`` or fewer in the sample still has
    a probability above 1 - confidence, as a share of the batch."""

    def at_most(bad: int) -> float:
        ways = sum(comb(bad, k) * comb(population - bad, sample - k) for k in range(errors + 1))
        return ways / comb(population, sample)

    return max(bad for bad in range(population + 1) if at_most(bad) > 1 - confidence) / population


def three_audits(nb: npc_nb.Project) -> tuple[npc_nb.Audit, npc_nb.Audit, npc_nb.Audit]:
    """One approved (no error), one failed (one error, a fixed design), one reviewing."""
    plain_cards(nb, 60, npc="analyst")
    plain_cards(nb, 40, npc="planner")
    plain_cards(nb, 30, npc="scribe")
    approved = nb.audit(npc="analyst", tolerance=TOLERANCE, looks=1, seed=1, name="analysts")
    decide_sample(nb, approved)
    approved.approve_rest()
    failed = nb.audit(npc="planner", tolerance=TOLERANCE, looks=1, seed=2, name="planners")
    decide_sample(nb, failed, errors=1)
    reviewing = nb.audit(npc="scribe", tolerance=TOLERANCE, looks=1, name="scribes")
    return approved, failed, reviewing


def test_metrics_audits_has_one_row_per_audit_with_its_counts_and_bound(
    nb: npc_nb.Project,
) -> None:
    approved, failed, reviewing = three_audits(nb)
    frame = nb.metrics.audits()
    assert list(frame.columns) == COLUMNS
    assert frame["name"].tolist() == ["analysts", "planners", "scribes"]
    rows = frame.set_index("name")
    first, second = rows.loc["analysts"], rows.loc["planners"]
    n1, n2 = approved.result().sample, failed.result().sample
    assert (first["population"], first["sample"], first["reviewed"], first["errors"]) == (
        60, n1, n1, 0,
    )  # fmt: skip
    assert first["bound"] == hand_bound(0, n1, 60, 0.95)
    assert first["bound"] == npc_nb.error_bound(0, n1, confidence=0.95, population=60)
    assert first["meets"] and first["bound"] < TOLERANCE
    assert (first["status"], first["approved"]) == ("approved", 60 - n1)
    assert (second["population"], second["errors"], second["approved"]) == (40, 1, 0)
    assert second["bound"] == hand_bound(1, n2, 40, 0.95)
    assert second["status"] == "failed" and not second["meets"]
    third = rows.loc["scribes"]
    assert (third["status"], third["reviewed"], third["look"]) == ("reviewing", 0, 1)
    assert pd.isna(third["errors"]) and pd.isna(third["bound"])  # blind while reviewing
    assert rows["looks"].tolist() == [[n1], [n2], [reviewing.result().sample]]
    assert rows["tolerance"].tolist() == [TOLERANCE] * 3
    assert rows["confidence"].tolist() == [0.95] * 3
    assert rows["seed"].tolist() == [1, 2, 0]
    assert frame["audit"].tolist() == [approved.id, failed.id, reviewing.id]
    assert str(frame["errors"].dtype) == "Int64" and str(frame["bound"].dtype) == "Float64"


def test_metrics_audits_of_a_project_without_audits_is_empty_with_its_columns(
    nb: npc_nb.Project,
) -> None:
    frame = nb.metrics.audits()
    assert frame.empty and list(frame.columns) == COLUMNS


def test_the_bundles_manifest_states_each_audit(nb: npc_nb.Project, tmp_path: Path) -> None:
    approved, _, _ = three_audits(nb)
    path = nb.export_bundle(tmp_path / "lab.zip")
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    stated = {entry["name"]: entry for entry in manifest["audits"]}
    assert list(stated) == ["analysts", "planners", "scribes"]
    first = stated["analysts"]
    n1 = approved.result().sample
    assert (first["sample"], first["errors"], first["status"], first["approved"]) == (
        n1, 0, "approved", 60 - n1,
    )  # fmt: skip
    assert first["bound"] == hand_bound(0, n1, 60, 0.95)
    assert (first["tolerance"], first["confidence"]) == (TOLERANCE, 0.95)
    assert first["id"] == approved.id and first["population"] == 60
    assert "bound" in first["summary"] and "analysts" in first["summary"]
    assert stated["planners"]["errors"] == 1 and stated["planners"]["status"] == "failed"
    assert stated["scribes"]["bound"] is None and stated["scribes"]["errors"] is None
    # The manifest's statement is read, never trusted: the bundle still imports.
    copy = npc_nb.import_bundle(path, tmp_path / "copy", create=True)
    assert copy.inserted["audits"] == 3
    again = npc_nb.open(tmp_path / "copy")
    assert again.metrics.audits()["status"].tolist() == ["approved", "failed", "reviewing"]
    again.close()


def test_the_review_summary_states_the_bound_once_the_rest_is_approved(
    nb: npc_nb.Project,
) -> None:
    plain_cards(nb, 60)
    audit = nb.audit(tolerance=TOLERANCE, looks=1, name="spring")
    panel = nb.review(audit="spring")
    for _ in audit.pending():
        panel.press("a")
    reviewed = str(panel.session.summary())
    assert "bound" not in reviewed  # the review itself stays blind
    audit.approve_rest()
    result = audit.result()
    stated = f"bound {round(result.bound * 100, 2):g}% < 20% at 95%"
    summary = str(panel.session.summary())
    assert stated in summary and "spring" in summary
    assert f"0 error(s) in {result.sample} sampled cards" in summary
    assert f"{result.approved} unsampled card(s) approved as one batch" in summary
