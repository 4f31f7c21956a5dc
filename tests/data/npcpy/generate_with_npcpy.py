"""Write the npcpy fixtures of tests/data/npcpy/ with npcpy's own KnowledgeStore.

Not run by the tests (npcpy is never a dependency of npc_nb). Run it in a separate
environment, then commit what it writes:

    python3 -m venv /tmp/npcpy-venv
    /tmp/npcpy-venv/bin/pip install npcpy==2.1.25
    /tmp/npcpy-venv/bin/python tests/data/npcpy/generate_with_npcpy.py tests/data/npcpy

It writes ``lab/.knowledge.yaml`` (one memory of each status npcpy 2.1.25 has, and
repeats the matcher must merge or suppress) and ``hostile/.knowledge.yaml`` (a memory
holding a control character, which npcpy writes escaped, beside a good one).
"""

from __future__ import annotations

import sys
from pathlib import Path

from npcpy.memory.knowledge_store import KnowledgeStore


def lab(folder: Path) -> None:
    store = KnowledgeStore.init_directory(str(folder))
    common = {"conversation_id": "conv-1", "directory_path": str(folder), "model": "llama3.2",
              "provider": "ollama"}  # fmt: skip
    approved = store.append_memory(message_id="msg-1", npc="analyst", team="methods",
                                   initial_memory="The lab uses DuckDB for the analysis store",
                                   **common)  # fmt: skip
    store.update_memory(approved, "human-approved")
    edited = store.append_memory(message_id="msg-2", npc="analyst", team="methods",
                                 initial_memory="The deadline is in May", **common)  # fmt: skip
    store.update_memory(edited, "human-edited", final_memory="The deadline is on 3 May 2026")
    rejected = store.append_memory(message_id="msg-3", npc="analyst", team="methods",
                                   initial_memory="The user wants weekly email summaries",
                                   **common)  # fmt: skip
    store.update_memory(rejected, "human-rejected")
    store.append_memory(message_id="msg-4", npc="analyst", team="methods",
                        initial_memory="Interviews are transcribed by Omar", **common)  # fmt: skip
    store.append_memory(message_id="msg-5", npc="", team="methods",
                        initial_memory="Every figure uses the lab's colour palette",
                        **common)  # fmt: skip
    store.append_memory(directory_path=str(folder), status="auto-extracted",
                        initial_memory="The pilot study has 120 participants",
                        final_memory="The pilot study has 120 participants",
                        source_type="file", source_id="notes/plan.md")  # fmt: skip
    # Repeats: the rejected text again (the tombstone must hold), the pending one again
    # (merged into its card).
    store.append_memory(message_id="msg-6", npc="analyst", team="methods",
                        initial_memory="The user wants weekly email summaries",
                        **common)  # fmt: skip
    store.append_memory(message_id="msg-7", npc="analyst", team="methods",
                        initial_memory="Interviews are transcribed by Omar", **common)  # fmt: skip


def hostile(folder: Path) -> None:
    store = KnowledgeStore.init_directory(str(folder))
    store.append_memory(npc="analyst", initial_memory="Ring the \x07 bell when done")
    store.append_memory(npc="analyst", initial_memory="Backups run every night at two")


if __name__ == "__main__":
    root = Path(sys.argv[1])
    for name, write in (("lab", lab), ("hostile", hostile)):
        (root / name).mkdir(parents=True, exist_ok=True)
        write(root / name)
