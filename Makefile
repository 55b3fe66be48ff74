# tempora's build, test and check entry points. Only Go (and make) is needed:
# staticcheck is fetched through the module proxy at a pinned version.

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN         := bin/tempora
OUT         := out

.PHONY: build test test-python test-wheel wheel pydoc test-notebook test-slurm check fuzz bench bench-micro bench-suite demo paper paper-quick paper-sequential reference clean

# build compiles the command line into bin/tempora.
build:
	$(GO) build -o $(BIN) ./cmd/tempora

# test runs every package's tests (the full default run; the timeout leaves
# room for a loaded machine, where package experiments alone took 10
# minutes), then the tests of the example module examples/newmethod (a
# module of its own, which go test ./... at the root does not enter).
test:
	$(GO) test -timeout 30m ./...
	cd examples/newmethod && $(GO) test ./... && $(GO) vet ./...

# test-slurm runs a sharded table1 suite through a real Slurm: it starts a
# throwaway single-node cluster on localhost (scripts/slurm-cluster.sh;
# needs root and Debian's slurm-wlm and munge packages), submits the job
# array written by "tempora export", cancels it once a record exists and
# resubmits it (the shards must stop cleanly on SIGTERM and resume), merges
# the shards and checks that records and report equal an unsharded local run
# apart from runtimes (scripts/test-slurm.sh).
test-slurm: build
	scripts/test-slurm.sh

# test-python tests the Python package (python/): it creates a virtual
# environment under out/ on Debian's python3 with --system-site-packages (for
# python3-numpy, python3-setuptools, python3-wheel and python3-mypy), installs
# the package into it offline (setuptools' build backend, from the system with
# --no-build-isolation: nothing comes from an index), and runs python/tests
# against a freshly built bin/tempora; test_types.py runs mypy in strict mode
# over the package.
PYTHON := /usr/bin/python3
PYVENV := $(OUT)/venv-python

# The package's build hook (python/setup.py) also builds the tempora program
# into the package, reusing the build cache that make build filled.
PYINSTALL = test -x $(PYVENV)/bin/python || $(PYTHON) -m venv --system-site-packages $(PYVENV); \
	$(PYVENV)/bin/pip install --quiet --disable-pip-version-check --no-index --no-build-isolation ./python

test-python: build
	$(PYINSTALL)
	cd python/tests && TEMPORA=$(abspath $(BIN)) $(abspath $(PYVENV))/bin/python -m unittest discover -v

# wheel builds a platform wheel of the Python package into out/wheel (e.g.
# tempora-0.1.0-py3-none-linux_x86_64.whl), offline: pip wheel with
# Debian's setuptools and wheel (--no-build-isolation, --no-index). Its build
# hook (python/setup.py) puts the tempora program into the package, linked
# statically (CGO_ENABLED=0), so the wheel installs and runs on any Linux of
# this architecture without Go: pip install out/wheel/tempora-*.whl. The tag
# is py3-none-<platform>: a platform program, no Python extension. It needs
# go on PATH (the build fails rather than make a wheel without the program).
# python/build is removed first, so that nothing stale is packed. Measured on
# the 2-core machine at loads 14 to 17: 25 to 45 s with Go's build cache
# warm, 4.5 min cold (the static build does not share make build's cache).
WHEELDIR := $(OUT)/wheel

wheel:
	@command -v go >/dev/null || { echo "make wheel: go is not on PATH: the wheel would hold no tempora program" >&2; exit 1; }
	rm -rf python/build $(WHEELDIR)
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --no-index --no-build-isolation -w $(WHEELDIR) ./python
	@ls $(WHEELDIR)/tempora-*-py3-none-*.whl | grep -v -- '-any\.whl$$' || { echo "make wheel: no platform wheel in $(WHEELDIR)" >&2; exit 1; }

# test-wheel builds the wheel and tests it as a user without Go gets it
# (python/tests/test_wheel.py): its name and tag, a static program inside,
# then pip install into a fresh virtual environment (Debian's NumPy through
# --system-site-packages) on a PATH without go or tempora, TEMPORA unset,
# and the README's example explained in one call (['1', '3', '6']).
# Measured on the 2-core machine: 27 to 49 s for the test, 53 s to 1.5 min
# with make wheel (loads 14 to 17).
test-wheel: wheel
	cd python/tests && TEMPORA_WHEEL="$$(ls $(abspath $(WHEELDIR))/tempora-*.whl)" $(PYTHON) -m unittest -v test_wheel

# pydoc builds the Python API reference into out/pydoc/html (index.html)
# from the package's docstrings as they are in python/, with Debian's
# python3-sphinx (autodoc; configuration in docs/api/conf.py). A warning
# fails it: a docstring that does not parse, or a name of tempora.__all__
# without documentation. Public members without a docstring are listed as a
# note. docs/api/test_conf.py, run first, checks these rules on fixture
# packages. Measured at load 17: 25 s for the checks, 25 s for the build.
PYDOC := $(OUT)/pydoc

pydoc:
	@$(PYTHON) -c 'import sphinx' 2>/dev/null || { echo "make pydoc: needs python3-sphinx (apt-get install python3-sphinx)" >&2; exit 1; }
	$(PYTHON) -m unittest discover -s docs/api -p 'test_*.py'
	rm -rf $(PYDOC)
	$(PYTHON) -m sphinx -b html -W --keep-going -E -d $(PYDOC)/doctrees docs/api $(PYDOC)/html
	@echo "pydoc: the API reference is $(PYDOC)/html/index.html"

# test-notebook executes examples/notebooks/explain_pytorch.ipynb,
# irregular_pandas.ipynb and explain_outputs.ipynb headlessly
# (examples/notebooks/run.py: nbclient, in a kernel running the virtual
# environment's Python; benchmark.ipynb runs in test-python) with the package
# installed as test-python installs it and TEMPORA unset, so that it uses the
# program built into the package; a failing cell fails the target
# (irregular_pandas.ipynb and explain_outputs.ipynb end with a cell asserting
# their claims against the truth). It needs Debian's python3-nbclient and
# python3-ipykernel, and the notebooks' python3-pandas, python3-matplotlib,
# python3-torch and python3-sklearn. Measured: about 25 s, 5 to 10 s and 50 s
# on the 2-core machine under load.
test-notebook: build
	$(PYINSTALL)
	env -u TEMPORA $(PYVENV)/bin/python examples/notebooks/run.py examples/notebooks/explain_pytorch.ipynb \
		examples/notebooks/irregular_pandas.ipynb examples/notebooks/explain_outputs.ipynb

# check fails on unformatted files, vet findings, staticcheck findings or a
# broken import rule.
check:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./internal/tools/importcheck

# fuzz runs every fuzz target of the module (each func FuzzX in a _test.go
# file) for FUZZTIME, one after another: go test -fuzz takes one target per
# run. Seeds are each package's testdata/fuzz/FuzzX (also run by make test)
# plus the f.Add calls; new interesting inputs go to Go's cache. A failing
# input is written to testdata/fuzz/FuzzX and stops make; commit it with its
# fix, as a regression test. FUZZ narrows the list and FUZZPARALLEL sets the
# worker processes per target, e.g.
# make fuzz FUZZ=./procmodel:FuzzServe FUZZTIME=10m FUZZPARALLEL=2.
# Minimization is off by default (FUZZMINIMIZETIME=0): Go's minimizer
# sometimes loses its worker ("fuzzing process hung or terminated
# unexpectedly while minimizing: EOF", golang/go#52569) and writes an input
# that passes; crashers are then kept as found.
FUZZTIME         ?= 10s
FUZZPARALLEL     ?= 1
FUZZMINIMIZETIME ?= 0
FUZZ         ?= $(shell grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\(.*\)/[^/]*_test.go:func |\1:|' | sort)

fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz: $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) -parallel $(FUZZPARALLEL) -timeout 0 || exit 1; \
	done

# bench runs the micro-benchmarks and a small fixed suite (table1 at paper
# scale, 3 models), all in the Go benchmark format: out/bench.txt and
# out/bench-table1.txt. Compare two runs or commits with benchstat, e.g.
# benchstat old/bench.txt out/bench.txt; for the suite's file see
# docs/records.md, "Benchmark lines" (it needs -ignore /model). BENCH_PKGS
# and BENCHFLAGS narrow the micro-benchmarks, e.g.
# make bench-micro BENCH_PKGS=./explain/ BENCHFLAGS=-benchtime=1x.
BENCH_PKGS ?= ./...
BENCHFLAGS ?=

bench: bench-micro bench-suite

bench-micro:
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench . -benchmem $(BENCHFLAGS) $(BENCH_PKGS) > $(OUT)/bench.txt.tmp || { cat $(OUT)/bench.txt.tmp; rm -f $(OUT)/bench.txt.tmp; exit 1; }
	@mv $(OUT)/bench.txt.tmp $(OUT)/bench.txt
	@cat $(OUT)/bench.txt

bench-suite: build
	rm -rf $(OUT)/bench-table1
	./$(BIN) run -suite table1 -models 3 -out $(OUT)/bench-table1
	cp $(OUT)/bench-table1/bench.txt $(OUT)/bench-table1.txt

# The paper's suites: those whose declaration says so (experiments.Suite's
# Paper; cli's tests check the list). A rerun of the same target resumes:
# finished records are kept and skipped. paper-quick runs every suite at
# quick scale (fewer models and instances) and reports it into
# out/quick/report. paper runs every suite at paper scale (100 models
# each); run table-s2 on more cores or in shards (tempora export).
# Expected times: tempora run -list (or README.md).
SUITES := table1 table-s2 testsize-regression testsize-classification correlated
comma := ,
empty :=
space := $(empty) $(empty)

paper-quick: build
	for s in $(SUITES); do ./$(BIN) run -suite $$s -quick -out $(OUT)/quick/$$s || exit 1; done
	./$(BIN) report -in $(subst $(space),$(comma),$(addprefix $(OUT)/quick/,$(SUITES))) -out $(OUT)/quick/report

paper: build
	for s in $(SUITES); do ./$(BIN) run -suite $$s -out $(OUT)/paper/$$s || exit 1; done
	./$(BIN) report -in $(subst $(space),$(comma),$(addprefix $(OUT)/paper/,$(SUITES))) -out $(OUT)/paper/report

# Every suite S (tempora run -list names them) has four targets, made by
# the pattern rules below, so that a new suite needs no Makefile text:
#
#   make S-quick            runs S at quick scale into out/S-quick (afresh)
#                           and reports it into out/S-quick/report;
#   make S-reference        refreshes S's committed quick report,
#                           results/reference/S/quick, with its bench.txt;
#   make paper-S            runs S at paper scale (its default models) into
#                           out/paper/S and reports it into
#                           out/paper/S/report; a rerun resumes (paper-table1
#                           is Table 1 / S1 alone);
#   make S-paper-reference  refreshes results/reference/S/paper from paper-S.
#
# For example make windows-quick, make irregular-reference, make
# paper-correlated. Expected times: tempora run -list.
# (.SECONDARY: make would otherwise take S-quick, made on the way to
# S-reference, for an intermediate file and try to delete it.)
.SECONDARY:

%-quick: build
	rm -rf $(OUT)/$*-quick
	./$(BIN) run -suite $* -quick -out $(OUT)/$*-quick
	./$(BIN) report -in $(OUT)/$*-quick -out $(OUT)/$*-quick/report

%-reference: %-quick
	rm -rf results/reference/$*/quick
	mkdir -p results/reference/$*
	cp -r $(OUT)/$*-quick/report results/reference/$*/quick
	cp $(OUT)/$*-quick/bench.txt results/reference/$*/quick/bench.txt

paper-%: build
	./$(BIN) run -suite $* -out $(OUT)/paper/$*
	./$(BIN) report -in $(OUT)/paper/$* -out $(OUT)/paper/$*/report

%-paper-reference: paper-%
	rm -rf results/reference/$*/paper
	mkdir -p results/reference/$*
	cp -r $(OUT)/paper/$*/report results/reference/$*/paper
	cp $(OUT)/paper/$*/bench.txt results/reference/$*/paper/bench.txt

# paper-sequential compares sequential and fixed-P tests at paper scale
# (docs/decisions.md, section TIME, "Cost and fidelity"): 100 Table-1
# problems in both modes, 100 problems with one relevant feature, and
# WIDE_MODELS problems of 1000 × 100 × 20 (about a minute each). About
# 15 minutes on 2 cores with the defaults.
WIDE_MODELS ?= 5
paper-sequential:
	TEMPORA_PAPER_SCALE=1 TEMPORA_WIDE_MODELS=$(WIDE_MODELS) $(GO) test ./experiments -run '^TestTIMESequentialPaperScale$$' -v -timeout 0

# reference refreshes the committed snapshot results/reference/quick from
# out/quick/report (run make paper-quick first).
reference:
	rm -rf results/reference/quick
	mkdir -p results/reference
	cp -r $(OUT)/quick/report results/reference/quick

# demo synthesises a Table-1-style classification problem (1000 instances,
# 10 features, 20 timesteps, half of the features relevant) into out/demo
# and explains it with TIME next to the ground truth.
demo: build
	./$(BIN) synth -out $(OUT)/demo -instances 1000 -features 10 -timesteps 20 -relevant 0.5 -task classification -noise auto -seed 1
	./$(BIN) explain -problem $(OUT)/demo

clean:
	rm -rf bin $(OUT)

# ---- learned models (examples/pytorch) ------------------------------------
# PyTorch networks trained on synthetic problems, explained through the
# Python package, and the TIME paper's retraining check; see
# examples/pytorch/README.md. They need Debian's python3-numpy and
# python3-torch; the Python package is used from python/ in place.
# learned-quick: at most 10 minutes on 2 cores, into out/learned-quick;
# learned: the full scale (hours), into out/learned; a rerun resumes.
# test-learned: the example's unit tests and smoke test (under a minute),
# skipped with a message when PyTorch is missing. LEARNED_FLAGS adds flags,
# e.g. LEARNED_FLAGS='-model-procs 2'.
LEARNED_PY    := /usr/bin/python3
LEARNED_FLAGS ?=
LEARNED_ENV   := PYTHONPATH=$(abspath python) TEMPORA=$(abspath $(BIN))
LEARNED_TORCH := $(LEARNED_PY) -c 'import numpy, torch' 2>/dev/null

.PHONY: learned learned-quick test-learned learned-plot learned-reference

learned-plot:
	$(GO) build -o bin/learned-plot ./examples/pytorch/plot

learned-quick: build learned-plot
	@$(LEARNED_TORCH) || { echo "learned-quick: needs python3-numpy and python3-torch (apt-get install python3-torch)"; exit 1; }
	$(LEARNED_ENV) $(LEARNED_PY) examples/pytorch/learned.py -scale quick -out $(OUT)/learned-quick $(LEARNED_FLAGS)
	bin/learned-plot -in $(OUT)/learned-quick

learned: build learned-plot
	@$(LEARNED_TORCH) || { echo "learned: needs python3-numpy and python3-torch (apt-get install python3-torch)"; exit 1; }
	$(LEARNED_ENV) $(LEARNED_PY) examples/pytorch/learned.py -scale full -out $(OUT)/learned $(LEARNED_FLAGS)
	bin/learned-plot -in $(OUT)/learned

test-learned: build
	@if $(LEARNED_TORCH); then \
		cd examples/pytorch && $(LEARNED_ENV) $(LEARNED_PY) -m unittest -v test_learned test_integrated_gradients; \
	else \
		echo "test-learned: skipped: python3-numpy or python3-torch is not installed (apt-get install python3-torch)"; \
	fi

# learned-reference copies the tables and figures of out/learned-quick (and
# out/learned, once finished) into results/reference/learned, without the
# problems and explanations (run make learned-quick first).
learned-reference:
	rm -rf results/reference/learned/quick results/reference/learned/full
	mkdir -p results/reference/learned
	cp -r $(OUT)/learned-quick results/reference/learned/quick
	if [ -f $(OUT)/learned/index.md ]; then cp -r $(OUT)/learned results/reference/learned/full; fi
	rm -rf results/reference/learned/*/problems results/reference/learned/*/explanations
# ---- end of learned models -------------------------------------------------
