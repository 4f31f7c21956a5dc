"""Moving a project in one file: the time to export a bundle of a generated store and
to import it into an empty project (and to merge it again, every row a duplicate).

    .venv/bin/python bench/bench_bundle.py [--memories 100000] [--repeat 1] [--json PATH]

The store comes from ``generate.py`` (memories of every status, about three audit
events each, conversations, re-proposals, injections and concepts). Each repetition
exports the project, imports the bundle into a new folder, exports that again and
checks the checksums are equal (the identity the bundle promises), then merges the
bundle into the imported project once more (every row already there). Prints the
bundle's size and the rows per second of the import.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402
from table import Row, print_table, size_label, write_rows  # noqa: E402

import npc_nb  # noqa: E402


def checksums(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        tables = json.loads(archive.read("manifest.json"))["tables"]
    return {name: table["sha256"] for name, table in tables.items()}


def rows_in(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        tables = json.loads(archive.read("manifest.json"))["tables"]
    return sum(table["rows"] for table in tables.values())


def once(source: Path, work: Path, number: int) -> dict[str, float]:
    """One export, import, export again and merge; seconds of each."""
    took: dict[str, float] = {}
    nb = npc_nb.open(source)
    started = time.perf_counter()
    bundle = nb.export_bundle(work / f"bundle-{number}.zip")
    took["export"] = time.perf_counter() - started
    nb.close()
    target = work / f"imported-{number}"
    started = time.perf_counter()
    npc_nb.import_bundle(bundle, target, create=True)
    took["import"] = time.perf_counter() - started
    copy = npc_nb.open(target)
    again = copy.export_bundle(work / f"again-{number}.zip")
    copy.close()
    if checksums(again) != checksums(bundle):
        raise SystemExit("export -> import -> export changed a table's checksum")
    started = time.perf_counter()
    npc_nb.import_bundle(bundle, target, into_nonempty=True)
    took["merge"] = time.perf_counter() - started
    took["megabytes"] = bundle.stat().st_size / 1e6
    took["rows"] = rows_in(bundle)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="npc-bench-bundle-"))
    os.environ.setdefault("NPC_NB_HOME", str(work / "home"))
    source = work / "source"
    generate(source, args.memories)
    runs = [once(source, work, number) for number in range(args.repeat)]
    label = size_label(args.memories)
    rows = []
    for step in ("export", "import", "merge"):
        samples = sorted(run[step] * 1000 for run in runs)
        rows.append(Row(f"bundle {step} (whole project)", label, samples[len(samples) // 2],
                        samples[-1]))  # fmt: skip
    first = runs[0]
    print(
        f"npc_nb {npc_nb.__version__}, {label} memories: {first['rows']:,.0f} rows in all, "
        f"bundle {first['megabytes']:.1f} MB; "
        f"import {first['rows'] / first['import']:,.0f} rows/s; checksums equal after the "
        "round trip."
    )
    print_table(rows)
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
