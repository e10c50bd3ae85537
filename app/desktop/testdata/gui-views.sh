# Real-session checks of the window's views, sourced by gui-test.sh (it provides BIN, OUT, pids,
# fail, pass, wait_for, stop_pid, the tray helpers and XDOTOOL):
#   - the routines table and the history tab at 760 px wide (screenshots views-*.png in OUT);
#   - a daemon that owns is SIGSTOPped while the app stands by: Take back says at once that it
#     cannot work, the banner offers "End the stuck owner (pid N)", the window's button and its
#     confirmation end it, and the app owns.
# Own profile, so it does not touch the main test's.
VIEWS_HOME=$(mktemp -d /tmp/routinely-views.XXXXXX); chmod 700 "$VIEWS_HOME"
{
	echo '[[routine]]'; echo 'name = "tick"'; echo 'every = "2s"'; echo 'shell = "echo tick"'; echo
	echo '[[routine]]'; echo 'name = "flaky-backup"'; echo 'every = "3s"'; echo 'shell = "echo cannot reach the backup server: connection refused; exit 2"'
	# Never auto-paused (5 failures take 15 s): a paused routine is never overdue, and the stuck
	# owner check below needs one of the two frequent routines overdue.
	echo 'auto_pause_after = 0'; echo
	echo '[[routine]]'; echo 'name = "weekday-briefing-with-a-long-name"'; echo 'at = ["08:30"]'
	echo 'days = ["mon", "tue", "wed", "thu", "fri"]'; echo 'run = ["true"]'; echo
	echo '[[routine]]'; echo 'name = "inbox"'; echo 'every = "15m"'; echo 'paused = true'; echo 'run = ["true"]'; echo
	echo '[[routine]]'; echo 'name = "broken"'; echo 'every = "0s"'; echo 'run = ["true"]'; echo
	for i in $(seq 6 20); do
		echo '[[routine]]'; echo "name = \"quiet-$i\""; echo 'every = "1h"'; echo 'run = ["true"]'; echo
	done
} >"$VIEWS_HOME/routines.toml"
chmod 600 "$VIEWS_HOME/routines.toml"
vstatus() { ROUTINELY_HOME=$VIEWS_HOME status_json; }
vowner_pid() { ROUTINELY_HOME=$VIEWS_HOME owner_pid; }

ROUTINELY_HOME=$VIEWS_HOME "$BIN" daemon >"$OUT/views-daemon.log" 2>&1 & VDAEMON=$!; pids+=($VDAEMON)
wait_for 15 sh -c "[ \"\$(ROUTINELY_HOME=$VIEWS_HOME timeout 10 '$BIN' status --json 2>/dev/null | grep -c '\"pid\": $VDAEMON')\" -gt 0 ]" ||
	fail "the views daemon does not own its profile"
ROUTINELY_HOME=$VIEWS_HOME "$BIN" >"$OUT/views-app.log" 2>&1 & VAPP=$!; pids+=($VAPP)
views_window() { app_window "$VAPP"; }   # the window is its window process's
wait_for 20 views_window || fail "the views app showed no window"
VWIN=$(views_window | head -1)
# 760 x 640 at the screen's corner. Fyne sizes its window once it is shown, which may come after
# the first request: ask until the size holds.
win_size() { "${XDOTOOL[@]}" getwindowgeometry --shell "$VWIN" | awk -F= '/^WIDTH/{w=$2} /^HEIGHT/{h=$2} END{print w "x" h}'; }
sized_760() {
	"${XDOTOOL[@]}" windowsize "$VWIN" 760 640 && "${XDOTOOL[@]}" windowmove "$VWIN" 0 0 && sleep 1 &&
		[ "$(win_size)" = 760x640 ]
}
wait_for 15 sized_760 || fail "the views window is $(win_size), not 760x640"
sleep 7   # a few runs of tick and flaky-backup
# shot NAME: a screenshot of the window (raised above the notification pop-ups), 760 px wide.
shot() {
	"${XDOTOOL[@]}" windowraise "$VWIN" || true; sleep 0.3
	timeout 20 import -window "$VWIN" "$OUT/$1"
	[ "$(identify -format %w "$OUT/$1")" = 760 ] || fail "$1 is $(identify -format %wx%h "$OUT/$1"), not 760 px wide"
}
shot views-routines-760.png
pass "routines table at 760 px (views-routines-760.png)"
"${XDOTOOL[@]}" mousemove --window "$VWIN" 80 495   # the cut-off name of the third routine
sleep 1
shot views-tooltip.png
"${XDOTOOL[@]}" mousemove --window "$VWIN" 380 20
pass "pointer on a cut-off routine name (screenshot views-tooltip.png)"

# The History tab (its tab label sits at a fixed place in a 760 x 640 window with no banner).
"${XDOTOOL[@]}" mousemove --window "$VWIN" 119 297 click 1
sleep 1.5
"${XDOTOOL[@]}" mousemove --window "$VWIN" 300 450 click 1   # the second newest run: its output below
sleep 1.5
shot views-history-760.png
pass "history tab at 760 px (views-history-760.png)"

# The stuck owner: SIGSTOP the daemon while the app stands by.
"${XDOTOOL[@]}" mousemove --window "$VWIN" 43 297 click 1   # back to the Routines tab
wait_for 20 tray_bus_of "$VAPP" || fail "the views app registered no tray item"
BUS=$(tray_bus_of "$VAPP"); MENU=$(menu_path)
kill -STOP "$VDAEMON"
stopped_at=$(now_ms)
sleep 9   # past 3 missed heartbeats (2 s each): the app's observer says not-heartbeating
shot views-stuck-waiting.png
# Take back cannot work against an owner that does not answer: it says so at once (no 60 s
# wait), and the tray never shows it taking back.
click "Take back"
wait_for 5 grep -q 'Take back failed.*cannot hand the routines back' "$OUT/views-app.log" ||
	fail "Take back against the stuck owner did not fail at once (log: $(tail -n 3 "$OUT/views-app.log"))"
case "$(status_line)" in "Taking back"*) fail "the tray says it is taking back from a stuck owner: $(status_line)" ;; esac
pass "Take back against the stuck owner says at once that it cannot work"
sleep_until_ms() { local d=$(( $1 - $(now_ms) )); [ "$d" -le 0 ] || sleep "$(awk -v d="$d" 'BEGIN{printf "%.3f", d/1000}')"; }
sleep_until_ms $(( stopped_at + 34000 ))   # the kill-wedged threshold (30 s) on the app's own watch
shot views-stuck-offered.png
# The stop may catch one of the two frequent routines mid-run (from its claim, 50 ms before the
# slot): that one then shows as running (never overdue), so either may be the one marked (they
# start together only every 6 s).
ROUTINELY_HOME=$VIEWS_HOME timeout 10 "$BIN" routines 2>/dev/null | grep -qE '^(tick|flaky-backup) .*OVERDUE since' ||
	fail "routines marks neither tick nor flaky-backup overdue while their owner is stopped"
pass "overdue routines marked while the owner is stopped (views-stuck-offered.png)"
# The banner's button (right of its text, under the menu bar), then the confirmation's "End it"
# (the dialog is centred in the window, which may have grown to fit the notice of the failed
# Take back): see views-stuck-offered.png and views-stuck-confirm.png.
read -r VW VH < <(win_size | tr x ' ')
"${XDOTOOL[@]}" mousemove --window "$VWIN" $(( VW - 135 )) 67 click 1   # the banner's text takes 2 or 3 lines
sleep 1
shot views-stuck-confirm.png
if grep -q 'ending the stuck owner' "$OUT/views-app.log"; then fail "the button ended the owner before the confirmation"; fi
read -r VW VH < <(win_size | tr x ' ')
"${XDOTOOL[@]}" mousemove --window "$VWIN" $(( VW / 2 + 45 )) $(( VH / 2 + 75 )) click 1
wait_for 5 grep -q 'ending the stuck owner at the person.s request.*pid='"$VDAEMON" "$OUT/views-app.log" ||
	fail "confirming did not end the stuck owner (log: $(tail -n 3 "$OUT/views-app.log"))"
vapp_owns() { [ "$(ROUTINELY_HOME=$VIEWS_HOME owner_role)" = desktop ] && [ "$(vowner_pid)" = "$VAPP" ]; }
wait_for 20 vapp_owns || fail "the app does not own after ending the stuck owner (status: $(vstatus | head -c 400))"
rc=0; wait "$VDAEMON" || rc=$?
[ "$rc" = 137 ] || fail "the stuck daemon exited $rc, want 137 (SIGKILL: a stopped process cannot act on SIGTERM)"
sleep 1
shot views-after-end.png
pass "End the stuck owner: confirmed in the window, the daemon was killed and the app owns"
stop_pid "$VAPP" 15 || fail "the views app did not exit within 15 s of SIGTERM"
rm -rf "$VIEWS_HOME"
