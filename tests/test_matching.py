"""Ask once per fact: each matcher verdict's outcome, the guards that keep a tombstone
from swallowing a correction, failing matchers, and proposed updates that supersede."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import npc_nb

REPO = Path(__file__).resolve().parents[1]


def always(verdict: str, score: float = 95.0):
    def matcher(candidate: str, neighbours: list[str]) -> list:
        always.calls.append((candidate, list(neighbours)))
        return [(verdict, score)] * len(neighbours)

    return matcher


always.calls = []


@pytest.fixture
def open_with(project_dir: Path):
    opened = []

    def opener(**settings: object) -> npc_nb.Project:
        nb = npc_nb.open(project_dir, **settings)
        opened.append(nb)
        return nb

    yield opener
    for nb in opened:
        nb.close()


def add(nb: npc_nb.Project, text: str, **fields: object) -> npc_nb.CandidateOutcome:
    fields.setdefault("category", "fact")
    fields.setdefault("npc", "analyst")
    return nb.add_candidate(text, **fields)


@pytest.mark.parametrize(
    ("decide", "action", "kind"),
    [("reject", "suppressed", "rejected"), ("approve", "reinforced", "approved"),
     (None, "merged", "pending")],
)  # fmt: skip
def test_the_same_fact_is_not_asked_again(
    open_with, decide: str | None, action: str, kind: str
) -> None:
    nb = open_with(matcher=always("same", 91))
    first = add(nb, "The field team uses tablets for the survey.")
    if decide:
        getattr(nb, decide)(first.memory_id)
    again = add(nb, "Survey answers are collected on tablets by the field team.")
    assert (again.action, again.memory_id, again.verdict) == (action, first.memory_id, "same")
    assert again.similarity == 91.0
    row = nb.reproposals().iloc[-1]
    assert (row["match_kind"], row["verdict"], row["outcome"], row["score"]) == (
        kind,
        "same",
        action,
        91.0,
    )
    assert row["matcher"] == "matcher"  # the callable's name
    assert len(nb.review_queue()) == (1 if decide is None else 0)


@pytest.mark.parametrize(
    ("decide", "action"), [("reject", "suppressed"), ("approve", "reinforced")]
)
def test_a_neighbour_decided_after_it_was_read_is_judged_as_it_is_now(
    open_with, decide: str, action: str
) -> None:
    """A neighbour's row is kept between candidates (the same memories are neighbours of
    many); a decision on it in between must count, or a rejected fact would be asked
    again as a card merged into a rejected one."""
    nb = open_with(matcher=always("same", 91))
    first = add(nb, "The field team uses tablets for the survey.")
    merged = add(nb, "Survey answers are collected on tablets by the field team.")
    assert (merged.action, merged.memory_id) == ("merged", first.memory_id)
    getattr(nb, decide)(first.memory_id)
    again = add(nb, "The survey answers are taken on tablets by the field team.")
    assert (again.action, again.memory_id) == (action, first.memory_id)
    assert nb.review_queue().empty


def test_a_rejection_is_not_asked_again_when_other_personas_hold_many_closer_memories(
    open_with,
) -> None:
    # A hundred personas' memories with the same words rank with this one: its own
    # persona's tombstone must still be among the neighbours the matcher judges.
    nb = open_with()  # matcher="offline"
    for n in range(100):
        add(nb, "The tablets live in the van.", npc=f"persona{n}")
    rejected = add(nb, "The tablets live in the van.", npc="analyst")
    nb.reject(rejected.memory_id)
    again = add(nb, "Note: the tablets live in the van, as discussed", npc="analyst")
    assert (again.action, again.memory_id) == ("suppressed", rejected.memory_id)


def test_a_rejection_is_not_asked_again_when_the_user_store_holds_many_neighbours(
    open_with,
) -> None:
    # Twelve global memories (the user store) share its words: the project's own
    # tombstone must still be judged, not crowded out by the other store's neighbours.
    nb = open_with()  # matcher="offline"
    for n in range(12):
        add(nb, f"The tablets live in hut {n}.", scope="global", npc=None)
    rejected = add(nb, "The tablets live in the van.", npc="analyst")
    nb.reject(rejected.memory_id)
    again = add(nb, "Note: the tablets live in the van, as discussed", npc="analyst")
    assert (again.action, again.memory_id) == ("suppressed", rejected.memory_id)


def test_a_different_fact_is_queued(open_with) -> None:
    nb = open_with(matcher=always("different"))
    nb.reject(add(nb, "The field team uses tablets for the survey.").memory_id)
    assert add(nb, "The field team works on weekends.").queued


@pytest.mark.parametrize(
    ("rejected", "correction", "what"),
    [
        ("The batch size is 32.", "The batch size is 64.", "number: 32 → 64"),
        ("We use DuckDB for the store.", "We no longer use DuckDB for the store.", "negation"),
        ("Maria leads the survey.", "Mario leads the survey.", "name: maria → mario"),
        ("We use Python 3.11.", "We use Python 3.12.", "3.11 → 3.12"),
        ("The paper is due on March 15.", "The paper is due on March 25.", "March 15 → March 25"),
    ],
)
def test_a_matcher_that_always_says_same_never_swallows_a_correction(
    open_with, rejected: str, correction: str, what: str
) -> None:
    nb = open_with(matcher=always("same"))
    old = add(nb, rejected)
    nb.reject(old.memory_id)
    outcome = add(nb, correction)
    assert outcome.queued and outcome.verdict == "update"
    assert old.memory_id in outcome.differs and what in outcome.differs
    card = nb.review_queue().iloc[0]
    assert card["final_text"] == correction and what in card["differs"]


def test_the_default_matcher_catches_filler_variants_but_not_corrections(open_with) -> None:
    nb = open_with()  # matcher="offline"
    rejected = add(nb, "The batch size is 32.")
    nb.reject(rejected.memory_id)
    approved = add(nb, "We use DuckDB for the store.")
    nb.approve(approved.memory_id)
    assert add(nb, "Note: the batch size is 32").action == "suppressed"
    assert add(nb, "We use DuckDB for the store, as discussed.").action == "reinforced"
    assert add(nb, "The batch size is 64.").queued
    assert add(nb, "We prefer coffee over tea").queued
    assert add(nb, "We prefer tea over coffee").queued  # the same words, another claim


@pytest.mark.parametrize(("threshold", "action"), [(80, "suppressed"), (90, "queued")])
def test_a_rewording_is_the_same_fact_when_its_meaning_is_close_enough(
    open_with, threshold: float, action: str
) -> None:
    # "speaks" is the one word the memory lacks; the embedding's cosine of the two
    # sentences (about 0.84) explains it away at the default threshold, not at 90.
    nb = open_with(near_duplicate_threshold=threshold)
    rejected = add(nb, "Caroline gave a talk at a school event.")
    nb.reject(rejected.memory_id)
    assert add(nb, "Caroline speaks at her school.").action == action


def test_the_embedding_is_asked_only_about_neighbours_it_could_make_the_same(
    monkeypatch,
) -> None:
    from npc_nb.memory import matching

    asked: list[tuple[str, list[str]]] = []
    real = matching.similarities

    def recorded(candidate: str, others: list[str]) -> list[float] | None:
        asked.append((candidate, list(others)))
        return real(candidate, others)

    monkeypatch.setattr(matching, "similarities", recorded)
    candidate = "Caroline speaks at her school."
    neighbours = [
        "The batch size is 32.",  # nothing in common
        "Caroline gave a talk at a school event.",  # one word to explain: a rewording
        "Caroline speaks at her old school.",  # every word in it: same already
    ]
    verdicts = matching.offline_matcher(candidate, neighbours)
    assert asked == [(candidate, [neighbours[1]])]
    # ... and the verdicts are those of judging each with its meaning, one by one
    assert verdicts == [
        (j.verdict, j.score)
        for j in (
            matching.offline_judgement(candidate, text, meaning)
            for text, meaning in zip(neighbours, real(candidate, neighbours), strict=True)
        )
    ]
    assert [verdict for verdict, _ in verdicts] == ["different", "same", "same"]
    asked.clear()
    matching.offline_matcher("The batch size is 64.", neighbours)
    assert asked == []  # no rewording among them: no embedding at all


def test_an_update_of_an_approved_memory_supersedes_it_when_approved_and_undo_restores(
    open_with,
) -> None:
    nb = open_with()
    old = add(nb, "We use DuckDB for the store.")
    nb.approve(old.memory_id)
    update = add(nb, "We no longer use DuckDB for the store.")
    assert update.queued and update.updates == old.memory_id
    assert nb.review_queue().iloc[0]["updates"] == old.memory_id
    result = nb.approve(update.memory_id)
    assert dict((m, to) for m, _, to in result.changes) == {
        update.memory_id: "human-approved",
        old.memory_id: "superseded",
    }
    assert "no longer" in nb.context("analyst") and "- [npc/fact] We use" not in nb.context(
        "analyst"
    )
    rows = nb.memories().set_index("id")
    assert rows.loc[old.memory_id, "superseded_by"] == update.memory_id
    assert rows.loc[update.memory_id, "updates"] == old.memory_id
    nb.undo()
    rows = nb.memories().set_index("id")
    assert rows.loc[old.memory_id, "status"] == "human-approved"
    assert rows.loc[update.memory_id, "status"] == "pending_approval"
    assert "We use DuckDB" in nb.context("analyst")


@pytest.mark.parametrize(
    "broken",
    [
        lambda candidate, neighbours: 1 / 0,
        lambda candidate, neighbours: ["same"] * (len(neighbours) + 1),
        lambda candidate, neighbours: ["maybe"] * len(neighbours),
        lambda candidate, neighbours: "same",
    ],
)
def test_a_failing_matcher_queues_the_candidate_and_records_why(open_with, broken) -> None:
    nb = open_with(matcher=broken)
    nb.reject(add(nb, "The field team uses tablets.").memory_id)
    outcome = add(nb, "The field team uses tablets for the survey.")
    assert outcome.queued and outcome.error
    stored = nb.memories().set_index("id").loc[outcome.memory_id]
    assert stored["match_error"] == outcome.error


class _LyingLength(Sequence):
    """A sequence whose length says one verdict per neighbour but that holds only one."""

    def __init__(self, verdicts: int) -> None:
        self.verdicts = verdicts

    def __len__(self) -> int:
        return self.verdicts

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if i == 0:
            return "same"
        raise IndexError(i)


def _pops_one(candidate: str, neighbours: list[str]) -> list:
    neighbours.pop()
    return ["same"] * len(neighbours)


def _appends_one(candidate: str, neighbours: list[str]) -> list:
    neighbours.append("an extra neighbour")
    return ["different"] * len(neighbours)


def _clears(candidate: str, neighbours: list[str]) -> list:
    neighbours.clear()
    return []


@pytest.mark.parametrize(
    "faulty",
    [
        _pops_one,
        _appends_one,
        _clears,
        lambda candidate, neighbours: ["same"] * (len(neighbours) - 1),
        lambda candidate, neighbours: ("same" for _ in neighbours),
        lambda candidate, neighbours: _LyingLength(len(neighbours)),
        lambda candidate, neighbours: dict.fromkeys(neighbours, "same"),
        lambda candidate, neighbours: None,
        lambda candidate, neighbours: [None] * len(neighbours),
        lambda candidate, neighbours: [("same", "high")] * len(neighbours),
        lambda candidate, neighbours: [("same", 90, "sure")] * len(neighbours),
    ],
    ids=[
        "pops-its-list", "appends-to-its-list", "clears-its-list", "one-fewer", "generator",
        "length-that-lies", "dict", "none", "none-verdicts", "text-score", "triples",
    ],
)  # fmt: skip
def test_a_matcher_that_answers_other_than_asked_queues_the_candidate_and_records_why(
    open_with, faulty
) -> None:
    """Two neighbours asked about, anything but two valid verdicts back (however the
    matcher got there, its own list changed in place included): the candidate is
    queued, the fault recorded where every matcher fault is, nothing raised."""
    nb = open_with(matcher=None)
    nb.reject(add(nb, "The field team uses tablets.").memory_id)
    nb.approve(add(nb, "The field team uses tablets on site.").memory_id)
    nb.configure(matcher=faulty)
    outcome = add(nb, "The field team uses tablets for the survey.")
    assert outcome.queued and "matcher failed" in (outcome.error or "")
    stored = nb.memories().set_index("id")
    assert stored.loc[outcome.memory_id, "match_error"] == outcome.error
    assert stored.loc[outcome.memory_id, "status"] == "pending_approval"
    assert sorted(stored["status"]) == ["human-approved", "human-rejected", "pending_approval"]


def test_a_matcher_that_empties_its_list_after_answering_is_judged_on_its_answer(
    open_with,
) -> None:
    """The neighbour list is the matcher's own copy: what it does to the list once it
    has answered changes nothing of what was asked, so its verdicts hold."""
    asked: list[list[str]] = []

    def tidy(candidate: str, neighbours: list[str]) -> list:
        asked.append(neighbours)
        verdicts = ["same"] * len(neighbours)
        neighbours.clear()
        return verdicts

    nb = open_with(matcher=tidy)
    rejected = add(nb, "The field team uses tablets.")
    nb.reject(rejected.memory_id)
    outcome = add(nb, "The field team uses tablets for the survey.")
    assert (outcome.action, outcome.memory_id, outcome.error) == (
        "suppressed", rejected.memory_id, None,
    )  # fmt: skip
    again = add(nb, "The field team uses tablets in the field.")
    assert again.action == "suppressed" and asked[-1] is not asked[-2]


def test_the_matcher_is_not_called_without_neighbours(open_with) -> None:
    always.calls.clear()
    nb = open_with(matcher=always("same"))
    assert add(nb, "The first memory of this persona.").queued
    assert always.calls == []


def test_exact_repeats_are_decided_without_a_matcher(open_with) -> None:
    always.calls.clear()
    nb = open_with(matcher=always("different"))
    first = add(nb, "The lab meets on Mondays.")
    nb.reject(first.memory_id)
    again = add(nb, "the lab meets on mondays!")
    assert (again.action, again.match_type, again.matcher) == ("suppressed", "exact", "exact")
    assert always.calls == []


def test_no_matcher_means_exact_repeats_only(open_with) -> None:
    nb = open_with(matcher=None)
    nb.reject(add(nb, "Note: the batch size is 32").memory_id)
    assert add(nb, "The batch size is 32.").queued


def test_the_model_judge_runs_through_the_offline_stand_in(open_with) -> None:
    nb = open_with(matcher="model")
    nb.reject(add(nb, "The batch size is 32.").memory_id)
    outcome = add(nb, "Note: the batch size is 32")
    assert outcome.action == "suppressed" and outcome.matcher == "model:npc_nb/offline"
    assert add(nb, "The batch size is 64.").queued


def test_a_matcher_named_by_module_and_attribute_is_loaded(
    open_with, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_judges.py").write_text(
        "def everything_same(candidate, neighbours):\n    return ['same'] * len(neighbours)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    nb = open_with(matcher="my_judges:everything_same")
    nb.approve(add(nb, "The field team uses tablets.").memory_id)
    outcome = add(nb, "Tablets are what the field team uses.")
    assert (outcome.action, outcome.matcher) == ("reinforced", "my_judges:everything_same")


def test_a_matcher_setting_naming_nothing_is_refused_at_open(project_dir: Path) -> None:
    with pytest.raises(npc_nb.ConfigError, match="nowhere_module"):
        npc_nb.open(project_dir, matcher="nowhere_module:judge")
    with pytest.raises(npc_nb.InvalidValueError, match="Unknown matcher"):
        npc_nb.open(project_dir, matcher="clever")


def test_the_matcher_runs_outside_any_store_transaction(open_with) -> None:
    """A model judge must never hold the store's lock: the matcher can itself use the
    store (a read-only query needs the lease free), which it could not inside a write."""
    holder: list[npc_nb.Project] = []

    def reading_matcher(candidate: str, neighbours: list[str]) -> list:
        holder[0].sql("SELECT count(*) FROM memories")
        return ["same"] * len(neighbours)

    nb = open_with(matcher=reading_matcher)
    holder.append(nb)
    nb.reject(add(nb, "The field team uses tablets.").memory_id)
    assert add(nb, "The field team uses tablets for the survey.").action == "suppressed"


@pytest.mark.parametrize("verdict", ["different", "same"])
def test_what_changes_while_the_matcher_judges_is_checked_again_before_writing(
    open_with, verdict: str
) -> None:
    """The write skips re-reading what nothing can have changed; here something did:
    while the matcher judges, the same text is queued (another thread, in effect) and
    the judged memory is decided. The candidate is then one card, not two, and a
    decision made meanwhile is never overwritten by a stale verdict."""
    holder: list[npc_nb.Project] = []
    text = "The field team logs nests on tablets."

    def busy_matcher(candidate: str, neighbours: list[str]) -> list:
        if candidate == text and not holder[1:]:
            holder.append(holder[0])  # once
            holder[0].reject(first)  # the judged memory is decided meanwhile
            holder[0].configure(matcher=None)
            holder[0].add_candidate(text, category="fact", npc="analyst")  # queued meanwhile
        return [verdict] * len(neighbours)

    nb = open_with(matcher=busy_matcher)
    holder.append(nb)
    first = add(nb, "The field team logs nests on paper.").memory_id
    outcome = add(nb, text)
    queued = nb.sql("SELECT count(*) AS n FROM memories WHERE final_text = ?", [text])["n"][0]
    assert queued == 1  # the copy queued meanwhile is the one card
    assert outcome.action in ("merged", "suppressed") and outcome.action != "queued"
    assert nb.memories().set_index("id").loc[first, "status"] == "human-rejected"


def test_neighbours_written_by_another_kernel_are_seen(open_with, isolated_home: Path) -> None:
    nb = open_with(matcher=always("same"), idle_release=0)
    add(nb, "Something to load the index with.")
    code = f"""
        import npc_nb
        other = npc_nb.open({str(nb.root)!r})
        made = other.add_candidate("The field team uses tablets.", category="fact", npc="analyst")
        other.reject(made.memory_id)
        print(made.memory_id)
    """
    env = {**os.environ, "NPC_NB_HOME": str(isolated_home), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    other_id = done.stdout.strip()
    outcome = add(nb, "Survey data is collected on tablets by the field team.")
    assert (outcome.action, outcome.memory_id) == ("suppressed", other_id)


def test_new_cards_are_neighbours_at_once_and_other_kernels_cards_are_never_missed(
    open_with, isolated_home: Path
) -> None:
    """Cards this kernel queues join its neighbour index without a look at the store,
    yet a card another kernel queued while this one judged (the file released) is
    found by the next candidate."""
    judged: list[list[str]] = []
    during_judging: list[Callable[[], object]] = []

    def different(candidate: str, neighbours: list[str]) -> list:
        judged.append(sorted(neighbours))
        while during_judging:
            during_judging.pop()()
        return ["different"] * len(neighbours)

    nb = open_with(matcher=different, idle_release=60)  # held between the adds below
    add(nb, "The field team uses tablets.")
    add(nb, "The field team charges the tablets nightly.")
    add(nb, "The field team carries spare tablets.")
    assert judged[-1] == sorted(
        ["The field team uses tablets.", "The field team charges the tablets nightly."]
    )

    def another_kernel_adds_a_card() -> None:
        nb.close()  # the other kernel gets the file
        code = f"""
            import npc_nb
            other = npc_nb.open({str(nb.root)!r}, matcher=None)
            other.add_candidate("The field team labels every tablet.", category="fact",
                                npc="analyst")
        """
        env = {**os.environ, "NPC_NB_HOME": str(isolated_home), "PYTHONPATH": str(REPO)}
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], env=env, timeout=120, check=True
        )

    during_judging.append(another_kernel_adds_a_card)
    add(nb, "The field team backs up the tablets.")  # queued after the other kernel's card
    add(nb, "The field team cleans the tablets.")
    assert judged[-1] == sorted(
        [
            "The field team uses tablets.",
            "The field team charges the tablets nightly.",
            "The field team carries spare tablets.",
            "The field team labels every tablet.",
            "The field team backs up the tablets.",
        ]
    )


def test_repeats_per_candidate_counts_reinforcements(open_with) -> None:
    nb = open_with()
    nb.approve(add(nb, "We use DuckDB for the store.").memory_id)
    add(nb, "We use DuckDB for the store, as discussed.")
    frame = nb.metrics.repeats_per_candidate()
    assert frame["reinforced"].tolist() == [1] and frame["approved"].tolist() == [1]
    assert frame["reinforced_per_candidate"].tolist() == [1.0]


def test_content_terms_are_the_same_when_threads_stem_at_once() -> None:
    # The extraction worker stems candidates while the kernel stems queries: a stemmer
    # shared between them would mix up their words.
    from concurrent.futures import ThreadPoolExecutor

    import snowballstemmer

    from npc_nb._foundations.terms import stem

    roots = ("nation", "relat", "operat", "condition", "generous", "hopeful", "formal")
    suffixes = ("ational", "alization", "fulness", "iveness", "ousness", "ically", "ements")
    batches = [
        [f"{root}{thread}x{n}{suffix}" for n in range(300) for root in roots[:3]]
        for thread, suffix in enumerate(suffixes)
    ]
    reference = snowballstemmer.stemmer("english")
    expected = [[reference.stemWord(word) for word in batch] for batch in batches]
    with ThreadPoolExecutor(len(batches)) as pool:
        assert list(pool.map(stem, batches)) == expected
