#!/usr/bin/env bash
# test-windows.sh PKG... — `make test-windows`: cross-compile the tests of PKG for windows/amd64
# and run them under Wine, with go test's own -v output and result lines.
#
# Everything lives under build/wine/, made from nothing on the first run and reused after:
#   prefix/           a throw-away WINEPREFIX (about 10 s to create, no display needed)
#   bcryptprimitives.dll  the ProcessPrng shim (tools/wine/bcryptprimitives.c): Go 1.22+ binaries
#                     need it at start-up and Wine 8.0 has none; copied into prefix's system32
#   overlay/          the Go standard library patch for Wine 8.0's missing file-disposition class
#                     (see make_overlay below); it exists only in these test builds
#   routinely.exe     the nogui binary that internal/e2e drives (ROUTINELY_E2E_BIN)
#
# Environment: WINE (default: wine64 on PATH, else /usr/lib/wine/wine64), GO (default: go),
# WINDOWS_TEST_TIMEOUT (go test -timeout per package, default 5m), WINDOWS_TEST_FLAGS (more go
# test flags, e.g. -run). Exit status: go test's.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
GO="${GO:-go}"
out="$root/build/wine"
mkdir -p "$out"

WINE="${WINE:-$(command -v wine64 || echo /usr/lib/wine/wine64)}"
WINESERVER="${WINESERVER:-$(dirname "$WINE")/wineserver}"
[ -x "$WINESERVER" ] || WINESERVER="$(command -v wineserver || echo wineserver)"
[ -x "$WINE" ] || { echo "test-windows: no Wine at $WINE; run \`make deps-windows\` (installs wine64 and mingw)" >&2; exit 1; }
command -v x86_64-w64-mingw32-gcc >/dev/null || { echo "test-windows: no x86_64-w64-mingw32-gcc; run \`make deps-windows\`" >&2; exit 1; }

export WINE WINEPREFIX="$out/prefix"
# -all: Wine's fixme/err chatter would drown go test's output. mscoree,mshtml disabled: the first
# start would otherwise offer to download Mono and Gecko (a dialog, or a wait, with no display).
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# No display: the tests need none, and a DISPLAY from the caller's desktop would let Wine open
# windows there (wineboot's progress window).
unset DISPLAY WAYLAND_DISPLAY

# The shim, rebuilt when its source changes.
dll="$out/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ tools/wine/bcryptprimitives.c -nt "$dll" ]; then
  x86_64-w64-mingw32-gcc -shared -O2 -Wall -Werror -o "$dll" tools/wine/bcryptprimitives.c
fi

# The prefix, created once. wineboot returns before its helper processes have finished writing
# the registry; wineserver -w waits for them, so a half-made prefix is never marked ready.
if [ ! -f "$WINEPREFIX/.routinely-ready" ]; then
  rm -rf "$WINEPREFIX"
  echo "test-windows: creating the Wine prefix $WINEPREFIX"
  timeout 300 "$WINE" wineboot --init </dev/null >"$out/wineboot.log" 2>&1 ||
    { echo "test-windows: wineboot failed:" >&2; cat "$out/wineboot.log" >&2; exit 1; }
  timeout 120 "$WINESERVER" -w
  touch "$WINEPREFIX/.routinely-ready"
fi
cp "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
# One wineserver for the whole run, started here with no output to hand on: the first Wine process
# would otherwise start it (and Wine's services) holding that process's stdout and stderr, so a
# caller waiting for the output to end would wait for the wineserver.
"$WINESERVER" -p </dev/null >/dev/null 2>&1
timeout 120 "$WINE" cmd /c exit </dev/null >/dev/null 2>&1 || true
# End the wineserver this script's Wine processes shared however the run ends.
trap 'timeout 30 "$WINESERVER" -k 2>/dev/null || true' EXIT

# make_overlay writes a go build -overlay file that patches one function of the standard library
# for these test builds only. Go's os.RemoveAll (and so every t.TempDir cleanup) deletes each file
# with NtSetInformationFile(FileDispositionInformationEx, POSIX semantics), and falls back to the
# classic FileDispositionInformation only when that call returns STATUS_INVALID_INFO_CLASS,
# STATUS_INVALID_PARAMETER or STATUS_NOT_SUPPORTED, as Windows before 10 1607 and FAT volumes do.
# Wine 8.0 returns STATUS_NOT_IMPLEMENTED (0xC0000002, "Invalid function") for that class
# instead, so without the patch every RemoveAll of a non-empty directory fails under Wine, while
# os.Remove (DeleteFileW) works. The patch adds that status to the fallback list; on real Windows
# 10 and later the first call succeeds and the list is never consulted.
make_overlay() {
  local src dst
  src="$("$GO" env GOROOT)/src/internal/syscall/windows/at_windows.go"
  dst="$out/overlay/at_windows.go"
  mkdir -p "$out/overlay"
  sed 's|^\(\t\tSTATUS_NOT_SUPPORTED\):|\1, NTStatus(0xC0000002) /* STATUS_NOT_IMPLEMENTED: Wine 8.0 */:|' "$src" >"$dst"
  if cmp -s "$src" "$dst"; then
    echo "test-windows: $src no longer has the fallback list this script patches; update make_overlay" >&2
    exit 1
  fi
  printf '{"Replace":{"%s":"%s"}}\n' "$src" "$dst" >"$out/overlay.json"
}
make_overlay

# The binary internal/e2e drives, named as the Windows side sees it (Wine maps Z: to /).
CGO_ENABLED=0 GOOS=windows GOARCH=amd64 "$GO" build -overlay "$out/overlay.json" -tags nogui \
  -o "$out/routinely.exe" github.com/routinely/routinely
ROUTINELY_E2E_BIN="$("$WINE" winepath -w "$out/routinely.exe" 2>/dev/null | tr -d '\r')"
export ROUTINELY_E2E_BIN
# The desktop build (cgo, with the mingw cross compiler, as `make windows` builds it), for the
# login-item tests: the nogui build refuses to write a login item it could not start.
echo "test-windows: building the desktop routinely.exe (cgo; a few minutes on a cold build cache)"
mkdir -p "$out/desktop"
CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc GOOS=windows GOARCH=amd64 "$GO" build -tags "no_animations no_emoji" \
  -ldflags '-H windowsgui' -o "$out/desktop/routinely.exe" github.com/routinely/routinely
ROUTINELY_E2E_DESKTOP_BIN="$("$WINE" winepath -w "$out/desktop/routinely.exe" 2>/dev/null | tr -d '\r')"
export ROUTINELY_E2E_DESKTOP_BIN

echo "test-windows: $("$WINE" --version), tests run as windows/amd64 binaries"
# -short: starting a process costs Wine ~100 ms, so the 200-round contention race would take two
# minutes; its 20 short rounds take a few seconds (the same rule, fewer repetitions).
# -p 1: one test binary at a time; the multi-process tests start many Wine processes each, and
# two such packages at once on a 2-core machine only make the timing margins thinner.
rc=0
# shellcheck disable=SC2086
CGO_ENABLED=0 GOOS=windows GOARCH=amd64 timeout -k 30 1200 "$GO" test -exec "$root/tools/wine/exec.sh" \
  -overlay "$out/overlay.json" -tags nogui -count=1 -p 1 -short -v -timeout "${WINDOWS_TEST_TIMEOUT:-5m}" \
  ${WINDOWS_TEST_FLAGS:-} "$@" || rc=$?

# The same binary driven from the Linux side, as a person at a shell would: only from here can
# the owner's Wine process be SIGKILLed (internal/e2e/wine_linux_test.go, built with -tags wine).
if [ -z "${WINDOWS_TEST_FLAGS:-}" ] && [[ " $* " == *" ./internal/e2e/... "* || " $* " == *" ./internal/e2e "* ]]; then
  ROUTINELY_E2E_WINE_EXE="$out/routinely.exe" ROUTINELY_E2E_WINE_DESKTOP_EXE="$out/desktop/routinely.exe" timeout -k 30 600 "$GO" test -tags wine -count=1 -v \
    -timeout 5m -run '^TestWine' ./internal/e2e || rc=$?
fi

# The desktop app's tray and window process under Wine and Xvfb (its own virtual desktop): the
# notification-area icon, its menu, open/close/reopen of the window, Quit.
if [ -z "${WINDOWS_TEST_FLAGS:-}" ]; then
  echo "test-windows: the desktop app under Wine + Xvfb (app/desktop/testdata/wine-tray.sh)"
  OUT="$root/build/wine-tray" timeout -k 10 180 bash "$root/app/desktop/testdata/wine-tray.sh" "$out/desktop/routinely.exe" || rc=$?
fi
exit "$rc"
