#!/usr/bin/env bash
# wine-tray.sh BINARY — the Windows desktop app's tray and window process, run for real under
# Wine and Xvfb, checked from screenshots and the app's log. Fails (exit 1, saying what) when:
#   - the notification-area icon does not appear in the Wine desktop's taskbar;
#   - a right click on it opens no menu;
#   - the menu's "Open Routinely" starts no window process, or no "Routinely" window appears;
#   - closing that window leaves its window process running;
#   - a left click on the icon does not open the window again (a new window process);
#   - the menu's Quit does not end the app after it drained ("desktop app stopped").
# BINARY is the desktop build (CC=x86_64-w64-mingw32-gcc CGO_ENABLED=1 GOOS=windows go build
# -tags "no_animations no_emoji"). Needs xvfb-run, ImageMagick (import, convert), xdotool, xwininfo and Wine.
# Environment: WINEPREFIX (required): a prefix whose system32 holds the bcryptprimitives.dll
# ProcessPrng shim that Go 1.22+ binaries need under Wine 8.0 (`make test-windows` makes one under
# build/wine/prefix); WINE (default /usr/lib/wine/wine64); OUT (default build/wine-tray): the
# screenshots tray.png, menu.png, window.png, closed.png and the app's log app.log.
#
# The app runs in a Wine virtual desktop ("explorer /desktop=NAME,WxH", which has a taskbar with
# a notification area, as a Windows desktop does) with --background, so the tray comes first.
set -euo pipefail
bin="$(realpath "${1:?usage: wine-tray.sh BINARY}")"
: "${WINEPREFIX:?set WINEPREFIX to a Wine prefix with the ProcessPrng shim (see the header)}"
WINE="${WINE:-/usr/lib/wine/wine64}"
OUT="$(realpath -m "${OUT:-build/wine-tray}")"
export WINE WINEPREFIX OUT
export WINEDEBUG="${WINEDEBUG:--all}" WINEDLLOVERRIDES="mscoree,mshtml="

if [ -z "${WINE_TRAY_INNER:-}" ]; then
  mkdir -p "$OUT"
  rm -f "$OUT"/*.png "$OUT"/app.log
  WINE_TRAY_INNER=1 exec xvfb-run -a -s "-screen 0 1024x768x24" "$0" "$bin"
fi

fail() {
  echo "wine-tray: FAIL: $*" >&2
  echo "--- app log (last 20 lines):" >&2
  tail -n 20 "$OUT/app.log" >&2 || true
  exit 1
}
# wait_log TEXT SECONDS: until the app's log has a line with TEXT.
wait_log() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    grep -qF -- "$1" "$OUT/app.log" 2>/dev/null && return 0
    sleep 0.5
  done
  return 1
}
# pixels FILE X Y W H: "x y r g b" (0–255) for every pixel of that region of FILE.
pixels() {
  convert "$1" -crop "$4x$5+$2+$3" +repage -depth 8 txt:- |
    sed -n 's/^\([0-9]*\),\([0-9]*\): (\([0-9]*\),\([0-9]*\),\([0-9]*\).*/\1 \2 \3 \4 \5/p' |
    awk -v ox="$2" -v oy="$3" '{ print $1 + ox, $2 + oy, $3, $4, $5 }'
}
# window_of NAME: the X window id of the app's top-level window titled NAME, if any.
window_of() {
  xwininfo -root -tree | awk -v n="\"$1\": (\"routinely.exe\"" 'index($0, n) { print $1; exit }'
}

home="$OUT/home"
rm -rf "$home"
mkdir -p "$home"
cat >"$home/routines.toml" <<'EOF'
[[routine]]
name = "tick"
every = "5s"
shell = "echo tick"
EOF
homew="$("$WINE" winepath -w "$home" 2>/dev/null | tr -d '\r')"
wineserver="$(dirname "$WINE")/wineserver"
trap '"$wineserver" -k 2>/dev/null || true' EXIT

"$WINE" explorer /desktop=routinely-tray,1024x768 "$bin" --home "$homew" --background \
  >"$OUT/app.log" 2>&1 &
wait_log "owning the routines" 120 || fail "the app did not start owning its routines within 120 s"
sleep 3 # the icon is set right after the tray starts; give the taskbar a moment to draw it

# The tray icon: the taskbar is the desktop's bottom 20 px; its notification area is at the
# right. The app's icon has a green check mark, which nothing else there has: its green pixels
# locate it.
import -window root "$OUT/tray.png"
read -r n cx cy < <(pixels "$OUT/tray.png" 864 748 160 20 |
  awk '$4 > 110 && $3 < 90 && $5 < 110 { n++; x += $1; y += $2 } END { if (n) printf "%d %d %d\n", n, x / n, y / n; else print 0, 0, 0 }')
[ "$n" -ge 4 ] || fail "no tray icon in the notification area (see $OUT/tray.png)"
echo "wine-tray: tray icon at $cx,$cy ($n check-mark pixels)"

# Its menu: a right click opens it above the icon (the taskbar is at the bottom). A menu is
# light grey/white where the desktop is blue: count the light pixels above the icon.
xdotool mousemove "$cx" "$cy" click 3
sleep 2
import -window root "$OUT/menu.png"
light=$(pixels "$OUT/menu.png" 824 548 200 200 | awk '$3 > 200 && $4 > 200 && $5 > 200 { n++ } END { print n + 0 }')
[ "$light" -gt 10000 ] || fail "a right click on the tray icon opened no menu (see $OUT/menu.png)"
# The menu's edges, from a column through it just left of the screen's right edge: its top is
# the first pixel there that is not the desktop's blue, its bottom the last before the taskbar.
read -r top bottom < <(pixels "$OUT/menu.png" 1010 300 1 448 |
  awk '!($5 > $3 + 60) { if (!t) t = $2; b = $2 } END { print t, b }')
echo "wine-tray: menu from y=$top to y=$bottom"

# Open Routinely: the menu's second row (the first is the status line, then a separator; rows
# are 17 px in Wine's default menu font).
xdotool mousemove $((cx - 120)) $((top + 37)) click 1
wait_log "window process started" 20 || fail "\"Open Routinely\" started no window process"
for ((i = 0; i < 120; i++)); do
  win="$(window_of Routinely)"
  [ -n "$win" ] && break
  sleep 0.5
done
[ -n "$win" ] || fail "the window process showed no \"Routinely\" window within 60 s"
sleep 5 # Fyne draws its first frame after the window is mapped
import -window root "$OUT/window.png"
echo "wine-tray: window $win shown"

# Close it as a person does (Alt+F4 on the focused window): the window process must exit.
xdotool mousemove 500 300 click 1
xdotool key alt+F4
wait_log "window process ended" 20 || fail "closing the window left its window process running"
sleep 1
[ -z "$(window_of Routinely)" ] || fail "the window is still there after its process ended"
grep -F "window process ended" "$OUT/app.log" | grep -q "level=INFO" ||
  fail "the window process did not end cleanly: $(grep -F 'window process ended' "$OUT/app.log")"
import -window root "$OUT/closed.png"
echo "wine-tray: window closed, its process ended"

# A left click on the icon opens the window again, in a new window process.
xdotool mousemove "$cx" "$cy" click 1
for ((i = 0; i < 40; i++)); do
  [ "$(grep -cF "window process started" "$OUT/app.log")" -ge 2 ] && break
  sleep 0.5
done
[ "$(grep -cF "window process started" "$OUT/app.log")" -ge 2 ] ||
  fail "a left click on the tray icon started no new window process"
echo "wine-tray: a left click opened the window again"

# Quit from the menu (its last row), with the window open: the app drains, releases and ends
# its window process too.
xdotool mousemove "$cx" "$cy" click 3
sleep 2
xdotool mousemove $((cx - 120)) $((bottom - 11)) click 1
wait_log "desktop app stopped" 60 || fail "the tray's Quit did not end the app"
echo "wine-tray: OK (screenshots in $OUT)"
