# The two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       := bin/portal
DEV_SECRET := dev-only-hash-secret-change-me
DEV_ENV   := PORTAL_HASH_SECRET=$(DEV_SECRET) PORTAL_COOKIE_SECURE=false

.PHONY: run build test fmt-check vet templ templ-check bench clean

## run: build, migrate, seed the demo data and serve on :8080 (development settings)
run: build
	@echo "Development hash secret: $(DEV_SECRET) (never use it in production)"
	$(DEV_ENV) ./$(BIN) seed demo
	$(DEV_ENV) ./$(BIN) serve

## build: the portal binary, pure Go (no cgo needed)
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/portal

## test: formatting, vet, generated-code drift, then every test with the race detector
test: fmt-check vet templ-check
	$(GO) test -race -count=1 ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## templ: regenerate the templ components
templ:
	$(GO) tool templ generate -path views

## templ-check: fail when the committed *_templ.go files differ from what templ generates
templ-check:
	@tmp=$$(mktemp -d); cp -r views $$tmp/; \
	$(GO) tool templ generate -path $$tmp/views >/dev/null 2>&1 || { echo "templ generate failed"; rm -rf $$tmp; exit 1; }; \
	for f in $$tmp/views/*_templ.go; do \
	  if ! cmp -s "$$f" "views/$$(basename $$f)"; then echo "templ drift: views/$$(basename $$f) is not what templ generates; run make templ"; rm -rf $$tmp; exit 1; fi; \
	done; rm -rf $$tmp; echo "templ: generated files are current"

## bench: N concurrent members through the whole JSON flow against a server on PostgreSQL
## (PORTAL_BENCH_DATABASE_URL, default the local test database); see docs/BENCHMARKS.md
BENCH_MEMBERS ?= 32
BENCH_FLOWS   ?= 10
bench: build
	$(GO) run ./cmd/loadgen -portal $(BIN) -members $(BENCH_MEMBERS) -flows $(BENCH_FLOWS)

clean:
	rm -rf bin
