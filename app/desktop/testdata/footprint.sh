#!/usr/bin/env bash
# Footprint benchmark of the desktop app (not part of `make test`): idle RSS and CPU under Xvfb
# with 20 routines, tray registered.
#   bash app/desktop/testdata/footprint.sh ./build/routinely [SECONDS [APP ARGS...]]
# SECONDS defaults to 300. Without APP ARGS the window is shown (its labels refresh every
# second); with --background the app idles as it does after a login start: tray only, window
# never opened, so neither Fyne's loop nor OpenGL is running.
# Prints RSS at start and end, the RSS growth over the last 3 minutes (or the last 60 % of a
# shorter run), and the average CPU use in % of one core. Goals (issue 6): RSS <= 120 MB,
# CPU <= 1 %, no growth over the last 3 minutes.
set -euo pipefail
if [ -z "${FOOTPRINT_INNER:-}" ]; then
	export FOOTPRINT_INNER=1
	exec xvfb-run -a -s "-screen 0 1024x768x24 -nolisten tcp" dbus-run-session -- bash "$0" "$@"
fi
BIN=$(realpath "${1:?usage: footprint.sh BINARY [SECONDS]}")
DURATION=${2:-300}
shift $(( $# >= 2 ? 2 : $# ))
HOME_DIR=$(mktemp -d /tmp/routinely-footprint.XXXXXX); chmod 700 "$HOME_DIR"
export ROUTINELY_HOME=$HOME_DIR LANG=C.UTF-8
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$HOME_DIR"; }
trap cleanup EXIT

# 20 routines: one every 10 s (so the scheduler and journal do real work), 19 quiet ones.
{
	echo '[[routine]]'; echo 'name = "tick"'; echo 'every = "10s"'; echo 'run = ["true"]'; echo
	for i in $(seq 2 20); do
		echo '[[routine]]'; echo "name = \"quiet-$i\""; echo 'every = "1h"'; echo 'run = ["true"]'; echo
	done
} >"$HOME_DIR/routines.toml"
chmod 600 "$HOME_DIR/routines.toml"

status-notifier-watcher >/dev/null 2>&1 & pids+=($!)
sleep 1
"$BIN" "$@" >"$HOME_DIR/app.log" 2>&1 & APP=$!; pids+=($APP)
sleep 10 # start-up is not idle

HZ=$(getconf CLK_TCK)
rss_kb() { awk '/^VmRSS/{print $2}' "/proc/$APP/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$APP/stat"; }   # utime + stime of the app
t0=$(date +%s.%N); c0=$(cpu_ticks); r0=$(rss_kb)
tail_from=$(( DURATION > 300 ? DURATION - 180 : DURATION * 2 / 5 ))
echo "sampling pid $APP ($*) for ${DURATION}s (RSS every 10 s)"
r_mark=$r0
for (( s = 10; s <= DURATION; s += 10 )); do
	sleep 10
	kill -0 "$APP" 2>/dev/null || { echo "app exited"; tail "$HOME_DIR/app.log"; exit 1; }
	r=$(rss_kb); echo "  t=${s}s rss=$(( r / 1024 )) MB"
	[ "$s" -eq "$tail_from" ] && r_mark=$r
done
t1=$(date +%s.%N); c1=$(cpu_ticks); r1=$(rss_kb)
cpu=$(awk -v c="$(( c1 - c0 ))" -v hz="$HZ" -v a="$t1" -v b="$t0" 'BEGIN{printf "%.2f", 100 * c / hz / (a - b)}')
echo "RSS start $(( r0 / 1024 )) MB, end $(( r1 / 1024 )) MB, max goal 120 MB"
echo "RSS growth over the last $(( DURATION - tail_from ))s: $(( (r1 - r_mark) / 1024 )) MB ($(( r1 - r_mark )) kB)"
echo "CPU: ${cpu} % of one core on average (goal <= 1 %)"
