#!/usr/bin/env bash
# Measures `kwire tui` on a large generated capture, in tmux at 150x45: the
# time until the first rows are on screen, the time until the status bar says
# "loaded", the peak RSS (VmHWM from /proc), and a filter over every row.
#
# usage: scripts/bench-tui.sh [N] [RUNS]   N messages (default 1000000), RUNS runs (default 3)
# KWIRE=path/to/kwire uses that binary instead of building target/release/kwire;
# BENCH_ENV="KWIRE_SCHEMAS=" runs it with those environment variables (tmux
# does not pass the caller's on).
# Times count from just before tmux starts kwire, and the screen is polled every
# 10 ms, so they are upper bounds by about that much.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "needs tmux (apt-get install -y tmux)" >&2; exit 1; }
n=${1:-1000000}
runs=${2:-3}
target=${CARGO_TARGET_DIR:-target}
if [ -z "${KWIRE:-}" ]; then
  cargo build --release --quiet --bin kwire
  KWIRE=$target/release/kwire
fi
KWIRE=$(realpath "$KWIRE")
big=$target/bench/tui-$n.pcap
if [ ! -f "$big" ]; then
  mkdir -p "$(dirname "$big")"
  cargo build --release --quiet --example gen_capture
  "$target/release/examples/gen_capture" --messages "$n" "$big" >/dev/null
fi
session=kwire-bench-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

screen() { tmux capture-pane -p -t "$session"; }
fail() { echo "FAIL: $*" >&2; screen >&2 || true; exit 1; }
# wait_for TEXT [SECONDS]
wait_for() {
  local deadline=$((SECONDS + ${2:-60}))
  until screen | grep -qF -- "$1"; do
    [ $SECONDS -lt $deadline ] || fail "no \"$1\" on screen"
    sleep 0.01
  done
}
keys() { tmux send-keys -t "$session" "$@"; }

echo "capture: $big ($(du -m "$big" | cut -f1) MB, $n messages), tmux 150x45, $KWIRE"
for run in $(seq "$runs"); do
  tmux kill-session -t "$session" 2>/dev/null || true
  t0=$EPOCHREALTIME
  tmux new-session -d -s "$session" -x 150 -y 45 "env ${BENCH_ENV:-} $KWIRE tui $big; sleep 600"
  # A row of the list (the empty frame is drawn before any arrive).
  wait_for "FindCoordinator v"
  t1=$EPOCHREALTIME
  pane=$(tmux list-panes -t "$session" -F '#{pane_pid}')
  pid=$(pgrep -P "$pane" -f "$(basename "$KWIRE") tui" | head -1)
  wait_for "loaded " 300
  t2=$EPOCHREALTIME
  # CPU seconds (user + system, all threads) spent until loaded: steadier than
  # wall time on a shared machine.
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
  wait_for "$n/$n msgs" 10
  sleep 0.3
  rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
  hwm=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  keys / ; keys -l "response not_coordinator"; t3=$EPOCHREALTIME; keys Enter
  sleep 0.05
  until ! screen | grep -qF "filtering"; do sleep 0.01; done
  t4=$EPOCHREALTIME
  # The filtered list shows a row and its tree.
  keys G
  wait_for "Frame " 10
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v r="$rss" -v h="$hwm" -v k="$run" -v cpu="$cpu" 'BEGIN{
    printf "run %d: first rows %.2f s, loaded %.2f s (%s s CPU), RSS %.0f MiB, VmHWM %.0f MiB, filter over all %.2f s\n",
      k, b - a, c - a, cpu, r / 1024, h / 1024, e - d }'
  keys q
  sleep 0.2
done
