# Sourced by gui-test.sh (it uses that script's helpers, BIN, OUT, HOME_DIR and pids): the
# window lives in a window process of its own, which exits when the window is closed; killing
# it never stops the owner; a second Open raises it, or replaces it if it is frozen; it never
# outlives the app; Quit and SIGTERM end it with the app.
CHILD_HOME=$(mktemp -d "$OUT/child-home.XXXXXX"); chmod 700 "$CHILD_HOME"
cp "$HOME_DIR/routines.toml" "$CHILD_HOME/"   # "tick" runs every 2 s
cc -o "$OUT/wmclose" "$(dirname "${BASH_SOURCE[0]}")/wmclose.c" -lX11 || fail "cannot build wmclose.c (needs libx11-dev)"
# gone PID: PID has exited (a zombie nobody reaps counts: an orphan is reparented away from us).
gone() { [ ! -e "/proc/$1" ] || awk '{sub(/.*\) /, ""); exit !($1 == "Z" || $1 == "X")}' "/proc/$1/stat" 2>/dev/null; }
ticks() { grep -c 'routine=tick .*outcome=success' "$OUT/$1" || true; }
# child_app LOG [ARGS]: start an app on CHILD_HOME, point BUS/MENU at its tray item, wait until it
# owns. Sets CAPP.
child_app() {
	local log=$1; shift
	ROUTINELY_HOME=$CHILD_HOME "$BIN" "$@" >"$OUT/$log" 2>&1 & CAPP=$!; pids+=($CAPP)
	wait_for 20 tray_bus_of "$CAPP" || fail "the app ($log) registered no tray item"
	BUS=$(tray_bus_of "$CAPP"); MENU=$(menu_path)
	ROUTINELY_HOME=$CHILD_HOME wait_for 15 role_is desktop || fail "the app ($log) does not own its profile"
}
capp_window() { app_window "$CAPP"; }
has_winproc() { [ -n "$(window_proc "$CAPP")" ]; }
no_winproc() { [ -z "$(window_proc "$CAPP")" ]; }
capp_runs_on() {   # the app still owns, and "tick" ran twice more within 8 s
	local before; before=$(ticks "$1")
	wait_for 8 sh -c "[ \$(grep -c 'routine=tick .*outcome=success' '$OUT/$1') -ge $((before + 2)) ]" ||
		fail "the routines stopped running ($2): tick ran $(( $(ticks "$1") - before )) time(s) in 8 s"
	kill -0 "$CAPP" 2>/dev/null || fail "the app exited ($2)"
	[ "$(ROUTINELY_HOME=$CHILD_HOME owner_pid)" = "$CAPP" ] || fail "the app no longer owns ($2)"
}

# 9a. Open starts one window process: the window (and OpenGL) are there, not in the app.
child_app child-app.log --background
click_until 10 "Open Routinely" capp_window || fail "no window after Open Routinely"
WP=$(window_proc "$CAPP")
gl_loaded "$WP" || fail "the window process $WP has not loaded OpenGL"
if gl_loaded "$CAPP"; then fail "the app loaded OpenGL: its window belongs in the window process"; fi
pass "Open: the window is shown by window process $WP, the app ($CAPP) has no OpenGL"

# 9b. A second Open while the window process runs raises its window instead of starting another.
click "Open Routinely"
sleep 2
[ "$(window_proc "$CAPP")" = "$WP" ] || fail "a second Open replaced window process $WP with $(window_proc "$CAPP")"
n=0; for p in $(pgrep -P "$CAPP" || true); do [ "$(readlink "/proc/$p/exe")" = "$(readlink "/proc/$CAPP/exe")" ] && n=$((n + 1)); done
[ "$n" = 1 ] || fail "$n window processes after a second Open, want 1"
[ "$(capp_window | wc -l)" = 1 ] || fail "a second Open left $(capp_window | wc -l) windows, want 1"
pass "a second Open raised the same window process"

# 9c. Closing the window (as a window manager's close button does) ends the window process
#     with exit 0; the app runs on, without OpenGL.
"$OUT/wmclose" "$(capp_window)" || fail "could not ask the window to close"
wait_for 5 gone "$WP" || fail "the window process $WP still runs 5 s after its window was closed"
wait_for 3 grep -qE "msg=\"window process ended\" pid=$WP\$" "$OUT/child-app.log" ||
	fail "the window process did not end cleanly (log: $(grep "pid=$WP" "$OUT/child-app.log" | tail -2))"
capp_runs_on child-app.log "after the window was closed"
if gl_loaded "$CAPP"; then fail "the app has OpenGL loaded after its window was closed"; fi
pass "closing the window ended its process (exit 0); the app runs on without OpenGL"

# 9d. SIGKILL of the window process never stops the owner: the routines keep running, and the
#     tray's Open starts a new window process.
click_until 10 "Open Routinely" capp_window || fail "no window after Open Routinely, once closed"
WP2=$(window_proc "$CAPP")
[ "$WP2" != "$WP" ] || fail "no new window process after the first was closed"
kill -9 "$WP2"
wait_for 5 gone "$WP2" || fail "the SIGKILLed window process $WP2 is still there"
capp_runs_on child-app.log "after SIGKILL of the window process"
wait_for 5 has_label "Owner: this app" || fail "tray status line after the window process died: $(status_line)"
click_until 10 "Open Routinely" capp_window || fail "the tray's Open did not bring a window back after the window process was killed"
WP3=$(window_proc "$CAPP")
pass "SIGKILL of window process $WP2: the app owns and runs on, Open started window process $WP3"

# 9d'. A frozen window process (SIGSTOP: as a hung toolkit) does not answer the next Open's raise
#      within 5 s: the app kills it and opens a new one.
kill -STOP "$WP3"
click "Open Routinely"
wait_for 15 gone "$WP3" || fail "the frozen window process $WP3 was not ended after an Open it did not answer"
wait_for 15 capp_window || fail "no new window after the frozen window process was ended"
[ "$(window_proc "$CAPP")" != "$WP3" ] || fail "the frozen window process is still the app's window process"
WP3=$(window_proc "$CAPP")
grep -q 'the window process does not answer; replacing it' "$OUT/child-app.log" || fail "the app did not log why it replaced the window process"
pass "a frozen window process was replaced by the next Open (window process $WP3)"

# 9e. SIGKILL of the app: its window process sees the end of its pipe and exits (no orphan window).
kill -9 "$CAPP"; wait "$CAPP" 2>/dev/null || true
wait_for 5 gone "$WP3" || fail "window process $WP3 outlived its SIGKILLed app by 5 s"
wait_for 5 sh -c "! timeout 5 xdotool search --onlyvisible --pid $WP3 --name '^Routinely\$'" || fail "the window of a dead app is still shown"
pass "SIGKILL of the app: its window process exited with it"

# 9f. Quit from the tray and SIGTERM, each with the window open: the window process ends, the app
#     drains and exits 0 (started without --background: the window opens at start-up).
for how in Quit SIGTERM; do
	child_app "child-$how.log"
	wait_for 15 capp_window || fail "no window at a start without --background"
	WP=$(window_proc "$CAPP")
	if [ "$how" = Quit ]; then click "Quit"; else kill -TERM "$CAPP"; fi
	for _ in $(seq 50); do kill -0 "$CAPP" 2>/dev/null || break; sleep 0.2; done
	kill -0 "$CAPP" 2>/dev/null && fail "the app did not exit within 10 s of $how with its window open"
	rc=0; wait "$CAPP" || rc=$?
	[ "$rc" = 0 ] || fail "the app exited $rc after $how with its window open, want 0"
	gone "$WP" || fail "window process $WP still runs after the app's $how"
	grep -q 'desktop app stopped' "$OUT/child-$how.log" || fail "the app did not log its clean stop after $how"
	if grep -q 'did not close in time' "$OUT/child-$how.log"; then fail "the window process had to be killed at $how"; fi
	if ROUTINELY_HOME=$CHILD_HOME role_is desktop; then fail "the guard is still held after $how"; fi
	pass "$how with the window open: window process ended, the app drained and exited 0"
done
if grep -q 'Fyne error' "$OUT"/child-*.log; then fail "Fyne reported an error: $(grep -h -A2 'Fyne error' "$OUT"/child-*.log | head -3)"; fi
rm -rf "$CHILD_HOME"
