SHELL := /bin/bash
# Trove: the two commands that matter are `make demo` and `make test`.
SWIFT ?= swift
DEMO_DIR := .trove-demo

.PHONY: demo test test-sanitize test-long fuzz fuzz-corpus bench bench-sync bench-instructions docs format deps deps-browser deps-postgres studio-fuzz build clean
FUZZ_SECONDS ?= 60
# bench-instructions: default sizes divided by this.
DIVIDE ?= 10

# Installs what is missing: LMDB (the engine), OpenSSL's libcrypto on Linux
# (encryption at rest), SQLite's headers (the benchmark baseline) and GNU
# libmicrohttpd (the HTTP server of `trove studio`), from apt on Debian/Ubuntu
# or Homebrew on macOS.
deps:
	@missing=""; \
	if ! pkg-config --exists lmdb 2>/dev/null && [ ! -f /usr/include/lmdb.h ]; then missing="$$missing liblmdb-dev"; fi; \
	if ! pkg-config --exists sqlite3 2>/dev/null && [ ! -f /usr/include/sqlite3.h ]; then missing="$$missing libsqlite3-dev"; fi; \
	if [ "$$(uname)" = Linux ] && ! pkg-config --exists libcrypto 2>/dev/null && [ ! -f /usr/include/openssl/evp.h ]; then missing="$$missing libssl-dev"; fi; \
	if ! pkg-config --exists libmicrohttpd 2>/dev/null && [ ! -f /usr/include/microhttpd.h ]; then missing="$$missing libmicrohttpd-dev"; fi; \
	if ! pkg-config --exists libpq 2>/dev/null && [ ! -f /usr/include/postgresql/libpq-fe.h ]; then missing="$$missing libpq-dev"; fi; \
	if [ -n "$$missing" ]; then \
		if command -v apt-get >/dev/null 2>&1; then \
			bash scripts/install-missing.sh "the engine, encryption, the studio, sync and the benchmarks' baseline" $$missing; \
		elif command -v brew >/dev/null 2>&1; then \
			echo "Installing lmdb sqlite libmicrohttpd libpq (Homebrew)..."; \
			brew install lmdb sqlite libmicrohttpd libpq; \
		else \
			echo "Please install:$$missing"; exit 1; \
		fi; \
	fi

# The browser the studio's tests drive: headless Chromium and chromedriver, and a
# Korean font so that screenshots show the seeds' text (Debian's packages).
deps-browser:
	@missing=""; \
	if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then missing="$$missing chromium"; fi; \
	if ! command -v chromedriver >/dev/null 2>&1; then missing="$$missing chromium-driver"; fi; \
	if [ "$$(uname)" = Linux ] && [ -z "$$(fc-list :lang=ko 2>/dev/null)" ]; then missing="$$missing fonts-nanum"; fi; \
	bash scripts/install-missing.sh "for the studio's browser tests" $$missing

# The sync tests' server: Debian's PostgreSQL (started by the tests in a
# temporary directory, as nobody when run as root) and PgBouncer.
deps-postgres:
	@missing=""; \
	if [ -z "$$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" ] && ! command -v initdb >/dev/null 2>&1; then missing="$$missing postgresql"; fi; \
	if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then missing="$$missing pgbouncer"; fi; \
	bash scripts/install-missing.sh "for the sync tests" $$missing

# Fuzzes the studio's JSON API from its OpenAPI document (schemathesis from PyPI, in a venv).
studio-fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/studio-fuzz.sh

build: deps
	$(SWIFT) build

# The photo diary from the seed documents on a default database file.
demo: deps
	$(SWIFT) build --product PhotoDiary
	@mkdir -p $(DEMO_DIR)
	$(SWIFT) run --skip-build PhotoDiary $(DEMO_DIR)/photos.trove
	$(SWIFT) build --product Inventory
	$(SWIFT) run --skip-build Inventory $(DEMO_DIR)/inventory.trove
	$(SWIFT) build --product Chat
	$(SWIFT) run --skip-build Chat $(DEMO_DIR)/messenger.trove

# After a failed pass: the failed tests and their issues, then the output's
# end (a crash ends there), so that a log cut to its last lines still names them.
failures = { echo "--- what failed in $(1):"; grep -aE '✘|Fatal error|error:' $(1) | tail -n 80; echo "--- the end of $(1):"; tail -n 25 $(1); }

# Every run of the suite writes under a temporary directory of its own (TMPDIR
# for the test processes), removed when the run passes, so two checkouts can
# test on one machine at once.
TEST_TMP_PARENT := $(or $(TMPDIR),/tmp)

# The suites the encrypted pass runs: each of their databases is made by
# makeDatabase, which gives it the suite's key.
ENCRYPTED_SUITES := QueryConformanceTests|EdgeCaseTests|DeletedSlotTests|LinkTests|ListChunkTests|ColumnPatchTests|FaultInjectionTests|SetAndMapTests|FullTextSearchTests|LinkQueryTests|MigrationTests|ChangeLogTests|DynamicObjectTests|EmbeddedObjectTests|SectionedResultsTests|SortDescriptorTests|ObjectTests|HierarchyTests|PersistableTests|ObservationTests

test: deps deps-browser deps-postgres
	$(SWIFT) build --build-tests
	scratch=$$(mktemp -d "$(TEST_TMP_PARENT)/trove-test-run.XXXXXX") && \
		TMPDIR=$$scratch $(SWIFT) test --skip-build 2>&1 | tee .build/test-output.txt; status=$${PIPESTATUS[0]}; \
		[ $$status -eq 0 ] || $(call failures,.build/test-output.txt); \
		[ $$status -ne 0 ] || rm -rf "$$scratch"; exit $$status
	@echo "The suite again with types stored as one record per object (TROVE_LAYOUT=records: Configuration.storageLayout = .records; column clusters are the default)."
	scratch=$$(mktemp -d "$(TEST_TMP_PARENT)/trove-test-run.XXXXXX") && \
		{ TMPDIR=$$scratch TROVE_LAYOUT=records $(SWIFT) test --skip-build > .build/test-output-records.txt 2>&1 || { $(call failures,.build/test-output-records.txt); exit 1; }; } && \
		rm -rf "$$scratch"
	@grep "Test run with" .build/test-output-records.txt | tail -n 1
	@echo "The object, query, collection, full-text and migration suites again on encrypted files (TROVE_TEST_ENCRYPTED=1: keys hold tokens, values are sealed)."
	scratch=$$(mktemp -d "$(TEST_TMP_PARENT)/trove-test-run.XXXXXX") && \
		{ TMPDIR=$$scratch TROVE_TEST_ENCRYPTED=1 $(SWIFT) test --skip-build --filter "$(ENCRYPTED_SUITES)" > .build/test-output-encrypted.txt 2>&1 || { $(call failures,.build/test-output-encrypted.txt); exit 1; }; } && \
		rm -rf "$$scratch"
	@grep "Test run with" .build/test-output-encrypted.txt | tail -n 1
	@echo "The test that rewinds the process-id counter, alone (TROVE_TEST_PID_STEERING=1): beside other tests it makes their dead children's ids live again."
	scratch=$$(mktemp -d "$(TEST_TMP_PARENT)/trove-test-run.XXXXXX") && \
		{ TMPDIR=$$scratch TROVE_TEST_PID_STEERING=1 $(SWIFT) test --skip-build --filter "noncesAcrossForksWithRecycledProcessIDs" > .build/test-output-pids.txt 2>&1 || { $(call failures,.build/test-output-pids.txt); exit 1; }; } && \
		rm -rf "$$scratch"
	@grep "Test run with" .build/test-output-pids.txt | tail -n 1
	@echo "The sync suites again through PgBouncer in transaction mode (TROVE_SYNC_PGBOUNCER=1: a statement may land on another server session, so the protocol keeps no session state)."
	scratch=$$(mktemp -d "$(TEST_TMP_PARENT)/trove-test-run.XXXXXX") && \
		{ TMPDIR=$$scratch TROVE_SYNC_PGBOUNCER=1 $(SWIFT) test --skip-build --filter TroveSyncTests > .build/test-output-pgbouncer.txt 2>&1 || { $(call failures,.build/test-output-pgbouncer.txt); exit 1; }; } && \
		rm -rf "$$scratch"
	@grep "Test run with" .build/test-output-pgbouncer.txt | tail -n 1
	@echo "Benchmark smoke run: every workload runs on every engine and the answers agree (no timing checked)."
	$(SWIFT) run --skip-build trove-bench --quick > .build/bench-smoke.txt 2> .build/bench-smoke-progress.txt
	@grep -cE '^\| (W|MIG|ENC|STRUCT)' .build/bench-smoke.txt | xargs echo "benchmark rows that ran and agreed:"
	TROVE_LAYOUT=records $(SWIFT) run --skip-build trove-bench --quick > .build/bench-smoke-records.txt 2>&1 || (tail -n 30 .build/bench-smoke-records.txt; exit 1)
	@grep -cE '^\| (W|MIG|ENC|STRUCT)' .build/bench-smoke-records.txt | xargs echo "benchmark rows that ran and agreed, records:"
	@echo "Full-text smoke run: Trove finds every memo holding a Korean word and agrees with FTS5 on English words (no timing checked)."
	$(SWIFT) run --skip-build trove-bench --fts 2000 > .build/bench-fts-smoke.txt 2>&1 || (cat .build/bench-fts-smoke.txt; exit 1)
	@$(MAKE) --no-print-directory fuzz-corpus
	@$(MAKE) --no-print-directory docs > .build/docs-output.txt 2>&1 || (cat .build/docs-output.txt; exit 1)
	@python3 scripts/check-doc-comments.py | tail -n 1
	@echo "make test passed, every pass:"
	@for pass in "column clusters:test-output" "records layout:test-output-records" "encrypted files:test-output-encrypted" "process ids rewound:test-output-pids" "sync through PgBouncer:test-output-pgbouncer"; do \
		printf '  %-24s %s\n' "$${pass%%:*}" "$$(grep 'Test run with' .build/$${pass#*:}.txt | tail -n 1 | sed 's/^[^A-Za-z]*//')"; \
	done

# The tests under ThreadSanitizer and AddressSanitizer (separate build folders).
# The CLI and example tests run other binaries and are left out; XCTest's own
# runner leaks two small objects, so leak detection is off.
test-sanitize: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	TSAN_OPTIONS=halt_on_error=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build/tsan --skip CLITests --skip ExampleTests
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan
	ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build/asan --skip CLITests --skip ExampleTests

# The crash tests with many more kill points, more damaged files, more sync convergence rounds.
test-long: deps deps-postgres
	$(SWIFT) build --build-tests
	TROVE_CRASH_POINTS=2000 $(SWIFT) test --skip-build --filter CrashTests
	@# 500 damaged files, other damage each run (the seed is printed with any failure).
	TROVE_DAMAGE_ROUNDS=500 TROVE_DAMAGE_SEED=$$(date +%s) $(SWIFT) test --skip-build --filter DamagedFileTests
	@# The merge rules against their Swift model, and sync convergence: three device processes, kills, cut
	@# connections, server restarts (directly, then through PgBouncer).
	TROVE_MERGE_ROUNDS=5000 $(SWIFT) test --skip-build --filter MergeRulesDifferentialTests
	TROVE_CONVERGENCE_ROUNDS=5000 $(SWIFT) test --skip-build --filter ConvergenceTests
	TROVE_SYNC_PGBOUNCER=1 TROVE_CONVERGENCE_ROUNDS=5000 $(SWIFT) test --skip-build --filter ConvergenceTests

# libFuzzer on the query parser, the record decoder and operation sequences,
# FUZZ_SECONDS each; a crash lands in Fuzz/Crashes/ (turn it into a test).
fuzz: deps
	./Fuzz/build.sh
	@mkdir -p Fuzz/Crashes
	for target in predicate record column operations file; do \
		maxlen=1024; [ $$target = file ] && maxlen=131072; \
		SWIFT_BACKTRACE=enable=no .build/fuzz/fuzz-$$target -max_total_time=$(FUZZ_SECONDS) -max_len=$$maxlen \
			-artifact_prefix=Fuzz/Crashes/$$target- Fuzz/Corpus/$$target 2>&1 | grep -E "^#.*DONE|^Done|ERROR|SUMMARY"; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

# Replays every kept fuzz input (Fuzz/Corpus) through its target under
# AddressSanitizer: the corpus doubles as a regression suite, and the targets
# keep building as the code changes.
fuzz-corpus: deps
	@./Fuzz/build.sh
	@for target in predicate record column operations file; do \
		SWIFT_BACKTRACE=enable=no .build/fuzz/fuzz-$$target -runs=0 Fuzz/Corpus/$$target 2>&1 | grep -E "^Done|ERROR|SUMMARY" | sed "s/^/fuzz corpus $$target: /"; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done
	@# The targets that make databases, again with their types stored as records (column clusters are the default).
	@for target in predicate operations; do \
		TROVE_LAYOUT=records SWIFT_BACKTRACE=enable=no .build/fuzz/fuzz-$$target -runs=0 Fuzz/Corpus/$$target 2>&1 | grep -E "^Done|ERROR|SUMMARY" | sed "s/^/fuzz corpus $$target (records): /"; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

# Instruction counts of chosen rows against SQLite under callgrind (repeatable; a few minutes).
bench-instructions: deps
	@command -v valgrind >/dev/null || { SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq valgrind; }
	$(SWIFT) build -c release --product trove-bench
	./scripts/bench-instructions.sh $(DIVIDE)

# Trove beside raw SQLite and raw LMDB, release build; writes bench-results/latest.{json,svg}.
bench: deps
	$(SWIFT) build -c release --product trove-bench
	$(SWIFT) run -c release --skip-build trove-bench $(BENCH_ARGS)
	$(SWIFT) run -c release --skip-build trove-bench --fts

# The sync load run: many simulated devices against a throwaway PostgreSQL on
# loopback (release build). SYNC_BENCH_ARGS: --devices, --spaces, --changes,
# --bootstrap, --seconds.
SYNC_BENCH_ARGS ?=
bench-sync: deps deps-postgres
	$(SWIFT) build -c release --product trove-bench
	bash scripts/with-postgres.sh .build/release/trove-bench --sync $(SYNC_BENCH_ARGS)

# The DocC documentation of the Trove module (Sources/Trove/Trove.docc and
# the doc comments), with the docc that ships in the toolchain: symbol graphs
# from a build of their own, then `docc convert` into .build/docs (serve it
# with any web server, or run `docc preview`). Fails on a public declaration
# without a doc comment and on DocC warnings (broken links).
DOCC ?= $(shell command -v docc 2>/dev/null || echo $(dir $(shell command -v $(SWIFT)))docc)
docs: deps
	python3 scripts/check-doc-comments.py
	$(SWIFT) build --target Trove --scratch-path .build/docs-build \
		-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build/docs-build/symbol-graphs
	rm -rf .build/docs-graphs .build/docs && mkdir -p .build/docs-graphs
	cp .build/docs-build/symbol-graphs/Trove.symbols.json .build/docs-build/symbol-graphs/TroveStorage.symbols.json .build/docs-graphs/
	$(DOCC) convert Sources/Trove/Trove.docc --additional-symbol-graph-dir .build/docs-graphs --output-path .build/docs \
		--fallback-display-name Trove --fallback-bundle-identifier dev.trove.Trove --warnings-as-errors
	@echo "documentation: .build/docs (docc preview Sources/Trove/Trove.docc --additional-symbol-graph-dir .build/docs-graphs)"

format:
	$(SWIFT) format --in-place --recursive Sources Tests Examples Package.swift

clean:
	rm -rf .build $(DEMO_DIR)
