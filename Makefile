# tempora's build, test and check entry points. Only Go (and make) is needed:
# staticcheck is fetched through the module proxy at a pinned version.

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN         := bin/tempora
OUT         := out

.PHONY: build test check bench demo clean

# build compiles the command line into bin/tempora.
build:
	$(GO) build -o $(BIN) ./cmd/tempora

# test runs every package's tests (the full default run).
test:
	$(GO) test ./...

# check fails on unformatted files, vet findings, staticcheck findings or a
# broken import rule.
check:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./internal/tools/importcheck

# bench runs the benchmarks and writes the Go benchmark format to
# out/bench.txt (compare runs with benchstat). BENCH_PKGS and BENCHFLAGS
# narrow a run, e.g. make bench BENCH_PKGS=./explain/ BENCHFLAGS=-benchtime=1x.
BENCH_PKGS ?= ./...
BENCHFLAGS ?=

bench:
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench . -benchmem $(BENCHFLAGS) $(BENCH_PKGS) > $(OUT)/bench.txt.tmp || { cat $(OUT)/bench.txt.tmp; rm -f $(OUT)/bench.txt.tmp; exit 1; }
	@mv $(OUT)/bench.txt.tmp $(OUT)/bench.txt
	@cat $(OUT)/bench.txt

# demo synthesises a Table-1-style classification problem (1000 instances,
# 10 features, 20 timesteps, half of the features relevant) into out/demo
# and explains it with TIME next to the ground truth.
demo: build
	./$(BIN) synth -out $(OUT)/demo -instances 1000 -features 10 -timesteps 20 -relevant 0.5 -task classification -noise auto -seed 1
	./$(BIN) explain -problem $(OUT)/demo

clean:
	rm -rf bin $(OUT)
