# Two entry points for a fresh machine with python3 and make: `make demo`, `make test`.
# Each bootstraps .venv by itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

# scalebridge with every SDK the tests use, then the example third-party plugin (examples/plugin),
# installed as its users install it: its entry points register for real and `make test` runs its tests
$(STAMP): pyproject.toml examples/plugin/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e ./examples/plugin
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/scalebridge demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/decide.py

clean:
	rm -rf $(VENV) build *.egg-info core/*.egg-info examples/plugin/*.egg-info
