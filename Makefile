# StreamKit: `make demo` runs the main job, `make test` runs the test suite.
# Both install missing Debian packages first (scripts/install-deps.sh).

SWIFT ?= swift
# Warnings are errors in every build the Makefile makes.
STRICT := -Xswiftc -warnings-as-errors

.PHONY: all deps build release install test demo consumer format lint clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(STRICT)

release: deps
	$(SWIFT) build -c release $(STRICT) --product streamkit

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the binary, bash, zsh and fish completions and the
# manual page, the last four written by the binary itself from its commands.
PREFIX ?= /usr/local
BIN := .build/release/streamkit
SHARE := $(DESTDIR)$(PREFIX)/share

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/man/man1 $(SHARE)/bash-completion/completions \
		$(SHARE)/zsh/site-functions $(SHARE)/fish/vendor_completions.d
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/streamkit
	$(BIN) completions bash > $(SHARE)/bash-completion/completions/streamkit
	$(BIN) completions zsh > $(SHARE)/zsh/site-functions/_streamkit
	$(BIN) completions fish > $(SHARE)/fish/vendor_completions.d/streamkit.fish
	$(BIN) manpage > $(SHARE)/man/man1/streamkit.1

# At most this many test cases run at once. Swift Testing otherwise starts every one together,
# and their first steps queue on the cooperative pool (a thread a core): a task waking from a
# 10 ms sleep then waited 4 to 8 s behind them, and tests with time bounds failed although
# nothing was wrong. With 24 the worst wait measured was 1.5 s and the run took no longer.
TEST_WIDTH ?= 24

# The release build too: the memory figures of the 1 GiB download test are the release build's.
test: deps lint
	$(SWIFT) build --build-tests $(STRICT)
	$(SWIFT) build -c release $(STRICT) --product streamkit
	$(SWIFT) build -c release $(STRICT) --product bench-queue
	$(SWIFT) build -c release $(STRICT) --product bench-live
	$(SWIFT) test --skip-build --experimental-maximum-parallelization-width $(TEST_WIDTH)

# An app with targets of its own named Core and HTTP, depending on StreamKit by path: builds only
# because every StreamKit target is prefixed. Runs a few lines of README's API on 127.0.0.1.
consumer: deps
	$(SWIFT) build --package-path Tests/ConsumerPackage $(STRICT)
	Tests/ConsumerPackage/.build/debug/Consumer

# The whole product on this machine, offline: `streamkit demo` (docs/CLI.md).
demo: release
	.build/release/streamkit demo

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests

clean:
	$(SWIFT) package clean
