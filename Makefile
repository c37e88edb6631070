# nodmix — `make run` starts the gateway with embedded defaults; `make test` runs every test.
GO      ?= go
BIN     := bin/nodmix
E2E     := testdata/e2e

.PHONY: build run demo test e2e-deps vet bench lint fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/nodmix

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

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

test: e2e-deps vet
	NODMIX_E2E=1 $(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

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
