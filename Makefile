# nodmix — `make run` starts the gateway with embedded defaults; `make test` runs every test.
GO      ?= go
BIN     := bin/nodmix
E2E     := testdata/e2e

.PHONY: build run demo test e2e-deps vet bench bench-compare bench-instructions lint fuzz clean

# A static binary: nothing of nodmix needs cgo (SQLite is pure Go), and without the C runtime every
# process starts sooner, the code-mode sandbox children included (about 0.7 ms each).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/nodmix

# nodmix's main job: the gateway (MCP at /mcp, /healthz) with the servers of your config, if any.
run: build
	$(BIN) gateway

# A discovery search over the example catalog, then one agent turn against the bundled scripted
# model (no account needed): it calls the exec tool and answers with its output.
demo: build
	$(BIN) tools search "open an issue in a github repository" --catalog examples/catalog.jsonl
	$(BIN) agent --model scripted/demo -m 'run exec {"command": ["echo", "hello from a tool call"]}'

# Real MCP servers and the official TypeScript SDK client for the end-to-end tests; Debian's
# Chromium for the web chat's browser tests (installed only when it is missing).
e2e-deps:
	cd $(E2E) && npm ci --no-audit --no-fund --loglevel=error
	@if [ ! -x /usr/bin/chromium ]; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

# Every package is built for macOS and Windows too: their terminal and process calls differ from
# Linux's, and nothing here runs on them, so the build is what keeps them building.
vet:
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

test: e2e-deps vet
	NODMIX_E2E=1 $(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# The figures of the performance table (README, Figures), at 10,000 tools, in one run: each row's
# benchmark, its wall time, CPU time (the steadier figure on a shared machine) and allocations.
# The MCP hop needs e2e-deps (server-everything); without them its row is skipped. The builds
# that use every CPU are run on one and on two (the rows marked @2cpus). Each -cpu value gets a
# go test of its own: given a list, Go 1.26 runs some b.Loop benchmarks under another value.
BENCHTIME ?= 1s
CPUS2 := sed 's/^\(Benchmark[^ 	]*\)-2\([ 	]\)/\1@2cpus\2/'

bench-compare: build
	@{ \
	$(GO) test -run='^$$' -cpu 1 -benchtime=$(BENCHTIME) -benchmem -bench='^Benchmark(Index10000|IndexUpdate10000|Search10000)$$' ./internal/toolsearch; \
	$(GO) test -run='^$$' -cpu 2 -benchtime=$(BENCHTIME) -benchmem -bench='^Benchmark(Index10000|IndexFirstUse10000)$$' ./internal/toolsearch | $(CPUS2); \
	$(GO) test -run='^$$' -cpu 1 -benchtime=$(BENCHTIME) -benchmem -bench='^Benchmark(BM25Build|CorpusIndex|BM25Search)$$/^10000$$' ./internal/search; \
	$(GO) test -run='^$$' -cpu 2 -benchtime=$(BENCHTIME) -benchmem -bench='^BenchmarkBM25Build$$/^10000$$' ./internal/search | $(CPUS2); \
	$(GO) test -run='^$$' -cpu 1 -benchtime=$(BENCHTIME) -benchmem -bench='^Benchmark(Index10000|IndexUpdate10000)$$' ./internal/discovery | sed 's/^Benchmark/Benchmarkdiscovery./'; \
	$(GO) test -run='^$$' -cpu 1 -benchtime=$(BENCHTIME) -benchmem -bench='^BenchmarkReadFile10000$$' ./internal/catalog; \
	NODMIX_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -benchtime=20x -bench='^BenchmarkToolsSearchProcess10000$$' ./internal/catalog; \
	NODMIX_SANDBOX_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -benchtime=200x -benchmem -bench='^Benchmark(Run(Warm|Cold|ColdBinary)|ProcessStart)$$' ./internal/sandbox; \
	if [ -d $(E2E)/node_modules ]; then $(GO) test -run='^$$' -benchtime=1000x -bench='^BenchmarkProxyOverhead$$' ./internal/mcpserve; \
		NODMIX_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -benchtime=1000x -bench='^BenchmarkProxyProcess$$' ./internal/mcpserve; fi; \
	} | awk '\
		/^Benchmark/ { \
			name = $$1; sub(/-[0-9]+$$/, "", name); sub(/^Benchmark/, "", name); \
			wall = cpu = bop = aop = extra = ""; \
			for (i = 3; i < NF; i += 2) { \
				v = $$i; u = $$(i + 1); \
				if (u == "ns/op") wall = v; \
				else if (u == "cpu-ns/op" || u == "child-cpu-ns/op") cpu = v; \
				else if (u == "B/op") bop = v; \
				else if (u == "allocs/op") aop = v; \
				else if (u != "MB/s" && u != "warm/op" && u != "host-cpu-ns/op") extra = extra " " v " " u; \
			} \
			printf "| %s | %s | %s | %s | %s |%s |\n", name, fmt(wall), fmt(cpu), size(bop), aop, extra; \
			next \
		} \
		/^(FAIL|panic|---)/ { print } \
		function size(b) { if (b == "") return ""; if (b >= 1e6) return sprintf("%.1f MB", b / 1e6); return sprintf("%.1f kB", b / 1e3) } \
		function fmt(ns) { if (ns == "") return ""; if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6); return sprintf("%.1f µs", ns / 1e3) } \
		BEGIN { print "| benchmark | wall/op | CPU/op | bytes/op | allocs/op | other |"; print "|---|---:|---:|---:|---:|---|" }'

# Instructions per operation of the CPU-bound builds, counted by valgrind's cachegrind with the
# collector off, on one CPU: unlike wall and CPU time, the count does not move with the machine's
# load, so two commits compare across hours (on two CPUs it would count the scheduler spinning,
# which valgrind's serialized threads make it do). Each is the difference of a run of 6 operations and
# a run of 1, over 5 (a b.Loop benchmark given Nx runs N). Needs valgrind (apt-get install valgrind).
INSTR_BENCHES ?= toolsearch:Index10000 toolsearch:IndexUpdate10000 search:BM25Build/10000 discovery:Index10000

bench-instructions:
	@command -v valgrind >/dev/null || { echo "bench-instructions needs valgrind (apt-get install valgrind)" >&2; exit 1; }
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	echo "| benchmark | instructions/op |"; echo "|---|---:|"; \
	for b in $(INSTR_BENCHES); do \
		pkg=$${b%%:*}; name=$${b#*:}; top=$${name%%/*}; re="^Benchmark$$top\$$"; \
		case $$name in */*) re="$$re/^$${name#*/}\$$";; esac; \
		$(GO) test -c -o "$$tmp/t" ./internal/$$pkg || exit 1; \
		for n in 1 6; do \
			(cd internal/$$pkg && GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=cachegrind \
				--cache-sim=no --cachegrind-out-file="$$tmp/out$$n" "$$tmp/t" -test.run='^$$' -test.bench="$$re" \
				-test.benchtime=$${n}x >/dev/null 2>&1) || { echo "$$b: the run failed" >&2; exit 1; }; \
		done; \
		awk -v b="$$b" '/^summary:/ { ir[FILENAME] = $$2 } END { for (f in ir) if (f ~ /out1$$/) one = ir[f]; else six = ir[f]; \
			printf "| %s | %.1f M |\n", b, (six - one) / 5 / 1e6 }' "$$tmp/out1" "$$tmp/out6"; \
	done

lint: vet

# Short fuzzing of every parser: every Fuzz target of the tree (the seed corpus lives in each
# package's testdata/fuzz), FUZZTIME each, e.g. make fuzz FUZZTIME=2m.
FUZZTIME ?= 10s

fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' internal cmd | sort); do \
		pkg=./$$(dirname $$f); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$pkg $$t"; \
			$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin
