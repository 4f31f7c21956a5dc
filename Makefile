# The two commands of the README (lab, test), and check, the fast loop while editing.
# Each installs into .venv when needed.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
#: The shipped notebooks, by name: notebooks of your own in notebooks/ are never run.
NOTEBOOKS := notebooks/quickstart.ipynb notebooks/review.ipynb notebooks/analysis.ipynb notebooks/graph.ipynb notebooks/reproducible.ipynb notebooks/two-reviewers.ipynb notebooks/experiment.ipynb notebooks/audit.ipynb
RENDERER := widgets/graph_renderer
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install check test lint lab bench docs clean labextension

# Reinstalled when the committed graph renderer changes: pip copies it into the venv.
$(STAMP): pyproject.toml $(RENDERER)/labextension/package.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,lab]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check npc_nb tests bench docs/generate.py
	$(BIN)/ruff format --check npc_nb tests bench docs/generate.py
	$(BIN)/mypy

# Under a minute on two cores: ruff and the unit tier (tests/unit, pure logic). No mypy.
check: install
	$(BIN)/ruff check npc_nb tests bench docs/generate.py
	$(BIN)/ruff format --check npc_nb tests bench docs/generate.py
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/unit

test: lint
	$(BIN)/python -m pytest tests
	$(BIN)/python -m pytest --nbval-lax -p no:cacheprovider -p no:randomly $(NOTEBOOKS)  # cells in order

# Rewrites the generated pages (docs/reference.md, cli.md, magics.md, settings.md and
# schema.md) from the code; review the diff and commit it.
docs: install
	$(BIN)/python docs/generate.py
	$(BIN)/python -m npc_nb.store.schema.doc > docs/schema.md

lab: install
	$(BIN)/jupyter lab $(ROOT_FLAG) notebooks/quickstart.ipynb

# Rebuilds the graph renderer after an edit under widgets/graph_renderer (needs node 20+
# and npm); commit the result. Every other target uses the committed build, without npm.
labextension:
	cd $(RENDERER) && npm ci && npm run build
	$(MAKE) install

# One table of every figure next to its baseline (bench/run_all.py); the other scripts
# in bench/ run by hand.
bench: install
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
