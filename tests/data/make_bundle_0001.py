"""Write tests/data/bundle-0001.zip: a small bundle written at schema step 0001, which
every later npc_nb must still import (``tests/test_bundle_steps.py``).

Not run by the tests. It was run once by the npc_nb of commit ``c3ff801`` (the last
whose ladder ended at ``0001``), from the root of a checkout of that commit, as
``python <this file> OUT.zip``; run by a later npc_nb it would write a bundle of a
later step instead, which defeats its purpose.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.getcwd())  # the checkout whose npc_nb writes the bundle


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["NPC_NB_HOME"] = str(Path(folder) / "home")
        os.environ["NPC_NB_REVIEWER"] = "tester"
        os.chdir(folder)
        import npc_nb

        project = Path(folder) / "fixture"
        project.mkdir()
        (project / "pyproject.toml").write_text("[project]\nname = 'fixture'\n")
        nb = npc_nb.open(project)

        def propose(text: str, category: str = "fact") -> str:
            return nb.add_candidate(text, category=category, npc="analyst").memory_id

        approved = propose("The lab stores ringing data in DuckDB", "decision")
        edited = propose("The field season starts in April")
        rejected = propose("The user wants weekly email summaries")
        propose("Interviews are transcribed by Omar")
        nb.approve(approved, by="ada")
        nb.edit(edited, "The field season starts on 1 April", by="ada")
        nb.reject(rejected, by="grace", reason="not a fact")
        nb.export_bundle(out)
        nb.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
