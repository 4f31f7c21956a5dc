// Builds the prebuilt JupyterLab extension into labextension/ and records the digest of
// the sources it was built from (labextension/source.sha256), so a test can tell when the
// committed build no longer matches its sources.
//
// The build runs against JupyterLab's core package metadata pinned in package-lock.json
// (@jupyterlab/core-meta), so it needs no Python environment and resolves the same shared
// packages on every machine.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";

const OUTPUT = "labextension";
const NOT_SOURCES = new Set([OUTPUT, "node_modules"]);

/* Every file of this folder but the build output and the dependencies, sorted by
 * path: sha256 over "path NUL content NUL" of each (tests/test_graph_renderer.py agrees). */
function sourceDigest(root) {
  const files = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (NOT_SOURCES.has(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(root, path).split(sep).join("/"));
    }
  };
  walk(root);
  const hash = createHash("sha256");
  for (const file of files.sort()) {
    hash.update(file + "\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

const core = join(tmpdir(), `npc-nb-graph-core-${process.pid}`);
mkdirSync(core, { recursive: true });
copyFileSync("node_modules/@jupyterlab/core-meta/core.package.json", join(core, "package.json"));
rmSync(OUTPUT, { recursive: true, force: true });
try {
  execFileSync(
    process.execPath,
    ["node_modules/@jupyterlab/builder/lib/build-labextension.js", "--core-path", core, "."],
    { stdio: "inherit" },
  );
} finally {
  rmSync(core, { recursive: true, force: true });
}
writeFileSync(join(OUTPUT, "source.sha256"), sourceDigest(".") + "\n");
