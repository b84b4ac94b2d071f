# The two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       := bin/portal
DEV_SECRET := dev-only-hash-secret-change-me
# PAYMENT picks the payment provider of `make run`: test (the built-in test
# gateway) or bank_transfer (to a demo account: a valid example IBAN, so
# the QR code scans; nobody owns it, send no money).
PAYMENT   ?= test
DEV_BANK  := PORTAL_BANK_CREDITOR_NAME='TV Demo 1848 e.V.' PORTAL_BANK_IBAN=DE89370400440532013000 PORTAL_BANK_BIC=COBADEFFXXX
DEV_ENV   := PORTAL_HASH_SECRET=$(DEV_SECRET) PORTAL_COOKIE_SECURE=false PORTAL_PAYMENT_PROVIDER=$(PAYMENT) $(if $(filter bank_transfer,$(PAYMENT)),$(DEV_BANK))

.PHONY: run build test fmt-check vet lint templ templ-check bench clean

# One build configuration for everything but the race detector: the portal uses no cgo (its SQLite
# is pure Go) and its image needs a static binary, so vet, lint, the build, the calendar's test
# binaries and the binaries the tests build (cmd/internal/portalbin, the image, the upgrade's old
# release) all compile with CGO_ENABLED=0 and share one build cache. Only go test -race, which
# needs cgo, compiles every package a second time. On a fresh machine that saves a whole compile.
export CGO_ENABLED ?= 0

## run: build, migrate, seed the demo data (two clubs: localhost and 127.0.0.1) and serve on :8080 (development settings;
## `make run PAYMENT=bank_transfer` for payment by bank transfer)
run: build
	@echo "Development hash secret: $(DEV_SECRET) (never use it in production)"
	@[ -n "$$PORTAL_SMTP_URL$$PORTAL_SMTP_URL_FILE" ] || echo "No PORTAL_SMTP_URL: e-mail is written to the log (level info), not sent"
	$(DEV_ENV) ./$(BIN) seed demo --tenants
	$(DEV_ENV) ./$(BIN) serve

## build: the portal binary, pure Go (no cgo needed)
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/portal

## image: the container image portal:VERSION (the Containerfile: FROM scratch, nothing pulled) with
## podman: the binary is built here (static, stripped; -trimpath is left out so that it reuses the
## build cache of make build) and staged in bin/image with the host's CA certificates and the user
## of deploy/image. PODMAN=docker PODMAN_CONF= builds it with Docker; PODMAN_CONF= keeps podman's
## own settings on a host that needs none of deploy/podman/containers.conf (docs/OPERATIONS.md#deployment)
VERSION         ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE           ?= portal:$(VERSION)
IMAGE_CONTEXT   := bin/image
CA_CERTIFICATES ?= /etc/ssl/certs/ca-certificates.crt
PODMAN          ?= podman
PODMAN_CONF     ?= deploy/podman/containers.conf
.PHONY: image
image:
	rm -rf $(IMAGE_CONTEXT) && mkdir -p $(IMAGE_CONTEXT)/data
	CGO_ENABLED=0 $(GO) build -ldflags='-s -w' -o $(IMAGE_CONTEXT)/portal ./cmd/portal
	cp $(CA_CERTIFICATES) $(IMAGE_CONTEXT)/ca-certificates.crt
	cp deploy/image/passwd deploy/image/group $(IMAGE_CONTEXT)/
	$(if $(PODMAN_CONF),CONTAINERS_CONF=$(abspath $(PODMAN_CONF))) $(PODMAN) build -f Containerfile -t $(IMAGE) $(IMAGE_CONTEXT)

## test: the whole suite on what this machine offers: .ci/test-env finds or starts the local
## PostgreSQL and Redis, installs the npm packages, stripe-mock and the OIDC test provider (pinned,
## into bin/tools) and, as root, Debian's Chromium, then says in one line per part what it could
## not run. PORTAL_TEST_REQUIRE=all (as .ci/run sets) fails instead of skipping.
test:
	@.ci/test-env $(MAKE) --no-print-directory test-suite

## test-suite: formatting, vet, lint, generated-code drift, then every test with the race detector
## (-timeout 20m: the biggest packages take minutes under -race on a busy two-core machine, close
## to Go's default of 10 minutes per package) but the browser suite and the volume tests, then the
## browser suite without it beside the volume tests and the calendar (make test-browser, test-volume,
## test-calendar: the browser waits on Chromium half the time, the others fill the other core). The
## browser suite (Chromium driving the pages) drives the same handlers whose concurrency the race run covers through their own tests (the concurrent
## submissions, the single-flight refresh, the session stores); under -race its pages take three
## times as long (it was the longest package of the run). Each part that needs a service skips
## with one line when it is absent (use make test to find or start them).
##
## TEST_FLAGS, for every go test of the suite: -vet=off, because make vet ran the whole of go vet
## (every analyzer) over the same packages and their tests just before, and go test's own vet pass
## (a subset of those analyzers) would analyse them all again; -ldflags=-w, because a test binary
## needs no DWARF (a race report and a panic read the symbol table, which stays) and leaving it out
## makes each of the sixty-odd links shorter. TEST_PARALLEL: test binaries at once in the race run;
## on two cores it waits half its time (child processes, Chromium, PostgreSQL, timers), so one more
## than the cores keeps them busy.
.PHONY: test-suite
RACE ?= -race
BROWSER_TESTS ?= ^TestE2E
TEST_FLAGS ?= -vet=off -ldflags=-w
TEST_PARALLEL ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test-suite: fmt-check vet lint templ-check css-check spec-check spec-lint spec-diff spec-published contract-client
	$(if $(RACE),CGO_ENABLED=1) $(GO) test $(RACE) $(TEST_FLAGS) -p $(TEST_PARALLEL) -count=1 -timeout 20m -skip '$(BROWSER_TESTS)|^($(VOLUME_TESTS))$$' ./...
	@$(MAKE) --no-print-directory -j2 test-browser test-volume-calendar

# test-volume-calendar: the volume tests, then the calendar, one after the other beside the browser
# suite (each runs two test binaries at once; the three side by side overloaded two cores and made
# the browser suite's waits run out).
.PHONY: test-volume-calendar
test-volume-calendar:
	@$(MAKE) --no-print-directory test-volume
	@$(MAKE) --no-print-directory test-calendar

## test-volume: the tests whose cost is their volume, thousands of random cases or rows driven
## through one goroutine (the books under random imports and collections, batch against one-by-one
## settlement, every path of random conditions, the admin API's 10,000-row calls), once without
## -race: the race detector looks for goroutines that race, and these have none of their own (the
## concurrent settlement, submissions and sessions have their own tests in the race run), while
## under it they took some three minutes of the run's CPU. Their packages are found by their names;
## a name listed here that no test has any more fails the target, so none is left out of both runs.
VOLUME_TESTS ?= TestBooksHoldUnderRandomImports|TestBooksHoldUnderRandomCollections|TestSettleBatchSettlesAsOneByOne|TestConditionalPathsProperty|TestAdminBulkCallsTakeTenThousand
.PHONY: test-volume
test-volume:
	@pkgs=""; for name in $$(echo '$(VOLUME_TESTS)' | tr '|' ' '); do \
	  files=$$(git grep -lE "^func $$name\(" -- '*_test.go' 2>/dev/null || grep -rlE "^func $$name\(" --include='*_test.go' .); \
	  [ -n "$$files" ] || { echo "test-volume: no test is named $$name any more; update VOLUME_TESTS in the Makefile" >&2; exit 1; }; \
	  for f in $$files; do pkgs="$$pkgs ./$$(dirname $${f#./})"; done; \
	done; \
	pkgs=$$(printf '%s\n' $$pkgs | sort -u | tr '\n' ' '); \
	echo "$(GO) test $(TEST_FLAGS) -count=1 -timeout 20m -run '^($(VOLUME_TESTS))$$' $$pkgs"; \
	$(GO) test $(TEST_FLAGS) -count=1 -timeout 20m -run '^($(VOLUME_TESTS))$$' $$pkgs

## test-browser: the browser end-to-end suite alone (Chromium; PORTAL_E2E=required fails where it cannot run)
.PHONY: test-browser
test-browser:
	$(GO) test $(TEST_FLAGS) -count=1 -timeout 20m -run '$(BROWSER_TESTS)' ./handlers

## test-calendar: the date-dependent tests (due dates, the default collection window, reminders,
## suspension, archive, retention, mandate expiry, period windows, early-bird and late pricing, age
## groups, invitations) again with the whole process's clock (PORTAL_CLOCK, engine/clock) set to
## each awkward day: a Saturday, a Sunday, 24 and 31 December, the day before Good Friday, 29
## February, the last day of a season and the first of the next. On SQLite and without -race (the
## date logic is Go's, and the full run above covers PostgreSQL and races on today's date).
CALENDAR_DAYS  ?= 2026-12-05 2026-12-06 2026-12-24 2026-12-31 2027-03-25 2028-02-29 2027-06-30 2027-07-01
CALENDAR_PKGS  ?= ./engine/... ./outbound/... ./cmd/portal ./handlers/...
CALENDAR_TESTS ?= Debit|Collect|Mandate|Remind|Suspend|Resume|Archive|Retention|Period|Pric|EarlyBird|Late|Age|Due|Calendar|Renewal|Expir|Invitation|Season|Lifecycle|Schedul|Capture|Report|Overview
# The browser suite runs once, on today's date, in test-suite: its date-dependent steps read the
# same defaults as the pages (directdebit.DefaultCollectionUntil) that the handlers' tests check here.
CALENDAR_SKIP  ?= E2E
# Each package's test binary is built once (without -race) and run on every day from its package's
# folder, as go test runs it: eight days of go test would link the same binaries eight times. Only
# the packages with a top-level test, fuzz target or example that -test.run picks and -test.skip
# leaves (their names read from the sources, as gofmt writes them) are built.
.PHONY: test-calendar
test-calendar:
	@bins=$$(mktemp -d); trap 'rm -rf "$$bins"' EXIT; \
	$(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' $(CALENDAR_PKGS) >"$$bins/all" || exit 1; \
	while read -r pkg dir; do \
	  sed -n 's/^func \(\(Test\|Fuzz\|Example\)[A-Za-z0-9_]*\)(.*/\1/p' "$$dir"/*_test.go | grep -E '$(CALENDAR_TESTS)' | grep -qvE '$(CALENDAR_SKIP)' \
	    && echo "$$pkg $$dir"; \
	done <"$$bins/all" >"$$bins/pkgs"; \
	echo "test-calendar: $$(wc -l <"$$bins/pkgs") of $$(wc -l <"$$bins/all") packages have date-dependent tests"; \
	awk '{n=$$1; gsub("/", "_", n); print $$1, n}' "$$bins/pkgs" | \
	  xargs -P 2 -n 2 sh -c '$(GO) test $(TEST_FLAGS) -c -o "$$0/$$2.test" "$$1" || exit 255' "$$bins" || { echo "test-calendar: building the test binaries failed" >&2; exit 1; }; \
	for day in $(CALENDAR_DAYS); do \
	  echo "test-calendar: the clock on $$day"; \
	  awk '{n=$$1; gsub("/", "_", n); print $$2, n}' "$$bins/pkgs" | \
	    PORTAL_CLOCK=$$day PORTAL_TEST_DATABASE_URL= xargs -P 2 -n 2 sh -c 'cd "$$3" && out=$$("$$0/$$4.test" -test.count=1 -test.timeout=10m -test.run "$$1" -test.skip "$$2" 2>&1) || { printf "%s\nFAIL\t%s\n" "$$out" "$$4"; exit 255; }' "$$bins" '$(CALENDAR_TESTS)' '$(CALENDAR_SKIP)' \
	    || { echo "test-calendar: FAILED with the clock on $$day" >&2; exit 1; }; \
	done; echo "test-calendar: the date-dependent tests pass on $(CALENDAR_DAYS)"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## lint: staticcheck, pinned, installed into bin/ on first use (its own module: it does not touch go.mod),
## with doc comments that start with their name (staticcheck.conf); and no merge-conflict marker in
## any tracked file (a marker committed by mistake once made the README say two things)
STATICCHECK_VERSION := v0.6.1
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)
$(STATICCHECK):
	@mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/$(STATICCHECK_VERSION) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/tools/$(STATICCHECK_VERSION)/staticcheck $@ && rmdir bin/tools/$(STATICCHECK_VERSION)
lint: $(STATICCHECK) conflict-markers
	$(STATICCHECK) ./...

.PHONY: conflict-markers
conflict-markers:
	@if git rev-parse --git-dir >/dev/null 2>&1 && git grep -nE '^(<<<<<<<|>>>>>>>) |^<<<<<<<$$|^>>>>>>>$$'; then \
	  echo "lint: merge-conflict markers in the tracked files above" >&2; exit 1; fi

## stripe-mock: Stripe's API mock, pinned, installed into bin/tools like staticcheck; the Stripe
## suites (engine/stripepay, the webhook tests) find it there, and skip without it unless
## PORTAL_STRIPE_MOCK=required (as in CI)
STRIPE_MOCK_VERSION := v0.203.0
STRIPE_MOCK := bin/tools/stripe-mock-$(STRIPE_MOCK_VERSION)
.PHONY: stripe-mock
stripe-mock: $(STRIPE_MOCK)
$(STRIPE_MOCK):
	@mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/sm-$(STRIPE_MOCK_VERSION) $(GO) install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)
	mv bin/tools/sm-$(STRIPE_MOCK_VERSION)/stripe-mock $@ && rmdir bin/tools/sm-$(STRIPE_MOCK_VERSION)

## oidc-op: zitadel's example OpenID Provider (a certified implementation), pinned, installed into
## bin/tools like stripe-mock; the staff sign-in suite (handlers) drives it as a real peer, and
## skips without it unless PORTAL_OIDC_OP=required (as in CI). Built in its own module mode
## (GOFLAGS=-mod=mod, its own GOBIN) so it does not touch go.mod.
OIDC_OP_VERSION := v3.51.17
OIDC_OP := bin/tools/oidc-op-$(OIDC_OP_VERSION)
.PHONY: oidc-op
oidc-op: $(OIDC_OP)
$(OIDC_OP):
	@mkdir -p bin/tools
	GOBIN=$(CURDIR)/bin/tools/op-$(OIDC_OP_VERSION) $(GO) install github.com/zitadel/oidc/v3/example/server@$(OIDC_OP_VERSION)
	mv bin/tools/op-$(OIDC_OP_VERSION)/server $@ && rmdir bin/tools/op-$(OIDC_OP_VERSION)

## templ: regenerate the templ components
templ:
	$(GO) tool templ generate -path views

## templ-check: fail when the committed *_templ.go files differ from what templ generates
templ-check:
	@tmp=$$(mktemp -d); cp -r views $$tmp/; \
	$(GO) tool templ generate -path $$tmp/views >/dev/null 2>&1 || { echo "templ generate failed"; rm -rf $$tmp; exit 1; }; \
	for f in $$(cd $$tmp && find views -name '*_templ.go'); do \
	  if ! cmp -s "$$tmp/$$f" "$$f"; then echo "templ drift: $$f is not what templ generates; run make templ"; rm -rf $$tmp; exit 1; fi; \
	done; \
	for f in $$(find views -name '*_templ.go'); do \
	  if [ ! -f "$$tmp/$$f" ]; then echo "templ drift: $$f has no templ source; remove it"; rm -rf $$tmp; exit 1; fi; \
	done; rm -rf $$tmp; echo "templ: generated files are current"

## Front-end assets. The npm packages (Tailwind, the pinned htmx) live in static/node_modules,
## installed by `npm ci --prefix static` from static/package-lock.json. Browserslist (Tailwind's
## autoprefixer) would read these variables; unsetting them makes the build depend only on the
## repository, so that css-check is stable.
NPM          ?= npm
TAILWIND_CSS := env -u BROWSERSLIST -u BROWSERSLIST_CONFIG -u BROWSERSLIST_ENV -u BROWSERSLIST_STATS \
	-u BROWSERSLIST_DANGEROUS_EXTEND BROWSERSLIST_IGNORE_OLD_DATA=1 NODE_ENV=production \
	static/node_modules/.bin/tailwindcss --config tailwind.config.js --input static/src/app.css --minify

.PHONY: css css-check htmx

# npm ci writes node_modules/.package-lock.json; reinstall when it is missing or older than the lock file.
static/node_modules/.package-lock.json: static/package.json static/package-lock.json
	$(NPM) ci --prefix static --no-audit --no-fund

## css: build the committed, minified static/dist/app.css (run it after changing classes in views/ or handlers/)
css: static/node_modules/.package-lock.json
	$(TAILWIND_CSS) --output static/dist/app.css

## htmx: copy the pinned htmx from static/node_modules into static/dist (see static/dist/VENDORED.md)
htmx: static/node_modules/.package-lock.json
	cp static/node_modules/htmx.org/dist/htmx.min.js static/dist/htmx.min.js

## css-check: fail when static/dist/app.css is not what Tailwind builds, or static/dist/htmx.min.js
## is not the pinned htmx; without static/node_modules it says it SKIPPED, and fails under
## PORTAL_CSS_CHECK=required (as in CI)
css-check:
	@if [ ! -x static/node_modules/.bin/tailwindcss ]; then \
	  if [ "$$PORTAL_CSS_CHECK" = required ]; then \
	    echo "css-check: FAILED: static/node_modules is missing and PORTAL_CSS_CHECK=required; run npm ci --prefix static" >&2; exit 1; \
	  fi; \
	  echo "css-check: SKIPPED the CSS and htmx drift check: static/node_modules is missing (run npm ci --prefix static)"; exit 0; \
	fi; \
	tmp=$$(mktemp); \
	if ! out=$$($(TAILWIND_CSS) --output $$tmp 2>&1); then \
	  echo "$$out" >&2; echo "css-check: FAILED: the Tailwind build failed" >&2; rm -f $$tmp; exit 1; \
	fi; \
	if ! cmp -s $$tmp static/dist/app.css; then \
	  echo "css drift: static/dist/app.css is not what Tailwind builds from static/src/app.css, tailwind.config.js and the classes in views/ and handlers/; run make css and commit it" >&2; rm -f $$tmp; exit 1; \
	fi; rm -f $$tmp; \
	if ! cmp -s static/node_modules/htmx.org/dist/htmx.min.js static/dist/htmx.min.js; then \
	  echo "htmx drift: static/dist/htmx.min.js is not static/node_modules/htmx.org/dist/htmx.min.js (the version pinned in static/package-lock.json); run make htmx, or npm ci --prefix static if the lock file changed" >&2; exit 1; \
	fi; \
	echo "css-check: static/dist/app.css and static/dist/htmx.min.js are current"

## Our own OpenAPI description held to the contract tools (docs/CONTRACT.md). spec-export
## writes what /api/openapi.json serves; docs/openapi.json publishes exactly that for client
## developers (spec-published fails when it drifts; make spec-publish rewrites it);
## docs/openapi-released.json is the last released description, the baseline spec-diff holds the
## current one to; docs/openapi-models.txt is the allow-list of generated models.
SPEC_EXPORT := bin/openapi.json

.PHONY: spec-export spec-check spec-lint spec-diff spec-published spec-publish contract-client

spec-export: build
	./$(BIN) spec export > $(SPEC_EXPORT)

## spec-check: the allow-list is closed under $ref and names only component schemas; all 7 paths are there
spec-check: spec-export
	./$(BIN) spec check --spec $(SPEC_EXPORT) --models docs/openapi-models.txt --min-paths 7 --strict

## spec-lint: the published error conventions (204 on DELETE, 401/403 when secured, conditions described)
spec-lint: spec-export
	./$(BIN) spec lint $(SPEC_EXPORT)

## spec-diff: against the last release (docs/openapi-released.json); fails on a breaking change or
## an info.version bump too small for the changes since then
spec-diff: spec-export
	./$(BIN) spec diff docs/openapi-released.json $(SPEC_EXPORT) --require-bump

## spec-published: docs/openapi.json is what /api/openapi.json serves
spec-published: spec-export
	@cmp -s $(SPEC_EXPORT) docs/openapi.json || { echo "spec drift: docs/openapi.json is not what /api/openapi.json serves; run make spec-publish and commit it" >&2; exit 1; }
	@echo "spec-published: docs/openapi.json is current"

## spec-publish: write the served description to docs/openapi.json
spec-publish: spec-export
	cp $(SPEC_EXPORT) docs/openapi.json

## contract-client: openapi-typescript types, an openapi-fetch client type-checked and run through the
## registration flow against a real server; without node or docs/contract-client/node_modules it says
## it SKIPPED, and fails under PORTAL_CONTRACT_CLIENT=required (as in CI)
contract-client: build
	docs/contract-client/run.sh $(BIN)

## bench: N concurrent members through the whole JSON flow against a server on PostgreSQL
## (PORTAL_BENCH_DATABASE_URL, default the local test database) or SQLite (BENCH_DB=sqlite),
## then their step page, then the raw step transaction as the reference (pgbench on PostgreSQL,
## database/sql on SQLite): next/s against its tx/s; see docs/BENCHMARKS.md
BENCH_MEMBERS ?= 32
BENCH_FLOWS   ?= 10
BENCH_THINK   ?= 0s
BENCH_DB      ?= postgres
bench: build
	$(GO) run ./cmd/loadgen -portal $(BIN) -members $(BENCH_MEMBERS) -flows $(BENCH_FLOWS) -think $(BENCH_THINK) $(if $(filter sqlite,$(BENCH_DB)),-sqlite)

## bench-relay: the portal as users run it (bin/portal serve, its own process) relaying a small GET, against a bare
## pooled httputil.ReverseProxy (its own process too): guest, a hash-login session on SQLite (the default), on PostgreSQL
## (PORTAL_BENCH_DATABASE_URL) and on Redis (PORTAL_BENCH_REDIS_URL); requests/s, p50/p99 and ratios; see docs/BENCHMARKS.md
RELAY_BENCH_FLAGS ?= -duration 3s -rounds 3 -concurrency 32
## bench-staff: the staff registration list (count and a page of 50) and the open payments on a seeded season of 10,000
## registrations on PostgreSQL (PORTAL_TEST_DATABASE_URL), per filter (docs/BENCHMARKS.md)
.PHONY: bench-staff
bench-staff:
	$(GO) test ./engine/staff -run '^$$' -bench 'BenchmarkStaffRegistrations|BenchmarkOpenPayments' -benchtime 20x -count 1

## bench-debits: a season's direct-debit collection run prepared and marked sent on PostgreSQL
## (PORTAL_TEST_DATABASE_URL): ~1,700 debits of 10,000 registrations; see docs/BENCHMARKS.md
.PHONY: bench-debits
bench-debits:
	$(GO) test ./engine/directdebit -run '^$$' -bench 'BenchmarkCollectionRun$$' -benchtime 3x -count 1
	$(GO) test ./engine/directdebit -run '^$$' -bench 'BenchmarkCollectionRunSent' -benchtime 1x -count 1

## bench-federation: a federation's season (issue 42) on a fresh PostgreSQL database (PORTAL_BENCH_DATABASE_URL's
## server, default the local one): portal seed federation, then the nightly jobs, the season opening, the staff pages,
## the admin API, a statement import and a collection run against the portal as its own process, each against its
## target and a reference of the same run; writes the figures to docs/BENCHMARKS.md. Smaller: FED_CLUBS, FED_PERSONS.
FED_CLUBS   ?= 200
FED_PERSONS ?= 100000
FED_FLAGS   ?=
.PHONY: bench-federation
bench-federation: build
	$(GO) run ./cmd/loadgen -federation -portal $(BIN) -clubs $(FED_CLUBS) -persons $(FED_PERSONS) -doc docs/BENCHMARKS.md $(FED_FLAGS)

## screenshots-staff: every staff page at 390 and 1280 px into docs/img/staff-NAME-WIDTH.png, from the
## browser suite's layout walk (TestE2EStaffLayout: Chromium and static/node_modules needed; docs/STAFF.md)
.PHONY: screenshots-staff
screenshots-staff:
	PORTAL_DOCS_SCREENSHOTS=1 PORTAL_E2E=required $(GO) test ./handlers -run '^TestE2EStaffLayout$$' -count=1

.PHONY: bench-relay
bench-relay: build
	$(GO) run ./cmd/relaybench -portal $(BIN) $(RELAY_BENCH_FLAGS)

clean:
	rm -rf bin
