# The two commands of the README. Both install into .venv when needed.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
#: The shipped notebooks, by name: notebooks of your own in notebooks/ are never run.
NOTEBOOKS := notebooks/quickstart.ipynb notebooks/review.ipynb notebooks/analysis.ipynb notebooks/graph.ipynb
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install test lint lab bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,lab]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check npc_nb tests bench
	$(BIN)/ruff format --check npc_nb tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest tests
	$(BIN)/python -m pytest --nbval-lax -p no:cacheprovider -p no:randomly $(NOTEBOOKS)  # cells in order

lab: install
	$(BIN)/jupyter lab $(ROOT_FLAG) notebooks/quickstart.ipynb

bench: install
	$(BIN)/python bench/bench_store.py
	$(BIN)/python bench/bench_chat.py
	$(BIN)/python bench/bench_metrics.py
	$(BIN)/python bench/bench_graph.py
	$(BIN)/python bench/bench_review.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
