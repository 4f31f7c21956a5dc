"""Write tests/data/bundle-v1.zip: a bundle of the first format version, which every
later npc_nb must still load (``tests/test_bundle.py``).

Not run by the tests. It was run by the npc_nb that introduced bundles (that bundle is
kept as ``bundle-m017.zip``) and again by the last npc_nb of the old ladder (commit
``bdbfb31``, its schema the baseline ``0001``), from the repository's root
(``python tests/data/make_bundle_v1.py``); running it again with a later npc_nb would
write a bundle of that version instead, which defeats its purpose.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["NPC_NB_HOME"] = str(Path(folder) / "home")
        os.environ["NPC_NB_REVIEWER"] = "tester"
        os.chdir(folder)
        import shutil

        import npc_nb
        from tests import interop_projects

        # the imported records name their file: a copy here, no path of this machine
        interop_projects.DATA = Path(folder) / "data"
        shutil.copytree(ROOT / "tests" / "data" / "mem0", interop_projects.DATA / "mem0")

        project = Path(folder) / "fixture"
        project.mkdir()
        (project / "pyproject.toml").write_text("[project]\nname = 'fixture'\n")
        nb = npc_nb.open(project)
        interop_projects.fill_every_kind(nb)
        nb.export_bundle(ROOT / "tests" / "data" / "bundle-v1.zip")
        nb.close()


if __name__ == "__main__":
    main()
