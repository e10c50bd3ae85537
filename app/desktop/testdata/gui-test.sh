#!/usr/bin/env bash
# Real-session test of the desktop app: tray over D-Bus, takeover prompt, screenshots.
# Run inside a virtual display and a private session bus (what `make test-gui` does):
#   xvfb-run -a -s "-screen 0 1024x768x24 -nolisten tcp" dbus-run-session -- \
#     bash app/desktop/testdata/gui-test.sh ./build/routinely build/gui-test
# Exits non-zero on the first failed assertion. Screenshots and logs stay in OUTDIR.
set -Eeuo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR   # no silent exit under set -e
BIN=$(realpath "${1:?usage: gui-test.sh BINARY OUTDIR}")
OUT=${2:-build/gui-test}
rm -rf "$OUT"; mkdir -p "$OUT"; OUT=$(realpath "$OUT")
export LANG=C.UTF-8            # the app must cope with the C locale by itself (no LANGUAGE here)
unset LANGUAGE
HOME_DIR=$(mktemp -d /tmp/routinely-gui.XXXXXX); chmod 700 "$HOME_DIR"
export ROUTINELY_HOME=$HOME_DIR
export XDG_CONFIG_HOME=$HOME_DIR/xdg-config   # the login item goes here, not into the real ~/.config

pids=()
# stop_pid PID [SECS]: SIGTERM, then SIGKILL if PID has not exited within SECS (default 10); reaps
# it. Returns 1 when SIGKILL was needed. No wait in this script is without a deadline.
stop_pid() {
	local pid=$1 secs=${2:-10} i
	kill "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
	for ((i = 0; i < secs * 5; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 1; fi
	wait "$pid" 2>/dev/null
	return 0
}
cleanup() {
	trap - EXIT
	local i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}" 5 || true; done
	rm -rf "$HOME_DIR" "${NOTRAY_HOME:-}" "${PROMPT_HOME:-}" "${IDLE_HOME:-}" "${VIEWS_HOME:-}"
}
trap cleanup EXIT
trap 'exit 143' TERM INT   # so cleanup runs on the watchdog's SIGTERM too
# A watchdog for the whole script (every wait below has its own deadline; this is the backstop).
# Its sleep must die with it (a leftover sleep would hold the caller's pipes open).
(
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	sleep "${GUI_TEST_DEADLINE:-330}" >/dev/null 2>&1 & s=$!
	wait "$s" && { echo "FAIL: gui-test.sh still running after ${GUI_TEST_DEADLINE:-330} s" >&2; kill -TERM $$; }
) &
pids+=($!)
# fail MESSAGE: say what failed, with a screenshot and the logs a reader needs: the main app's and
# those of the processes the failing check started (its logs written in the last 30 s).
fail() {
	echo "FAIL: $*" >&2
	timeout 10 import -window root "$OUT/failure.png" 2>/dev/null || true
	local f
	for f in $(find "$OUT" -maxdepth 1 -name '*.log' ! -name 'notify*.log' ! -name '*watcher.log' -newermt '-30 seconds' 2>/dev/null); do
		[ "$f" = "$OUT/app.log" ] && continue
		echo "--- $(basename "$f") (last 20 lines)" >&2; tail -n 20 "$f" >&2 || true
	done
	echo "--- app.log (last 30 lines)" >&2; tail -n 30 "$OUT/app.log" >&2 || true
	exit 1
}
pass() { echo "ok: $*"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_for SECONDS CMD...: retry CMD every 0.2 s until it succeeds or SECONDS (wall clock) pass.
# Every command it retries is itself bounded (dbus-send --reply-timeout, timeout).
wait_for() {
	local end=$(( $(now_ms) + $1 * 1000 )); shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.2
	done
}
DBUS_SEND=(timeout 10 dbus-send --session --print-reply --reply-timeout=3000)
XDOTOOL=(timeout 5 xdotool)

sni_get() { "${DBUS_SEND[@]}" --dest=org.kde.StatusNotifierWatcher /StatusNotifierWatcher \
	org.freedesktop.DBus.Properties.Get string:org.kde.StatusNotifierWatcher "string:$1"; }
# Pipelines below never stop reading early (no head, grep -q or awk exit): with pipefail, a
# writer killed by SIGPIPE would fail the whole script at random.
tray_bus() { sni_get RegisteredStatusNotifierItems 2>/dev/null | awk 'match($0, /":[0-9.]+/) && !b {b=substr($0, RSTART+1, RLENGTH-1)} END{print b}'; }
# The item's Menu property names the dbusmenu object (systray v1.12: /StatusNotifierItem/menu).
menu_path() { "${DBUS_SEND[@]}" --dest="$BUS" /StatusNotifierItem org.freedesktop.DBus.Properties.Get \
	string:org.kde.StatusNotifierItem string:Menu | grep -o 'object path "[^"]*"' | cut -d'"' -f2; }
menu_layout() { "${DBUS_SEND[@]}" --dest="$BUS" "$MENU" com.canonical.dbusmenu.GetLayout \
	int32:0 int32:-1 array:string:; }
# menu_id PREFIX: the dbusmenu id of the item whose label starts with PREFIX (ids go stale after
# every menu rebuild, so look them up each time).
menu_id() { menu_layout | awk -v want="$1" '/struct \{/{s=1;next} s&&/int32 [0-9]+/{id=$2;s=0}
	/string "label"/{getline; sub(/^[^"]*"/, ""); if (index($0, want) == 1 && !found) found=id} END{print found}'; }
menu_labels() { menu_layout | awk '/string "label"/{getline; sub(/^[^"]*"/, ""); sub(/"[^"]*$/, ""); print}'; }
menu_event() { "${DBUS_SEND[@]}" --dest="$BUS" "$MENU" com.canonical.dbusmenu.Event \
	"int32:$1" string:clicked variant:int32:0 uint32:0 >/dev/null; }
click() {
	local id; id=$(menu_id "$1"); [ -n "$id" ] || fail "no tray item labelled '$1' (menu: $(menu_labels | paste -sd '|'))"
	menu_event "$id" || fail "clicking '$1' (id $id) over D-Bus failed"
}
# click_until SECS LABEL CMD...: click the tray item LABEL until CMD holds, looking its id up
# afresh and clicking again every 2 s: a click on an id that a menu rebuild has just replaced is
# dropped by the tray (systray logs "no menu item with ID"). Fails after SECS.
click_until() {
	local end=$(( $(now_ms) + $1 * 1000 )) label=$2 id; shift 2
	while :; do
		id=$(menu_id "$label")
		[ -n "$id" ] && { menu_event "$id" || true; }
		wait_for 2 "$@" && return 0
		[ "$(now_ms)" -lt "$end" ] || return 1
	done
}
# icon_sum: a checksum of the tray icon's pixels (its look: owning, standby or warning).
icon_sum() { "${DBUS_SEND[@]}" --dest="$BUS" /StatusNotifierItem org.freedesktop.DBus.Properties.Get \
	string:org.kde.StatusNotifierItem string:IconPixmap | sed 1d | md5sum | cut -c1-12; }
icon_is() { [ "$(icon_sum)" = "$1" ]; }
icon_is_not() { [ "$(icon_sum)" != "$1" ]; }
has_label() { menu_labels | grep -- "^$1" >/dev/null; }
status_line() { menu_labels | awk 'NR==1'; }
status_json() { timeout 10 "$BIN" status --json 2>/dev/null || true; }   # exits 3/4 without a healthy owner
# owner_field NAME: a field of the current owner from status --json ("" when nobody holds the guard).
# (status --json is indented: top-level keys at 2 spaces, the owner's at 4; awk only, no jq/python.)
owner_field() { status_json | awk -v k="\"$1\":" '/^  "held": true/{held=1} /^  "owner": \{/{in_o=1; next}
	in_o && /^  [}]/{in_o=0} in_o && $1==k {v=$2; gsub(/[",]/, "", v)} END{if (held) print v}'; }
owner_role() { owner_field role; }
owner_pid() { owner_field pid; }
role_is() { [ "$(owner_role)" = "$1" ]; }

# 20 routines (the footprint script uses the same shape): a heartbeat every 2 s and quiet ones.
{
	echo '[[routine]]'; echo 'name = "tick"'; echo 'every = "2s"'; echo 'shell = "echo tick"'; echo
	for i in $(seq 2 20); do
		echo '[[routine]]'; echo "name = \"quiet-$i\""; echo 'every = "1h"'; echo 'run = ["true"]'; echo
	done
} >"$HOME_DIR/routines.toml"
chmod 600 "$HOME_DIR/routines.toml"

# The virtual display must answer before anything starts (GLFW panics on a display it cannot open).
wait_for 10 "${XDOTOOL[@]}" getdisplaygeometry || fail "the X display '${DISPLAY:-}' does not answer"

# 0. No StatusNotifierWatcher on the bus: a --background start must warn and show its window
#    rather than run invisibly. (Own profile, so it does not touch the main test's.) SIGTERM
#    then ends it: it drains, releases and exits by itself.
NOTRAY_HOME=$(mktemp -d /tmp/routinely-notray.XXXXXX); chmod 700 "$NOTRAY_HOME"
ROUTINELY_HOME=$NOTRAY_HOME "$BIN" --background >"$OUT/notray.log" 2>&1 & NOTRAY=$!; pids+=($NOTRAY)
notray_window() { "${XDOTOOL[@]}" search --onlyvisible --name '^Routinely$'; }
wait_for 15 notray_window || { cat "$OUT/notray.log" >&2; fail "no window shown without a tray host"; }
grep -q 'no system tray.*AppIndicator' "$OUT/notray.log" || fail "no clear warning naming the AppIndicator extension"
pass "without a tray host: warning logged and window shown"
stop_pid "$NOTRAY" 10 || { tail -n 20 "$OUT/notray.log" >&2; fail "the no-tray app did not exit within 10 s of SIGTERM"; }
grep -q 'desktop app stopped' "$OUT/notray.log" || fail "the no-tray app did not stop cleanly on SIGTERM"
rm -rf "$NOTRAY_HOME"
wait_for 5 sh -c '! timeout 5 xdotool search --onlyvisible --name "^Routinely$"' || fail "the no-tray app's window did not go away"
pass "SIGTERM: the no-tray app stopped cleanly"

# The tray watcher must be up BEFORE the app (else systray never registers).
status-notifier-watcher >"$OUT/watcher.log" 2>&1 & pids+=($!)
wait_for 10 sni_get RegisteredStatusNotifierItems || fail "status-notifier-watcher did not start"
dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
	>"$OUT/notify.log" 2>&1 & pids+=($!)
sleep 0.5

# 1. The app starts in the background, owns, and registers its tray item.
"$BIN" --background >"$OUT/app.log" 2>&1 & APP=$!; pids+=($APP)
tray_registered() { [ -n "$(tray_bus)" ]; }
wait_for 20 tray_registered || fail "no tray item registered"
BUS=$(tray_bus); MENU=$(menu_path)
[ -n "$MENU" ] || fail "the tray item has no menu (GNOME would hide it)"
pass "tray item registered on $BUS with menu $MENU"
if grep -q "Error parsing user locale" "$OUT/app.log"; then fail "Fyne could not parse the C locale (LANGUAGE not set in code)"; fi
wait_for 15 role_is desktop || fail "the app does not own the routines (status: $(status_json | head -c 400))"
[ "$(owner_pid)" = "$APP" ] || fail "owner pid $(owner_pid), want the app's $APP"
pass "the app owns (pid $APP)"
wait_for 5 has_label "Owner: this app" || fail "tray status line: $(status_line)"
pass "tray says: $(status_line)"
# The owning look is read once nothing asks for attention: status exits 0 only for a healthy
# owner, and the app's tray follows within its refresh (a journal still being created, say,
# shows the warning look for a moment).
healthy() { timeout 10 "$BIN" status >/dev/null 2>&1; }
wait_for 15 healthy || fail "the owner is not healthy: $(timeout 10 "$BIN" status 2>&1 | head -c 400)"
icon_settled() { local a; a=$(icon_sum); sleep 1.5; [ "$(icon_sum)" = "$a" ]; }
wait_for 10 icon_settled || fail "the tray icon keeps changing while the app owns and is healthy"
ICON_OWNING=$(icon_sum)
# gl_loaded PID: the process has loaded Mesa's GLX driver (what an OpenGL window costs: ~60 MB
# under Xvfb). The tray needs none, so a --background app must not load it before its window.
gl_loaded() { grep -E 'libGLX_mesa|_dri\.so' "/proc/$1/maps" >/dev/null; }
# window_proc PID: the pid of app PID's window process (a child running the same binary; the
# window lives there, so the app itself never loads OpenGL), "" while none runs.
window_proc() {
	local p exe; exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 0
	for p in $(pgrep -P "$1" || true); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$exe" ] && { echo "$p"; return 0; }
	done
	return 0
}
# app_window PID: the visible window of app PID (shown by its window process).
app_window() { local w; w=$(window_proc "$1"); [ -n "$w" ] && "${XDOTOOL[@]}" search --onlyvisible --pid "$w" --name '^Routinely$'; }
if gl_loaded "$APP"; then fail "the --background app loaded OpenGL before its window was ever opened"; fi
pass "no OpenGL loaded while the window was never opened"

# 2. --background showed no window; Open Routinely in the tray menu shows it. Screenshot.
if notray_window >/dev/null 2>&1; then fail "--background start showed the window"; fi
click_until 10 "Open Routinely" notray_window || fail "no window after Open Routinely"
WINPROC=$(window_proc "$APP")
[ -n "$WINPROC" ] || fail "the window is shown but the app has no window process"
gl_loaded "$WINPROC" || fail "the window is shown but Mesa is not loaded in its process (is gl_loaded still a valid probe?)"
if gl_loaded "$APP"; then fail "the app loaded OpenGL: its window belongs in the window process"; fi
sleep 1.5
timeout 20 import -window root "$OUT/window.png"; pass "window shown (screenshot window.png)"

# 2b. Start at login in the tray menu writes the login item and ticks the item; a second click
#     removes it.
autostart_entry() { compgen -G "$XDG_CONFIG_HOME/autostart/*.desktop" >/dev/null; }
no_autostart_entry() { ! autostart_entry; }
# auto_ticked: the "Start at login" item has toggle-state 1 (dbusmenu properties come in any order).
auto_ticked() { menu_layout | awk -v want="Start at login" '
	function done() { if (index(lbl, want) && ts) found = 1; lbl = ""; ts = 0 }
	/struct \{/ { done() } /string "label"/ { getline; lbl = $0 }
	/string "toggle-state"/ { getline; if ($0 ~ /int32 1$/) ts = 1 }
	END { done(); exit !found }'; }
auto_unticked() { ! auto_ticked; }
click_until 10 "Start at login" autostart_entry || fail "no login item under $XDG_CONFIG_HOME/autostart after Start at login"
grep -q -- "--background" "$XDG_CONFIG_HOME"/autostart/*.desktop || fail "the login item does not start the app with --background"
wait_for 5 auto_ticked || fail "the Start at login item is not ticked after enabling it"
click_until 10 "Start at login" no_autostart_entry || fail "the login item is still there after unticking Start at login"
wait_for 5 auto_unticked || fail "the Start at login item is still ticked after disabling it"
pass "Start at login: the tray item writes and removes the login item and shows its state"

# 3. A daemon asks to take over: notification, tray Approve, daemon owns.
"$BIN" daemon --takeover >"$OUT/daemon.log" 2>&1 & DAEMON=$!; pids+=($DAEMON)
wait_for 5 test -s "$HOME_DIR/takeover.json" || fail "the daemon wrote no takeover request"
requested=$(date -d "$(grep -o '"requested_at": *"[^"]*"' "$HOME_DIR/takeover.json" | cut -d'"' -f4)" +%s.%N)
wait_for 5 grep -q 'asks to take over your routines' "$OUT/notify.log" || fail "no takeover notification (Notify) within 5 s"
notified=$(grep -B5 'asks to take over your routines' "$OUT/notify.log" | grep -o 'method call time=[0-9.]*' | tail -1 | cut -d= -f2)
delay=$(awk -v a="$notified" -v b="$requested" 'BEGIN{printf "%.3f", a - b}')
awk -v d="$delay" 'BEGIN{exit !(d <= 1.0)}' || fail "the notification came ${delay}s after the request (want <= 1 s)"
pass "notification ${delay}s after the request: $(grep -m1 -o 'A Routinely daemon (pid [0-9]*) asks to take over your routines' "$OUT/notify.log")"
wait_for 3 has_label "Approve takeover" || fail "no Approve item in the tray menu"
has_label "Deny" || fail "no Deny item in the tray menu"
wait_for 2 icon_is_not "$ICON_OWNING" || fail "the tray icon did not change to its warning look"
ICON_WARNING=$(icon_sum)
pass "tray icon turned to its warning look"
sleep 1
timeout 20 import -window root "$OUT/takeover-prompt.png"; pass "takeover prompt (screenshot takeover-prompt.png)"
no_approve() { ! has_label "Approve takeover"; }
click_until 10 "Approve takeover" no_approve || fail "the Approve item did not go away after clicking it"
wait_for 15 role_is daemon || fail "the daemon does not own after approval (status: $(status_json | head -c 400))"
[ "$(owner_pid)" = "$DAEMON" ] || fail "owner pid $(owner_pid), want the daemon's $DAEMON"
pass "the daemon owns after approval"
kill -0 "$APP" || fail "the app exited after yielding"
wait_for 5 has_label "Owner: daemon pid $DAEMON" || fail "tray does not show the daemon as owner: $(status_line)"
pass "tray says: $(status_line)"
icon_is_not "$ICON_OWNING" && icon_is_not "$ICON_WARNING" || fail "the tray icon does not show the standby look"
pass "tray icon shows the standby look"
sleep 1
timeout 20 import -window root "$OUT/standby.png"

# 3b. Take back from the tray: the app asks the daemon, whose --on-takeover policy (allow, the
#     default) hands the routines back; the daemon exits 0 and the app owns again.
wait_for 3 has_label "Take back" || fail "no Take back item in the tray menu while the daemon owns"
app_owns() { role_is desktop && [ "$(owner_pid)" = "$APP" ]; }
click_until 15 "Take back" app_owns || fail "the app does not own after Take back (status: $(status_json | head -c 400))"
for _ in $(seq 50); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.2; done
kill -0 "$DAEMON" 2>/dev/null && fail "the daemon did not exit within 10 s of handing the routines back"
rc=0; wait "$DAEMON" || rc=$?
[ "$rc" = 0 ] || fail "the daemon exited $rc after handing over, want 0 (log: $(tail -n 5 "$OUT/daemon.log"))"
wait_for 5 has_label "Owner: this app" || fail "tray status line after Take back: $(status_line)"
wait_for 3 icon_is "$ICON_OWNING" || fail "the tray icon did not return to the owning look after Take back"
pass "Take back: the daemon handed over (exit 0) and the app owns again"

# 3c. Another daemon takes over (approved in the tray), for the SIGKILL case below.
"$BIN" daemon --takeover >"$OUT/daemon2.log" 2>&1 & DAEMON=$!; pids+=($DAEMON)
wait_for 5 has_label "Approve takeover" || fail "no Approve item for the second daemon"
click_until 10 "Approve takeover" no_approve || fail "the Approve item did not go away after clicking it"
wait_for 15 role_is daemon || fail "the second daemon does not own after approval"
[ "$(owner_pid)" = "$DAEMON" ] || fail "owner pid $(owner_pid), want the second daemon's $DAEMON"
pass "the second daemon owns after approval"

# 4. SIGKILL the daemon: the app takes ownership back by itself within 2 s.
kill -9 "$DAEMON"; wait "$DAEMON" 2>/dev/null || true
start=$(date +%s.%N)
wait_for 2 role_is desktop || fail "the app did not own again within 2 s of the daemon's death"
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN{printf "%.3f", a - b}')
[ "$(owner_pid)" = "$APP" ] || fail "owner pid $(owner_pid) after the daemon died, want $APP"
pass "the app owns again ${took}s after SIGKILL"
wait_for 3 icon_is "$ICON_OWNING" || fail "the tray icon did not return to the owning look"

# 5. Quit from the tray drains and releases: the app exits and nobody owns.
quitting() { grep -q 'quitting: draining runs' "$OUT/app.log"; }
click_until 6 "Quit" quitting || fail "the app did not act on Quit"
for _ in $(seq 50); do kill -0 "$APP" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$APP" 2>/dev/null; then
	kill -QUIT "$APP"; sleep 1   # goroutine dump into app.log, for whoever debugs this
	fail "the app did not exit within 10 s of Quit (goroutine dump in $OUT/app.log)"
fi
rc=0; wait "$APP" || rc=$?
[ "$rc" = 0 ] || fail "the app exited $rc after Quit, want 0"
if role_is desktop; then fail "the guard is still held after Quit"; fi
grep -q 'desktop app stopped' "$OUT/app.log" || fail "the app did not log its clean stop"
pass "Quit released ownership and exited 0"

# 6. A takeover request reaches an app whose window was never opened (so Fyne's loop has not
#    run yet): the window comes up with the prompt. Own profile; the daemon gives up on SIGTERM.
PROMPT_HOME=$(mktemp -d /tmp/routinely-prompt.XXXXXX); chmod 700 "$PROMPT_HOME"
cp "$HOME_DIR/routines.toml" "$PROMPT_HOME/"
ROUTINELY_HOME=$PROMPT_HOME "$BIN" --background >"$OUT/prompt-app.log" 2>&1 & APP2=$!; pids+=($APP2)
app2_window() { app_window "$APP2"; }
ROUTINELY_HOME=$PROMPT_HOME wait_for 15 role_is desktop || fail "the second app does not own its profile"
if app2_window >/dev/null 2>&1 || [ -n "$(window_proc "$APP2")" ] || gl_loaded "$APP2"; then
	fail "the second --background app opened its window by itself"
fi
ROUTINELY_HOME=$PROMPT_HOME "$BIN" daemon --takeover >"$OUT/prompt-daemon.log" 2>&1 & DAEMON=$!; pids+=($DAEMON)
wait_for 5 test -s "$PROMPT_HOME/takeover.json" || fail "the daemon wrote no takeover request to the second app"
asked_more() { [ "$(grep -c "pid $DAEMON) asks to take over your routines" "$OUT/notify.log" || true)" -gt 0 ]; }
wait_for 5 asked_more || fail "no takeover notification from an app whose window was never opened"
wait_for 5 app2_window || fail "no window with the takeover prompt from an app whose window was never opened"
sleep 1
timeout 20 import -window root "$OUT/takeover-unopened.png"
pass "takeover request opened the never-shown window (screenshot takeover-unopened.png)"
stop_pid "$DAEMON" 10 || fail "the waiting daemon did not exit within 10 s of SIGTERM"
stop_pid "$APP2" 10 || fail "the second app did not exit within 10 s of SIGTERM"
grep -q 'desktop app stopped' "$OUT/prompt-app.log" || fail "the second app did not stop cleanly"
rm -rf "$PROMPT_HOME"

# 7. Apps whose window was never opened (Fyne's loop never ran) stop cleanly with a run in
#    flight: Quit from the tray drains, releases and exits 0; so does SIGTERM, even when "Open
#    Routinely" is clicked during the drain (that must not start Fyne's loop: nothing would quit
#    it, and the app would hang until its last-resort exit).
# tray_bus_of PID: the bus name of the tray item registered by PID.
tray_bus_of() {
	local b
	for b in $(sni_get RegisteredStatusNotifierItems 2>/dev/null | grep -o '":[0-9.]*' | tr -d '"'); do
		"${DBUS_SEND[@]}" --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
			"string:$b" 2>/dev/null | grep -q "uint32 $1\$" && { echo "$b"; return 0; }
	done
	return 1
}
IDLE_HOME=$(mktemp -d /tmp/routinely-idle.XXXXXX); chmod 700 "$IDLE_HOME"
printf '[[routine]]\nname = "slow"\nevery = "1h"\nrun = ["sleep", "3"]\n' >"$IDLE_HOME/routines.toml"
chmod 600 "$IDLE_HOME/routines.toml"
# idle_app LOG: start an app on IDLE_HOME in the background, point BUS/MENU at its tray item, wait
# until it owns and start a 3 s run in it. Sets IDLE_APP.
idle_app() {
	ROUTINELY_HOME=$IDLE_HOME "$BIN" --background >"$OUT/$1" 2>&1 & IDLE_APP=$!; pids+=($IDLE_APP)
	wait_for 20 tray_bus_of "$IDLE_APP" || fail "the idle app registered no tray item"
	BUS=$(tray_bus_of "$IDLE_APP"); MENU=$(menu_path)
	ROUTINELY_HOME=$IDLE_HOME wait_for 15 role_is desktop || fail "the idle app does not own its profile"
	ROUTINELY_HOME=$IDLE_HOME "$BIN" run slow --no-wait >/dev/null || fail "run slow --no-wait was refused"
	sleep 1.5   # the owner picks a run-now request up within 0.5 s
}
# idle_app_stopped LOG HOW: the idle app exits 0 within 10 s, after its run, without a hang.
idle_app_stopped() {
	for _ in $(seq 50); do kill -0 "$IDLE_APP" 2>/dev/null || break; sleep 0.2; done
	kill -0 "$IDLE_APP" 2>/dev/null && fail "the idle app did not exit within 10 s of $2"
	rc=0; wait "$IDLE_APP" || rc=$?
	[ "$rc" = 0 ] || fail "the idle app exited $rc after $2, want 0"
	grep -q 'routine=slow .*outcome=success' "$OUT/$1" || fail "the run in flight did not finish before the idle app exited ($2)"
	grep -q 'desktop app stopped' "$OUT/$1" || fail "the idle app did not log its clean stop ($2)"
	if grep -q 'did not return from its run loop' "$OUT/$1"; then fail "the idle app hung in Fyne's loop after $2"; fi
	if ROUTINELY_HOME=$IDLE_HOME role_is desktop; then fail "the guard is still held after the idle app's $2"; fi
}
idle_app idle-quit.log
click "Quit"
idle_app_stopped idle-quit.log "Quit"
pass "Quit of a never-opened app drained its run and exited 0"
idle_app idle-term.log
kill -TERM "$IDLE_APP"
wait_for 5 grep -q 'quitting: draining runs' "$OUT/idle-term.log" || fail "the idle app did not act on SIGTERM"
id=$(menu_id "Open Routinely"); [ -z "$id" ] || menu_event "$id" || true
idle_app_stopped idle-term.log "SIGTERM"
pass "SIGTERM to a never-opened app drained its run and exited 0, Open during the drain ignored"

# 8. SIGHUP (the terminal that started the app was closed) drains like Quit, with the window
#    never opened or open: Fyne does not watch SIGHUP, so the app ends Fyne's loop itself once
#    drained (no hang in Run, no last-resort exit).
idle_app idle-hup.log
kill -HUP "$IDLE_APP"
wait_for 5 grep -q 'signal=SIGHUP' "$OUT/idle-hup.log" || fail "the idle app did not act on SIGHUP"
idle_app_stopped idle-hup.log "SIGHUP"
pass "SIGHUP to a never-opened app drained its run and exited 0"
idle_app open-hup.log
click "Open Routinely"
open_window() { app_window "$IDLE_APP"; }
wait_for 15 open_window || fail "the idle app's window did not open"
kill -HUP "$IDLE_APP"
wait_for 5 grep -q 'signal=SIGHUP' "$OUT/open-hup.log" || fail "the app with its window open did not act on SIGHUP"
idle_app_stopped open-hup.log "SIGHUP with the window open"
pass "SIGHUP to an app with its window open drained its run, ended Fyne's loop and exited 0"
rm -rf "$IDLE_HOME"

# 9. One app per profile, the takeover notification withdrawn, SIGTERM with the bus gone.
source "$(dirname "${BASH_SOURCE[0]}")/gui-instance.sh"

# 10. The window process: closed, killed, raised.
source "$(dirname "${BASH_SOURCE[0]}")/gui-child.sh"

# 11. The window's views and the stuck-owner button (its own profile and processes).
source "$(dirname "${BASH_SOURCE[0]}")/gui-views.sh"

if grep -q "Error in Fyne call thread" "$OUT"/*.log; then
	fail "a UI update ran outside the Fyne UI goroutine: $(grep -h -A1 'Error in Fyne call thread' "$OUT"/*.log | head -4)"
fi
echo "gui-test: all passed (artifacts in $OUT)"
