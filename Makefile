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

# A discovery search over the example catalog, printed as the renderer shows it.
demo: build
	$(BIN) tools search "open an issue in a github repository" --catalog examples/catalog.jsonl

# Real MCP servers and the official TypeScript SDK client for the end-to-end tests.
e2e-deps:
	cd $(E2E) && npm ci --no-audit --no-fund --loglevel=error

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

test: e2e-deps vet
	NODMIX_E2E=1 $(GO) test -race -count=1 -timeout 20m ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

lint: vet

# Short fuzzing of every parser (the seed corpus lives in each package's testdata/fuzz).
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzTokenize -fuzztime=20s ./internal/search
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=20s ./internal/config/json5

clean:
	rm -rf bin
