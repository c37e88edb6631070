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

# Short fuzzing of every parser (the seed corpus lives in each package's testdata/fuzz):
# FUZZTIME each, e.g. make fuzz FUZZTIME=2m.
FUZZTIME ?= 10s
FUZZ := \
	./internal/builtin/exec:FuzzCapture \
	./internal/builtin/exec:FuzzParseArgs \
	./internal/builtin/websearch:FuzzParseArgs \
	./internal/builtin/websearch:FuzzSanitize \
	./internal/catalog:FuzzReadFile \
	./internal/config/json5:FuzzParse \
	./internal/config/json5:FuzzSet \
	./internal/config:FuzzParse \
	./internal/mcphub:FuzzScrub \
	./internal/mcpserve:FuzzDecodeLine \
	./internal/mcpserve:FuzzDecodeMessage \
	./internal/plugins/tavily:FuzzDecodeConfig \
	./internal/plugins/tavily:FuzzExtractArgs \
	./internal/plugins/tavily:FuzzNormalizePublished \
	./internal/plugins/tavily:FuzzSearchArgs \
	./internal/plugins/tokenjuice:FuzzCompact \
	./internal/gateway:FuzzParsePatch \
	./internal/glob:FuzzMatch \
	./internal/sandbox:FuzzDecodeMessage \
	./internal/sandbox:FuzzReadLine \
	./internal/search:FuzzReadQueries \
	./internal/search:FuzzTokenize \
	./internal/toolsearch:FuzzCallArgs \
	./internal/toolsearch:FuzzCompactInputHint \
	./internal/toolsearch:FuzzParseValue \
	./internal/toolsearch:FuzzSearchRequest \
	./internal/toolsearch:FuzzValidate

fuzz:
	@set -e; for t in $(FUZZ); do \
		echo "== $$t"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) "$${t%%:*}"; \
	done

clean:
	rm -rf bin
