"""The neighbour index: loaded in bulk from the store or grown one memory at a time, it
finds the same neighbours, with terms keyed alike in the store's SQL and in Python, on
DuckDB and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npc_nb
from npc_nb._foundations.terms import content_terms, split_terms
from npc_nb.memory.lookup import neighbours
from npc_nb.memory.lookup.neighbours import NeighbourIndex
from npc_nb.store.memories import memory_rows
from npc_nb.store.memories.predicates import visible_to

_WORDS = ["tablet", "survey", "Zürich", "nest", "ringing", "naïve", "DuckDB", "東京", "Lab7"]
_NPCS = ["analyst", "critic"]


def _propose(nb: npc_nb.Project, words: list[str], npc: str, scope: str) -> None:
    nb.add_candidate(" ".join(["The team keeps", *words]), category="fact", npc=npc, scope=scope)


@settings(max_examples=25)
@given(
    texts=st.lists(
        st.text(st.characters(categories=("L", "N", "Zs", "Pd")), min_size=3, max_size=40),
        min_size=1,
        max_size=5,
    )
)
def test_the_store_keys_terms_as_python_does(nb: npc_nb.Project, texts: list[str]) -> None:
    """A load reads term keys the store computed; a lookup keys its terms in Python:
    the two must agree for any text, or neighbours would silently go missing."""
    for text in texts:
        nb.add_candidate(f"The user said {text}", category="fact", npc="analyst")
    store = nb._memory.stores.project
    batch = memory_rows.index_batch(store, 0)
    assert batch is not None
    stored = nb.sql("SELECT id, match_text FROM memories")
    terms_of = dict(zip(stored["id"], stored["match_text"], strict=True))
    for position, memory_id in enumerate(batch.ids):
        loaded = set(batch.term_keys[batch.term_positions == position].tolist())
        assert loaded == set(memory_rows.term_keys(split_terms(terms_of[memory_id])).tolist())


def test_a_load_keeps_each_memorys_own_visibility(nb: npc_nb.Project) -> None:
    """A load codes visibility per distinct (scope, npc, team, experiment arm), NULLs
    included: every memory must come back with its own, or a lookup would show another
    persona's (or an experiment arm's)."""
    audiences = [
        ("npc", "analyst", None),
        ("npc", "critic", None),
        ("team", None, "lab"),
        ("team", "analyst", "field"),
        ("project", None, None),
        ("global", "critic", None),
    ]
    for n in range(18):
        scope, npc, team = audiences[(5 * n) % len(audiences)]
        nb.add_candidate(f"The team keeps Lab{n}", category="fact", npc=npc, team=team, scope=scope)
    batch = memory_rows.index_batch(nb._memory.stores.project, 0)
    assert batch is not None
    frame = nb.sql("SELECT id, scope, npc, team, experiment_arm FROM memories")
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    stored = {
        row["id"]: (row["scope"], row["npc"], row["team"], row["experiment_arm"]) for row in rows
    }
    loaded = {
        memory_id: batch.visibilities[code]
        for memory_id, code in zip(batch.ids, batch.visibility.tolist(), strict=True)
    }
    assert loaded == stored
    assert len(batch.visibilities) == len(set(stored.values()))


_STEPS = st.lists(
    st.tuples(
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
        st.sampled_from(_NPCS),
        st.sampled_from(["npc", "project", "global"]),
    ),
    min_size=1,
    max_size=14,
)


def _same_lookups(project: npc_nb.Project, grown: NeighbourIndex) -> None:
    store = grown.store
    for npc in _NPCS:
        for words in (["tablet"], ["nest", "survey"], ["Zürich", "東京", "Lab7"], _WORDS):
            terms = content_terms(" ".join(words))
            loaded = NeighbourIndex(store).nearest(terms, npc, None, 5)  # loads it all at once
            assert grown.nearest(terms, npc, None, 5) == loaded
            rows = project.sql("SELECT id, scope, npc, team FROM memories").to_dict("records")
            visible = {row["id"] for row in rows if visible_to(row, npc, None)}
            assert set(loaded) <= visible


@settings(max_examples=15)
@given(steps=_STEPS)
def test_an_index_grown_one_memory_at_a_time_finds_what_a_fresh_load_finds(
    nb: npc_nb.Project, steps: list[tuple], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(neighbours, "_FOLD_AT", 6)  # fold into the buckets every few
    grown = nb._memory.index_for(nb._memory.stores.project)
    for words, npc, scope in steps:
        _propose(nb, words, npc, scope)
        grown.nearest(frozenset(), npc, None, 1)  # seen up to here: the next joins directly
    _same_lookups(nb, grown)


@pytest.mark.postgres
def test_a_shared_store_loads_the_same_index(project_dir: Path, postgres_url: str) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, matcher=None)
    try:
        grown = nb._memory.index_for(nb._memory.stores.project)
        for step in range(12):
            words = [_WORDS[step % len(_WORDS)], _WORDS[(3 * step + 1) % len(_WORDS)]]
            _propose(nb, words, _NPCS[step % 2], ["npc", "project", "global"][step % 3])
            grown.nearest(frozenset(), "analyst", None, 1)
        _same_lookups(nb, grown)
    finally:
        nb.close()


def test_a_lookup_ranks_the_closest_memory_first(nb: npc_nb.Project) -> None:
    for text in (
        "The field team charges the tablets nightly.",
        "The survey of nests runs in May.",
        "Ringing data goes to DuckDB.",
    ):
        nb.add_candidate(text, category="fact", npc="analyst")
    store = nb._memory.stores.project
    found = NeighbourIndex(store).nearest(content_terms("tablets charge"), "analyst", None, 3)
    texts = nb.sql("SELECT id, final_text FROM memories").set_index("id")["final_text"]
    assert [texts[i] for i in found] == ["The field team charges the tablets nightly."]


def test_a_personas_own_neighbours_are_found_however_many_of_anothers_rank_above(
    nb: npc_nb.Project,
) -> None:
    """The nearest memories are the best among those the persona may see: a hundred
    closer memories of another persona must not crowd its own out of the answer."""
    for n in range(100):
        nb.add_candidate(
            f"The field team charges the tablets nightly in hut {n}.",
            category="fact",
            npc="critic",
        )
    own = nb.add_candidate("The tablets live in the van.", category="fact", npc="analyst")
    store = nb._memory.stores.project
    terms = content_terms("The field team charges the tablets nightly.")
    assert NeighbourIndex(store).nearest(terms, "analyst", None, 3) == [own.memory_id]
    assert len(NeighbourIndex(store).nearest(terms, "critic", None, 3)) == 3


def test_term_keys_are_the_same_from_the_cache_and_after_it_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terms = ["duckdb", "zenodo", "ringing", "vienna", "graz", "märz", "数据"]
    fresh = memory_rows._computed_keys(terms).tolist()
    assert memory_rows.term_keys(terms).tolist() == fresh
    assert memory_rows.term_keys(terms[::-1]).tolist() == fresh[::-1]  # from the cache
    monkeypatch.setattr(memory_rows, "_KNOWN_KEYS_MAX", 3)
    monkeypatch.setattr(memory_rows, "_known_keys", {})
    for start in range(len(terms)):  # the cache fills up and starts again, never wrong
        part = terms[start:] + terms[:start]
        assert memory_rows.term_keys(part).tolist() == fresh[start:] + fresh[:start]


def test_a_load_that_fails_is_tried_again(
    nb: npc_nb.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load that raised (a store read failed) leaves the index unloaded, so the next
    lookup loads it, instead of finding nothing from then on."""
    nb.add_candidate("The team keeps the ringing data in DuckDB", category="fact", npc="analyst")
    index = NeighbourIndex(nb._memory.stores.project)
    real = memory_rows.index_batch

    def failing(store: object, after_seq: int) -> None:
        raise OSError("the disk went away for a moment")

    monkeypatch.setattr(memory_rows, "index_batch", failing)
    with pytest.raises(OSError):
        index.nearest(content_terms("ringing data"), "analyst", None, 5)
    assert not index.loaded
    monkeypatch.setattr(memory_rows, "index_batch", real)
    assert len(index.nearest(content_terms("ringing data"), "analyst", None, 5)) == 1
    assert index.loaded


def test_an_answer_is_remembered_only_until_the_index_changes(nb: npc_nb.Project) -> None:
    """A lookup asked again is answered from memory, but never once a memory joined:
    inserted by this process, or found on the next look after the file was reopened."""
    nb.configure(matcher=None)
    first = nb.add_candidate("Ringing data goes to DuckDB", category="fact", npc="analyst")
    index = nb._memory.index_for(nb._memory.stores.project)
    terms = content_terms("ringing data in DuckDB")
    assert index.nearest(terms, "analyst", None, 5) == [first.memory_id]
    assert index.nearest(terms, "analyst", None, 5) == [first.memory_id]  # remembered
    second = nb.add_candidate("The ringing data goes to DuckDB nightly", category="fact",
                              npc="analyst")  # fmt: skip
    assert set(index.nearest(terms, "analyst", None, 5)) == {first.memory_id, second.memory_id}
    nb.sql(  # written as another process would, then the file reopened
        "INSERT INTO memories SELECT * REPLACE ('m-copy' AS id, "
        "nextval('memory_insert_seq') AS insert_seq) FROM memories WHERE id = ?",
        [first.memory_id],
        allow_write=True,
    )
    nb._memory.stores.release()
    assert "m-copy" in index.nearest(terms, "analyst", None, 5)


def test_a_loaded_index_takes_this_processs_new_memory_without_reading_the_store(
    nb: npc_nb.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What queueing a candidate costs: the memory joins a loaded index as it commits,
    with no read of the store for it; an index not loaded yet is left to its first look."""
    nb.configure(matcher=None)
    index = nb._memory.index_for(nb._memory.stores.project)
    nb.add_candidate("Ringing data goes to DuckDB", category="fact", npc="analyst")
    assert not index.loaded  # nothing looked yet: the insert left the index alone
    terms = content_terms("ringing data in DuckDB")
    index.nearest(terms, "analyst", None, 5)  # loads it
    reads: list[int] = []
    real_batch = memory_rows.index_batch
    monkeypatch.setattr(
        memory_rows,
        "index_batch",
        lambda store, after: reads.append(after) or real_batch(store, after),
    )
    second = nb.add_candidate(
        "The ringing data goes to DuckDB nightly", category="fact", npc="analyst"
    )
    assert second.memory_id in index.nearest(terms, "analyst", None, 5)
    assert reads == []  # found without reading the store again


@settings(max_examples=200)
@given(
    data=st.data(),
    total=st.integers(1, 60),
    terms=st.integers(1, 6),
    wanted=st.integers(1, 12),
    sparse=st.sampled_from([1, 8, 1_000]),
)
def test_the_ranking_shortcut_picks_what_summing_every_memory_picks(
    data: st.DataObject, total: int, terms: int, wanted: int, sparse: int
) -> None:
    """``top_positions`` looks only at the best-summed matches when there are many, and
    sorts the matches when there are few (``_SPARSE`` sets where, both are drawn): it
    must rank exactly as summing every memory and sorting all of them would."""
    postings = [
        data.draw(st.lists(st.integers(0, total - 1), unique=True, max_size=total))
        for _ in range(terms)
    ]
    weights = [data.draw(st.sampled_from([0.5, 1.0, 1.5, 2.25])) for _ in range(terms)]
    where = np.array([p for posting in postings for p in posting], dtype=np.int64)
    weight = np.array(
        [w for posting, w in zip(postings, weights, strict=True) for _ in posting],
        dtype=np.float64,
    )
    summed = np.bincount(where, weights=weight, minlength=total)
    hits = np.flatnonzero(np.bincount(where, minlength=total))
    expected = sorted(hits.tolist(), key=lambda p: (-summed[p], p))[:wanted]
    with mock.patch.object(neighbours, "_SPARSE", sparse):
        assert neighbours.top_positions(where, weight, total, wanted, terms) == expected


# -- the dense half: paraphrases that share few words (issue 34) -------------------------


class _Recorder:
    """A matcher that says "different" and remembers the neighbours it was shown."""

    def __init__(self) -> None:
        self.shown: list[list[str]] = []

    def __call__(self, candidate: str, texts: list[str]) -> list[str]:
        self.shown.append(list(texts))
        return ["different"] * len(texts)


_TARGET = "Caroline adopted a rescue dog."
_PARAPHRASE = "She took in an abandoned puppy from a shelter."  # not one word in common
#: More memories than a lookup shows, none of them about dogs.
_CROWD = [
    *(f"The lab buys new {thing} for the office." for thing in (
        "chairs", "desks", "monitors", "cables", "printers", "lamps", "plants", "mugs",
        "shelves", "whiteboards", "keyboards", "headphones")),
    *(f"The team meets the {who} on Fridays." for who in (
        "auditors", "funders", "partners", "students", "reviewers", "editors", "lawyers",
        "donors")),
]  # fmt: skip


def test_a_paraphrase_sharing_no_words_is_shown_to_the_matcher(project_dir: Path) -> None:
    recorder = _Recorder()
    nb = npc_nb.open(project_dir, matcher=recorder)
    assert content_terms(_TARGET).isdisjoint(content_terms(_PARAPHRASE))  # BM25 cannot
    nb.add_candidate(_TARGET, category="fact", npc="caroline")
    for text in _CROWD:
        nb.add_candidate(text, category="fact", npc="caroline")
    recorder.shown.clear()
    nb.add_candidate(_PARAPHRASE, category="fact", npc="caroline")
    assert len(recorder.shown[-1]) < len(_CROWD) and _TARGET in recorder.shown[-1]
    nb.close()


def test_the_dense_path_never_shows_another_personas_memory(project_dir: Path) -> None:
    recorder = _Recorder()
    nb = npc_nb.open(project_dir, matcher=recorder)
    nb.add_candidate(_TARGET, category="fact", npc="caroline")  # hers alone
    nb.add_candidate("The lab shares one calendar.", category="fact", npc=None, scope="project")
    recorder.shown.clear()
    nb.add_candidate(_PARAPHRASE, category="fact", npc="melanie")
    assert recorder.shown == [["The lab shares one calendar."]]
    nb.close()


def test_a_memorys_vector_is_stored_with_it_and_never_computed_again(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npc_nb.memory.lookup import embedding

    nb = npc_nb.open(project_dir, matcher=_Recorder())
    first = nb.add_candidate(_TARGET, category="fact", npc="caroline").memory_id
    stored = nb.sql("SELECT octet_length(match_vector) AS size FROM memories")["size"].tolist()
    assert stored == [2 * embedding.DIMENSIONS]
    nb.close()
    embedded: list[list[str]] = []
    real = embedding.embed

    def counted(texts: list[str]) -> object:
        embedded.append(list(texts))
        return real(texts)

    monkeypatch.setattr(neighbours, "embed", counted)
    reopened = npc_nb.open(project_dir, matcher=_Recorder())
    reopened.add_candidate(_PARAPHRASE, category="fact", npc="caroline")
    assert embedded == []  # the stored vector was loaded, not the text embedded again
    assert first in reopened.memories()["id"].tolist()
    reopened.close()


def test_memories_stored_without_a_vector_get_one_once(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, matcher=None)  # exact repeats only: no vector needed
    nb.add_candidate(_TARGET, category="fact", npc="caroline")
    assert nb.sql("SELECT count(match_vector) AS n FROM memories")["n"].item() == 0
    recorder = _Recorder()
    nb.configure(matcher=recorder)
    nb.add_candidate(_PARAPHRASE, category="fact", npc="caroline")
    assert _TARGET in recorder.shown[-1]  # embedded on the lookup that needed it ...
    assert nb.sql("SELECT count(match_vector) AS n FROM memories")["n"].item() == 2  # ... and kept
    nb.close()


def test_a_shared_store_stores_vectors_and_embeds_old_rows_once(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, matcher=None)
    try:
        nb.add_candidate(_TARGET, category="fact", npc="caroline")  # no vector: exact only
        recorder = _Recorder()
        nb.configure(matcher=recorder)
        nb.add_candidate(_PARAPHRASE, category="fact", npc="caroline")
        assert recorder.shown == [[_TARGET]]  # found by meaning, on PostgreSQL too
        sizes = nb.sql("SELECT octet_length(match_vector) AS size FROM memories")["size"]
        assert sizes.tolist() == [128, 128]  # the old row's vector was written back
    finally:
        nb.close()
