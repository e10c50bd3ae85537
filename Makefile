# Routinely — build, test, bench, package. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
BIN := build/routinely
BIN_NOGUI := build/routinely-nogui
# The hub server is a program of its own, beside the others: `routinely hub` hands over to it, so
# that no other routinely process links nats-server (cmd/routinely-hub).
HUB_BIN := build/routinely-hub
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/routinely/routinely/app/cli.Version=$(VERSION)
# The desktop build turns Fyne's animations off: a focused entry's blinking cursor alone costs a
# few % of a core while the window is shown (app/desktop/testdata/footprint.sh). no_emoji leaves
# out Fyne's bundled emoji font, which it parses again for each text style (25 MB of the window
# process; docs/design.md §6.3): emoji come from the system's fonts.
GUI_TAGS := no_animations no_emoji
# fyne package adds tags of its own to -tags with commas, and go refuses a list with both.
comma := ,
GUI_TAGS_CSV := $(subst $() $(),$(comma),$(strip $(GUI_TAGS)))
EXAMPLE_HOME ?= $(CURDIR)/build/example-home
TORTURE_DURATION ?= 120s
# What the cgo desktop build needs, and what the tests add (Xvfb, D-Bus, a tray watcher, …).
APT_PACKAGES_BUILD := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
	libxinerama-dev libxi-dev libxxf86vm-dev
APT_PACKAGES_TEST := xvfb xauth dbus dbus-x11 imagemagick xdotool \
	haskell-status-notifier-item-utils dunst desktop-file-utils systemd tzdata xz-utils
APT_PACKAGES := $(APT_PACKAGES_BUILD) $(APT_PACKAGES_TEST)
# `make windows` needs the mingw cross compiler; `make test-windows` needs it (for its Wine shim
# and the desktop routinely.exe), Wine, and Xvfb with its tools for the tray check under Wine:
# `make deps-windows` installs them.
APT_PACKAGES_WINDOWS := gcc-mingw-w64-x86-64-win32 wine64 xvfb xauth xdotool imagemagick x11-utils
# What `make test-windows` runs as Windows test binaries under Wine (it then checks the desktop
# app's tray and window under Wine + Xvfb with app/desktop/testdata/wine-tray.sh).
WINDOWS_TEST_PKGS := ./ownership/... ./scheduler/... ./app/autostart/... ./app/cli/... ./app/owning/... \
	./app/paths/... ./internal/atomicfile/... ./internal/proctest/... ./internal/e2e/...

.PHONY: help deps deps-windows ensure-build-deps ensure-test-deps ensure-windows-deps build build-nogui build-hub run daemon test test-unit test-gui test-windows bench footprint torture lint package windows clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: ## install the system packages (Debian/Ubuntu, as root)
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PACKAGES)

deps-windows: ## install mingw and Wine for `make windows` and `make test-windows` (Debian/Ubuntu, as root)
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PACKAGES_WINDOWS)

# `make run` and `make test` install what is missing themselves (a no-op when all is there).
ensure-build-deps:
	@bash tools/ensure-deps.sh $(APT_PACKAGES_BUILD)

ensure-test-deps:
	@bash tools/ensure-deps.sh $(APT_PACKAGES)

ensure-windows-deps:
	@bash tools/ensure-deps.sh $(APT_PACKAGES_WINDOWS)

build: ensure-build-deps build-hub ## desktop + CLI binary (cgo, needs the GL/X11 headers), and routinely-hub
	$(GO) build -tags '$(GUI_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

build-nogui: build-hub ## CLI-only binary, no cgo, and routinely-hub
	CGO_ENABLED=0 $(GO) build -tags nogui -ldflags '$(LDFLAGS)' -o $(BIN_NOGUI) .

build-hub: ## the hub server that `routinely hub` runs (no cgo)
	CGO_ENABLED=0 $(GO) build -o $(HUB_BIN) ./cmd/routinely-hub

# Copied once, then yours to edit: no prerequisite, so a newer examples/ never overwrites your edits.
$(EXAMPLE_HOME)/routines.toml:
	mkdir -p $(EXAMPLE_HOME) && chmod 700 $(EXAMPLE_HOME)
	sed 's#@HOME@#$(EXAMPLE_HOME)#g' examples/routines.toml > $@ && chmod 600 $@

# The example page watch reads this page through `routinely dev-serve`; copied once, then yours to edit.
$(EXAMPLE_HOME)/site/index.html:
	mkdir -p $(EXAMPLE_HOME)/site && cp examples/site/index.html $@

EXAMPLE_FILES := $(EXAMPLE_HOME)/routines.toml $(EXAMPLE_HOME)/site/index.html

run: build $(EXAMPLE_FILES) ## start the desktop app on the example routines
	./$(BIN) dev-serve $(EXAMPLE_HOME)/site & trap 'kill $$! 2>/dev/null' EXIT; \
	ROUTINELY_HOME=$(EXAMPLE_HOME) ./$(BIN)

daemon: build-nogui $(EXAMPLE_FILES) ## start the headless daemon on the example routines
	./$(BIN_NOGUI) dev-serve $(EXAMPLE_HOME)/site & trap 'kill $$! 2>/dev/null' EXIT; \
	ROUTINELY_HOME=$(EXAMPLE_HOME) ./$(BIN_NOGUI) daemon

test: ensure-test-deps lint test-unit test-gui test-windows ## the whole suite: vet, unit + multi-process tests with -race, desktop checks, the Windows half under Wine
	@echo "make test: all passed"

test-unit: ## unit and multi-process tests with -race, then a 30 s chaos run
	$(GO) test -race -count=1 -timeout 20m -skip '^TestTorture$$' ./...
	$(MAKE) torture TORTURE_DURATION=30s

test-gui: build ## the desktop app under Xvfb + D-Bus (tray, takeover prompt, screenshot)
	xvfb-run -a -s "-screen 0 1024x768x24 -nolisten tcp" dbus-run-session -- bash app/desktop/testdata/gui-test.sh ./$(BIN) build/gui-test

test-windows: ensure-windows-deps ## the ownership, scheduler, CLI, autostart and e2e tests as Windows binaries under Wine
	GO=$(GO) bash tools/wine/test-windows.sh $(WINDOWS_TEST_PKGS)

bench: build-nogui ## benchmarks; prints the README performance table
	$(GO) run ./internal/bench -bin ./$(BIN_NOGUI) -readme README.md

FOOTPRINT_SECONDS ?= 300
footprint: build ## desktop RSS/CPU under Xvfb: tray idle, window shown (app + window process), after closing it, bare-Fyne baseline (in parallel)
	$(GO) build -tags '$(GUI_TAGS)' -o build/fyneidle ./internal/bench/fyneidle
	rc=0; ps=(); for st in idle shown closed; do \
		bash app/desktop/testdata/footprint.sh ./$(BIN) $(FOOTPRINT_SECONDS) $$st >build/footprint-$$st.txt 2>&1 & ps+=($$!); done; \
	bash app/desktop/testdata/footprint.sh ./build/fyneidle $(FOOTPRINT_SECONDS) baseline >build/footprint-baseline.txt 2>&1 & ps+=($$!); \
	for p in "$${ps[@]}"; do wait $$p || rc=1; done; \
	for f in idle shown closed baseline; do echo "== $$f"; grep -E '^(RSS|CPU|5s after)' build/footprint-$$f.txt || tail -n 5 build/footprint-$$f.txt; done; exit $$rc

torture: build-nogui ## chaos test against the real binary (TORTURE_DURATION=120s; TORTURE_MODE=devices: 3 devices on one hub)
	ROUTINELY_BIN=$(CURDIR)/$(BIN_NOGUI) ROUTINELY_TORTURE_DURATION=$(TORTURE_DURATION) \
		$(GO) test -count=1 -timeout 30m -v -run '^$(if $(filter devices,$(TORTURE_MODE)),TestTortureDevices,TestTorture)$$' ./internal/torture/

lint: ## gofmt, go vet (default, nogui, darwin, windows), the macOS desktop type-checked, staticcheck if installed
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet -tags nogui ./...
	CGO_ENABLED=0 GOOS=darwin $(GO) vet -tags nogui ./ownership/... ./scheduler/... ./app/autostart/... ./app/cli/...
	CGO_ENABLED=0 GOOS=windows $(GO) vet -tags nogui ./ownership/... ./scheduler/... ./app/autostart/... ./app/cli/...
	@# The desktop app for macOS cannot be built here (it needs Apple's SDK): type-check it instead.
	$(GO) build -o build/crosscheck ./tools/crosscheck
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=1 build/crosscheck -tags '$(GUI_TAGS)' ./...
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed: skipped"; fi

package: ## Linux release tar.xz via fyne package (routinely, routinely-hub, .desktop entry, icon)
	$(GO) install fyne.io/tools/cmd/fyne@v1.7.4
	@# fyne's -release bumps [Details] Build and rewrites FyneApp.toml, and it writes
	@# fyne_metadata_init.go into the source tree while it builds: the trap puts the committed
	@# file back and removes the generated one however the command ends (Ctrl-C included).
	mkdir -p build && rm -f build/Routinely.tar.xz && cp FyneApp.toml build/FyneApp.toml.keep
	trap 'mv -f build/FyneApp.toml.keep FyneApp.toml; rm -f fyne_metadata_init.go' EXIT; trap 'exit 130' INT TERM HUP; \
		GOFLAGS='-ldflags=-X=github.com/routinely/routinely/app/cli.Version=$(VERSION)' \
		$$($(GO) env GOPATH)/bin/fyne package -os linux -release -tags '$(GUI_TAGS_CSV)'
	mv -f Routinely.tar.xz build/Routinely.fyne.tar.xz
	@tar -tJf build/Routinely.fyne.tar.xz | grep -qE 'bin/routinely$$' && \
		tar -tJf build/Routinely.fyne.tar.xz | grep -qE 'applications/io\.routinely\.app\.desktop$$' && \
		tar -tJf build/Routinely.fyne.tar.xz | grep -qE 'pixmaps/io\.routinely\.app\.png$$' || \
		{ echo "fyne's tarball lacks the binary, .desktop entry or icon"; exit 1; }
	@# fyne packages one program; `routinely hub` needs routinely-hub beside it (stripped, as
	@# fyne's -release strips routinely). build/Routinely.tar.xz appears only once that is done.
	CGO_ENABLED=0 $(GO) build -ldflags '-s -w' -o build/package/routinely-hub ./cmd/routinely-hub
	bash packaging/linux/add-hub.sh build/Routinely.fyne.tar.xz build/package/routinely-hub build/Routinely.tar.xz
	rm -f build/Routinely.fyne.tar.xz
	@echo "built build/Routinely.tar.xz"

windows: ## cross-build routinely.exe and routinely-hub.exe (needs `make deps-windows`)
	GOOS=windows CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc $(GO) build -tags '$(GUI_TAGS)' -ldflags '$(LDFLAGS) -H windowsgui' -o build/routinely.exe .
	GOOS=windows CGO_ENABLED=0 $(GO) build -o build/routinely-hub.exe ./cmd/routinely-hub

clean: ## remove build outputs
	rm -rf build
