# Desktop checks of one app per profile, calm alerts and a quit that never panics. Sourced by
# gui-test.sh (it uses that script's helpers, $BIN, $OUT and the tray watcher it started); each
# check runs on a profile of its own.

INST_HOME=$(mktemp -d /tmp/routinely-instance.XXXXXX); chmod 700 "$INST_HOME"
INST_HOME2=$(mktemp -d /tmp/routinely-instance2.XXXXXX); chmod 700 "$INST_HOME2"
BUSLOSS_HOME=$(mktemp -d /tmp/routinely-busloss.XXXXXX); chmod 700 "$BUSLOSS_HOME"
for h in "$INST_HOME" "$INST_HOME2" "$BUSLOSS_HOME"; do
	printf '[[routine]]\nname = "slow"\nevery = "1h"\nrun = ["sleep", "3"]\n' >"$h/routines.toml"
	chmod 600 "$h/routines.toml"
done
trap 'cleanup; rm -rf "$INST_HOME" "$INST_HOME2" "$BUSLOSS_HOME"' EXIT

# registered_items: how many tray items the watcher lists.
registered_items() { sni_get RegisteredStatusNotifierItems 2>/dev/null | grep -o '":[0-9.]*' | wc -l; }
window_of() { app_window "$1"; }   # the window is its window process's (gui-test.sh)
no_window_of() { ! window_of "$1" >/dev/null 2>&1; }

# I1. A second launch of the profile (a click on the launcher) shows the running app's window and
#     exits 0; it adds no tray item. A second --background launch (a login item) exits 0 and
#     shows nothing. A launch on another profile is an app of its own.
ROUTINELY_HOME=$INST_HOME "$BIN" --background >"$OUT/instance-first.log" 2>&1 & FIRST=$!; pids+=($FIRST)
wait_for 20 tray_bus_of "$FIRST" || fail "the first app registered no tray item"
BUS=$(tray_bus_of "$FIRST"); MENU=$(menu_path)
ROUTINELY_HOME=$INST_HOME wait_for 15 role_is desktop || fail "the first app does not own its profile (status: $(ROUTINELY_HOME=$INST_HOME status_json | head -c 600))"
items=$(registered_items)
no_window_of "$FIRST" || fail "the first --background app showed its window"
rc=0; ROUTINELY_HOME=$INST_HOME timeout 20 "$BIN" --background >"$OUT/instance-second-bg.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "a second --background launch exited $rc, want 0 ($(tail -n 3 "$OUT/instance-second-bg.log"))"
grep -q 'already runs for this profile' "$OUT/instance-second-bg.log" || fail "the second --background launch did not say the app runs"
sleep 1
no_window_of "$FIRST" || fail "a second --background launch opened the window"
start=$(now_ms); rc=0
ROUTINELY_HOME=$INST_HOME timeout 20 "$BIN" >"$OUT/instance-second.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "the second launch exited $rc, want 0 ($(tail -n 3 "$OUT/instance-second.log"))"
took=$(( $(now_ms) - start ))
grep -q 'its window was brought to the front' "$OUT/instance-second.log" || fail "the second launch did not say it showed the running app"
wait_for 15 window_of "$FIRST" || fail "the running app's window did not come up after the second launch"
[ "$(registered_items)" = "$items" ] || fail "tray items went from $items to $(registered_items) after the second launch"
sleep 1
timeout 20 import -window root "$OUT/second-launch.png"
pass "second launch: exit 0 after ${took} ms, the first app's window shown, still one tray item (screenshot second-launch.png)"
ROUTINELY_HOME=$INST_HOME2 "$BIN" --background >"$OUT/instance-other.log" 2>&1 & OTHER=$!; pids+=($OTHER)
wait_for 20 tray_bus_of "$OTHER" || fail "an app on another profile registered no tray item of its own"
kill -0 "$OTHER" || fail "the app on another profile exited"
stop_pid "$OTHER" 10 || fail "the app on the other profile did not exit within 10 s of SIGTERM"
pass "another profile is another app (its own tray item)"

# I2. A takeover notification is withdrawn once the request is answered: Deny in the tray closes
#     it (CloseNotification with the id the service returned for it).
dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications'" "type='method_return'" \
	>"$OUT/notify-ids.log" 2>&1 & MON=$!; pids+=($MON)
sleep 0.5
ROUTINELY_HOME=$INST_HOME "$BIN" daemon --takeover >"$OUT/instance-daemon.log" 2>&1 & DAEMON=$!; pids+=($DAEMON)
# takeover_notify_id: the id the notification service returned for the takeover Notify.
takeover_notify_id() { awk -v pid="$DAEMON" '
	/method call .*member=Notify$/ { match($0, /serial=[0-9]+/); ser = substr($0, RSTART+7, RLENGTH-7); next }
	ser != "" && index($0, "pid " pid ") asks to take over") { want = ser; ser = "" }
	/^method return / && want != "" && $0 ~ ("reply_serial=" want "$") { getline; if ($1 == "uint32") { print $2; exit } }
	' "$OUT/notify-ids.log"; }
has_takeover_id() { [ -n "$(takeover_notify_id)" ]; }
wait_for 10 has_takeover_id || fail "no takeover notification with an id from the notification service (is dunst installed?)"
ID=$(takeover_notify_id)
wait_for 5 has_label "Deny" || fail "no Deny item in the tray menu"
closed() { awk -v id="$ID" '/member=CloseNotification$/ { getline; if ($1 == "uint32" && $2 == id) f = 1 } END { exit !f }' "$OUT/notify-ids.log"; }
if closed; then fail "the takeover notification was withdrawn before anyone answered"; fi
no_deny() { ! has_label "Deny"; }
click_until 10 "Deny" no_deny || fail "the Deny item did not go away after clicking it"
wait_for 5 closed || fail "the takeover notification (id $ID) was not withdrawn after Deny"
for _ in $(seq 50); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.2; done
rc=0; wait "$DAEMON" || rc=$?
[ "$rc" = 75 ] || fail "the denied daemon exited $rc, want 75"
pass "Deny withdrew the takeover notification (id $ID); the daemon was denied (exit 75)"
click "Quit"
for _ in $(seq 50); do kill -0 "$FIRST" 2>/dev/null || break; sleep 0.2; done
rc=0; wait "$FIRST" || rc=$?
[ "$rc" = 0 ] || fail "the first app exited $rc after Quit, want 0"
grep -q 'desktop app stopped' "$OUT/instance-first.log" || fail "the first app did not log its clean stop"
stop_pid "$MON" 5 || true
# The profile is free again after Quit: a launch now is the app itself.
[ ! -e "$INST_HOME/desktop.sock" ] || fail "Quit left the instance socket behind"
pass "Quit released the profile: no instance socket left"

# I3. SIGTERM 1.4 s after start, with the window shown, while the session bus goes away (a logout,
#     or the end of the dbus-run-session that started the app): the app drains, releases and
#     exits 0 without a panic. Its own bus and tray watcher, so the main bus stays up.
BL_ADDR_FILE=$(mktemp); BL_PID_FILE=$(mktemp)
dbus-daemon --session --fork --print-address=3 --print-pid=4 3>"$BL_ADDR_FILE" 4>"$BL_PID_FILE" >/dev/null 2>&1 ||
	fail "could not start a second session bus"
BL_ADDR=$(head -n1 "$BL_ADDR_FILE"); BL_BUS_PID=$(head -n1 "$BL_PID_FILE"); rm -f "$BL_ADDR_FILE" "$BL_PID_FILE"
pids+=("$BL_BUS_PID")
DBUS_SESSION_BUS_ADDRESS=$BL_ADDR status-notifier-watcher >"$OUT/busloss-watcher.log" 2>&1 & pids+=($!)
bl_watcher() { DBUS_SESSION_BUS_ADDRESS=$BL_ADDR sni_get RegisteredStatusNotifierItems; }
wait_for 10 bl_watcher || fail "the second bus's tray watcher did not start"
DBUS_SESSION_BUS_ADDRESS=$BL_ADDR ROUTINELY_HOME=$BUSLOSS_HOME "$BIN" >"$OUT/busloss-app.log" 2>&1 & BL_APP=$!; pids+=($BL_APP)
sleep 1.4
kill -TERM "$BL_APP"
kill "$BL_BUS_PID"
for _ in $(seq 75); do kill -0 "$BL_APP" 2>/dev/null || break; sleep 0.2; done
kill -0 "$BL_APP" 2>/dev/null && fail "the app did not exit within 15 s of SIGTERM with its bus gone"
rc=0; wait "$BL_APP" || rc=$?
if grep -q 'panic' "$OUT/busloss-app.log"; then fail "the app panicked when its bus went away: $(grep -m1 -A3 panic "$OUT/busloss-app.log")"; fi
[ "$rc" = 0 ] || fail "the app exited $rc after SIGTERM with its bus gone, want 0 ($(tail -n 5 "$OUT/busloss-app.log"))"
grep -q 'desktop app stopped' "$OUT/busloss-app.log" || fail "the app did not log its clean stop after losing its bus"
pass "SIGTERM 1.4 s after start while the session bus went away: no panic, exit 0"

# No process of this test panicked (Quit, SIGTERM, SIGHUP and the rest above).
if grep -l '^panic:' "$OUT"/*.log >/dev/null 2>&1; then fail "a panic in $(grep -l '^panic:' "$OUT"/*.log | paste -sd ' ')"; fi
pass "no panic in any log"
