#!/usr/bin/env bash
# Times kwire (summary and json) against tshark's Kafka dissector and a bare
# libpcap read (tcpdump), in one run on the same capture, and prints the
# ratios and kwire's peak RSS. A benchmark, not a test: run it by hand.
#
# usage: scripts/bench-vs-tshark.sh [CAPTURE]
#   Without CAPTURE, generates target/bench/big-$MESSAGES.pcap (MESSAGES=200000).
#   RUNS=3 repeats each command and keeps the fastest time.
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=${MESSAGES:-200000}
RUNS=${RUNS:-3}
for tool in tshark tcpdump /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install tshark tcpdump time)" >&2; exit 1; }
done

cargo build --release --quiet --bin kwire --example gen_capture
file=${1:-target/bench/big-$MESSAGES.pcap}
if [ ! -f "$file" ]; then
  mkdir -p "$(dirname "$file")"
  target/release/examples/gen_capture --messages "$MESSAGES" "$file"
fi
kwire=target/release/kwire
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT

# best_of NAME CMD...: fastest wall time of RUNS runs, and the peak RSS of that run.
best_of() {
  local name=$1; shift
  local best="" rss=""
  for _ in $(seq "$RUNS"); do
    local start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$stats" "$@" >/dev/null 2>/dev/null
    local t m
    t=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b - a}')
    read -r m < "$stats"
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; rss=$m; fi
  done
  printf '%-14s %8.3f s  %8d KB peak RSS\n' "$name" "$best" "$rss" >&2
  echo "$best $rss"
}

packets=$($kwire read -q --format json "$file" | wc -l)
echo "capture: $file ($(du -h "$file" | cut -f1), $packets Kafka messages)" >&2
read -r t_bare _ < <(best_of "tcpdump -r" tcpdump -r "$file" -w /dev/null)
read -r t_sum rss_sum < <(best_of "kwire summary" "$kwire" read -q "$file")
read -r t_json rss_json < <(best_of "kwire json" "$kwire" read -q --format json "$file")
read -r t_tshark _ < <(best_of "tshark -T json" tshark -r "$file" -d tcp.port==9092,kafka -d tcp.port==9093,kafka -T json)

awk -v bare="$t_bare" -v sum="$t_sum" -v json="$t_json" -v ts="$t_tshark" -v n="$packets" \
    -v r1="$rss_sum" -v r2="$rss_json" 'BEGIN {
  printf "kwire json is %.1fx faster than tshark -T json\n", ts / json
  printf "kwire summary runs at %.0f%% of a bare libpcap read (tcpdump -r -w /dev/null)\n", 100 * bare / sum
  printf "kwire summary: %.0f messages/s; json: %.0f messages/s\n", n / sum, n / json
  printf "kwire peak RSS: summary %.1f MB, json %.1f MB\n", r1 / 1024, r2 / 1024
}'
