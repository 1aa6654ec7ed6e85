#!/usr/bin/env bash
# Drives Kafka-shaped traffic over loopback at fixed rates while `kwire live`
# captures it, and reports per rate: messages sent and decoded, kernel drops,
# and kwire's CPU. A benchmark, not a test: run it by hand, as root.
#
# usage: scripts/bench-live.sh [RATE ...]   (messages/s; default 10000 50000 100000)
#   DURATION=10 seconds per rate; KWIRE_ARGS="--threads 1" passes options to kwire live.
#   LOADGEN_NICE=10 runs the load generator at that niceness: its many sender threads
#   otherwise take the CPU from kwire on a small machine, and the kernel drops what kwire
#   was not scheduled to read (not what it could not keep up with).
set -euo pipefail
cd "$(dirname "$0")/.."

rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10000 50000 100000)
duration=${DURATION:-10}
[ "$(id -u)" = 0 ] || echo "warning: capturing on lo needs root or CAP_NET_RAW" >&2

cargo build --release --quiet --bin kwire --example loadgen
kwire=target/release/kwire
loadgen=target/release/examples/loadgen
tick=$(getconf CLK_TCK)
log=$(mktemp)
kpid=
cleanup() { [ -n "$kpid" ] && kill "$kpid" 2>/dev/null; rm -f "$log"; }
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

printf '%10s %12s %12s %10s %8s\n' "rate/s" "sent msgs" "decoded" "kern drops" "kwire CPU"
for rate in "${rates[@]}"; do
  port=$(free_port)
  "$kwire" live ${KWIRE_ARGS:-} -i lo -f "tcp port $port" --port "$port" --format json >/dev/null 2>"$log" &
  kpid=$!
  for _ in $(seq 100); do grep -q "capturing on" "$log" && break; sleep 0.1; done
  before=$(cpu_ticks "$kpid")
  sent=$(nice -n "${LOADGEN_NICE:-0}" "$loadgen" --port "$port" --rate "$rate" --seconds "$duration" | awk '{print $1}')
  after=$(cpu_ticks "$kpid")
  sleep 1
  kill -INT "$kpid"; wait "$kpid" || true; kpid=
  decoded=$(sed -n 's/.*, \([0-9]*\) Kafka messages$/\1/p' "$log")
  drops=$(sed -n 's/.*received, \([0-9]*\) dropped by the kernel.*/\1/p' "$log")
  cpu=$(awk -v t="$tick" -v a="$before" -v b="$after" -v d="$duration" 'BEGIN{printf "%.0f%%", 100*(b-a)/t/d}')
  printf '%10s %12s %12s %10s %8s\n' "$rate" "$sent" "$decoded" "$drops" "$cpu"
done
