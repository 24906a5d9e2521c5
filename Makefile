SHELL := /bin/bash
# Trove: the two commands that matter are `make demo` and `make test`.
SWIFT ?= swift
DEMO_DIR := .trove-demo

.PHONY: demo test bench format deps build clean

# Installs liblmdb-dev when <lmdb.h> or the library is missing (Debian/Ubuntu, or Homebrew on macOS).
deps:
	@if ! pkg-config --exists lmdb 2>/dev/null && [ ! -f /usr/include/lmdb.h ]; then \
		echo "Installing LMDB (liblmdb-dev)..."; \
		if command -v apt-get >/dev/null 2>&1; then \
			SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
			$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq liblmdb-dev; \
		elif command -v brew >/dev/null 2>&1; then \
			brew install lmdb; \
		else \
			echo "Please install LMDB's development files (liblmdb-dev or lmdb)"; exit 1; \
		fi; \
	fi

build: deps
	$(SWIFT) build

# The photo diary from the seed documents on a default database file.
demo: deps
	$(SWIFT) build --product PhotoDiary
	@mkdir -p $(DEMO_DIR)
	$(SWIFT) run --skip-build PhotoDiary $(DEMO_DIR)/photos.trove
	$(SWIFT) build --product Inventory
	$(SWIFT) run --skip-build Inventory $(DEMO_DIR)/inventory.trove

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build 2>&1 | tee .build/test-output.txt; exit $${PIPESTATUS[0]}

bench: deps
	@echo "The benchmark suite (trove-bench) arrives with its own issue; nothing to run yet."

format:
	$(SWIFT) format --in-place --recursive Sources Tests Examples Package.swift

clean:
	rm -rf .build $(DEMO_DIR)
