#!/usr/bin/env bash
# Footprint benchmark of the desktop app (not part of `make test`): RSS and CPU under Xvfb with
# 20 routines, tray registered.
#   bash app/desktop/testdata/footprint.sh BINARY [SECONDS [STATE]]
# SECONDS defaults to 300. STATE is one of
#   idle      --background, as started at login: tray only, the window never opened;
#   shown     the window open: the app and its window process;
#   closed    the window opened for 15 s, then closed as a window manager does: the app alone,
#             5 s after the close and then for SECONDS;
#   baseline  BINARY is a bare program (internal/bench/fyneidle), measured as it is.
# For each process it prints RSS at start and end, the RSS growth over the last 3 minutes (or
# the last 60 % of a shorter run) and the average CPU in % of one core, each with its goal
# (and, with the RSS, how much of it is the binary mapped in file huge pages, see below):
# the app (tray) <= 80 MB and <= 0.4 %; the window process <= 140 MB and <= 2 %; no growth.
set -euo pipefail
if [ -z "${FOOTPRINT_INNER:-}" ]; then
	export FOOTPRINT_INNER=1
	exec xvfb-run -a -s "-screen 0 1024x768x24 -nolisten tcp" dbus-run-session -- bash "$0" "$@"
fi
BIN=$(realpath "${1:?usage: footprint.sh BINARY [SECONDS [idle|shown|closed|baseline]]}")
DURATION=${2:-300}
STATE=${3:-shown}
HERE=$(dirname "$(realpath "$0")")
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

# Measure the binary as it runs once installed, not as it was just written: ext4 on Linux 6.18
# (this machine) can keep a file written in large chunks (a copy made with dd bs=4M did; a
# fresh go build sometimes does) in 2 MB page-cache folios, and a process mapping one counts
# all 2 MB in its RSS, however little of it it touched: 5-6 MB more per process here
# (FilePmdMapped, proc(5)).
# Dropping the file's clean pages (POSIX_FADV_DONTNEED, which dd's nocache flag asks for) makes
# the next exec read it back in small folios, as after an install or a reboot. A page another
# process has mapped stays: each process's file huge pages are printed with its RSS below.
sync "$BIN" && dd if="$BIN" iflag=nocache count=0 status=none ||
	echo "footprint: could not drop $BIN's page cache; its RSS may include file huge pages" >&2

HZ=$(getconf CLK_TCK)
rss_kb() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
hugefile_kb() { awk '/^FilePmdMapped/{v = $2} END{print (v == "" ? "?" : v)}' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }   # utime + stime
now() { date +%s.%N; }
cpu_pct() { awk -v c="$1" -v hz="$HZ" -v s="$2" 'BEGIN{printf "%.2f", 100 * c / hz / s}'; }
# runs_between T0 T1: how many runs of the every-10s routine started between the two times
# (seconds since the epoch), from the journal (`history --json`); "?" when it cannot be read.
runs_between() {
	local out
	out=$("$BIN" history tick --json --limit 5 2>/dev/null) || { echo "?"; return 0; }
	{ grep -o '"started": *"[^"]*"' <<<"$out" || true; } | cut -d'"' -f4 |
		while read -r s; do date -d "$s" +%s.%N; done | awk -v a="$1" -v b="$2" '$1 >= a && $1 < b {n++} END{print n + 0}'
}
# window_proc PID: PID's window process (its child running the same binary), "" if none.
window_proc() {
	local p exe; exe=$(readlink "/proc/$1/exe")
	for p in $(pgrep -P "$1" || true); do [ "$(readlink "/proc/$p/exe")" = "$exe" ] && { echo "$p"; return 0; }; done
	return 0
}
wait_window() {   # wait_window APP: echo its window process once its window is shown
	local w i
	for ((i = 0; i < 100; i++)); do
		w=$(window_proc "$1")
		[ -n "$w" ] && timeout 5 xdotool search --onlyvisible --pid "$w" --name '^Routinely$' >/dev/null 2>&1 && { echo "$w"; return 0; }
		sleep 0.2
	done
	echo "no window shown within 20 s" >&2; return 1
}

status-notifier-watcher >/dev/null 2>&1 & pids+=($!)
sleep 1
case $STATE in
	idle) "$BIN" --background >"$HOME_DIR/app.log" 2>&1 & APP=$! ;;
	shown | closed) "$BIN" >"$HOME_DIR/app.log" 2>&1 & APP=$! ;;
	baseline) "$BIN" >"$HOME_DIR/app.log" 2>&1 & APP=$! ;;
	*) echo "unknown state $STATE" >&2; exit 2 ;;
esac
pids+=($APP)
names=(app); procs=($APP); rss_goal=(80); cpu_goal=(0.4)
[ "$STATE" = baseline ] && { names=(baseline); rss_goal=(-); cpu_goal=(-); }
if [ "$STATE" = shown ] || [ "$STATE" = closed ]; then
	WIN=$(wait_window "$APP")
	[ "$STATE" = shown ] && { names+=(window); procs+=($WIN); rss_goal+=(140); cpu_goal+=(2); }
fi
sleep 10 # start-up is not idle
if [ "$STATE" = closed ]; then
	cc -o "$HOME_DIR/wmclose" "$HERE/wmclose.c" -lX11
	# The app's CPU time in ns over the 5 s (cpuclock.c): clock ticks of 10 ms would be 0.2 % each.
	cc -o "$HOME_DIR/cpuclock" "$HERE/cpuclock.c"
	cpu_ns() { "$HOME_DIR/cpuclock" "$1"; }
	sleep 5 # shown for 15 s in all
	c0=$(cpu_ns "$APP"); t0=$(now)
	"$HOME_DIR/wmclose" "$(timeout 5 xdotool search --onlyvisible --pid "$WIN" --name '^Routinely$')"
	sleep 5
	c1=$(cpu_ns "$APP"); t1=$(now)
	[ -e "/proc/$WIN" ] && { echo "the window process $WIN still runs 5 s after its window was closed"; exit 1; }
	r=$(rss_kb "$APP")
	runs=$(runs_between "$t0" "$t1")
	echo "5s after closing: app RSS $(( r / 1024 )) MB (goal <= 80 MB), CPU $(awk -v c="$c1" -v d="$c0" -v a="$t1" -v b="$t0" 'BEGIN{printf "%.2f", (c - d) / 1e7 / (a - b)}') % over those 5 s (goal <= 0.4 %; $runs run(s) of the every-10s routine started in them)"
fi

tail_from=$(( DURATION > 300 ? DURATION - 180 : DURATION * 2 / 5 ))
declare -a c_start r_start r_mark
for i in "${!procs[@]}"; do c_start[i]=$(cpu_ticks "${procs[i]}"); r_start[i]=$(rss_kb "${procs[i]}"); r_mark[i]=${r_start[i]}; done
t0=$(now)
echo "sampling ${names[*]} (pids ${procs[*]}, state $STATE) for ${DURATION}s (RSS every 10 s)"
for (( s = 10; s <= DURATION; s += 10 )); do
	sleep 10
	line="  t=${s}s"
	for i in "${!procs[@]}"; do
		kill -0 "${procs[i]}" 2>/dev/null || { echo "${names[i]} exited"; tail "$HOME_DIR/app.log"; exit 1; }
		r=$(rss_kb "${procs[i]}"); line+=" ${names[i]}=$(( r / 1024 )) MB"
		[ "$s" -eq "$tail_from" ] && r_mark[i]=$r
	done
	echo "$line"
done
t1=$(now); secs=$(awk -v a="$t1" -v b="$t0" 'BEGIN{print a - b}')
# goal VALUE GOAL UNIT: " (goal <= GOAL UNIT: met|MISSED)", nothing without a goal.
goal() { [ "$2" = - ] || awk -v v="$1" -v g="$2" -v u="$3" 'BEGIN{printf " (goal <= %s%s: %s)", g, u, (v + 0 <= g + 0) ? "met" : "MISSED"}'; }
for i in "${!procs[@]}"; do
	p=${procs[i]}; n=${names[i]}
	r1=$(rss_kb "$p"); cpu=$(cpu_pct $(( $(cpu_ticks "$p") - c_start[i] )) "$secs")
	grow=$(( r1 - r_mark[i] ))
	echo "RSS $n: start $(( r_start[i] / 1024 )) MB, end $(( r1 / 1024 )) MB$(goal $(( r1 / 1024 )) "${rss_goal[i]}" " MB"), of it file huge pages $(hugefile_kb "$p") kB"
	echo "RSS $n growth over the last $(( DURATION - tail_from ))s: $(( grow / 1024 )) MB ($grow kB)$(goal "$grow" 1024 " kB")"
	echo "CPU $n: ${cpu} % of one core on average$(goal "$cpu" "${cpu_goal[i]}" " %")"
done
