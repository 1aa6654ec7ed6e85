#!/usr/bin/env bash
# Times kwire (summary, json and tree) against tshark's Kafka dissector and a
# bare libpcap read (tcpdump), in one run on the same capture, and prints the
# ratios and kwire's peak RSS. A benchmark, not a test: run it by hand.
#
# usage: scripts/bench-vs-tshark.sh [CAPTURE...]
#   Without CAPTURE, generates and times two captures (examples/gen_capture.rs,
#   kwire::synth::corpus):
#   - target/bench/mixed-$MESSAGES.pcap (MESSAGES=200000): Vote and FindCoordinator
#     at every version, non-ASCII strings, one connection in eight in 40-byte
#     segments and every 10th request of the others split over two;
#   - target/bench/records-$RECORD_MESSAGES.pcap (RECORD_MESSAGES=20000): Produce
#     and Fetch with record batches in every codec (needs a kafka-clients jar).
#   RUNS=3 repeats each kwire and tcpdump command and keeps the fastest time;
#   TSHARK_RUNS=1 does the same for tshark (slow); NO_TSHARK=1 skips it.
#   KWIRE=path times another kwire binary (e.g. a build of main) on the same files.
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=${MESSAGES:-200000}
RECORD_MESSAGES=${RECORD_MESSAGES:-20000}
RUNS=${RUNS:-3}
TSHARK_RUNS=${TSHARK_RUNS:-1}
for tool in tshark tcpdump /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install tshark tcpdump time)" >&2; exit 1; }
done

cargo build --release --quiet --bin kwire --example gen_capture
gen=target/release/examples/gen_capture
if [ $# -eq 0 ]; then
  mkdir -p target/bench
  mixed=target/bench/mixed-$MESSAGES.pcap
  records=target/bench/records-$RECORD_MESSAGES.pcap
  [ -f "$mixed" ] || $gen --messages "$MESSAGES" "$mixed"
  [ -f "$records" ] || $gen --records --messages "$RECORD_MESSAGES" "$records" || rm -f "$records"
  set -- "$mixed"
  [ -f "$records" ] && set -- "$@" "$records"
fi
kwire=${KWIRE:-target/release/kwire}
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT

# best_of RUNS NAME CMD...: fastest wall time of RUNS runs, and the peak RSS of that run.
best_of() {
  local runs=$1 name=$2; shift 2
  local best="" rss=""
  for _ in $(seq "$runs"); do
    local start=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$stats" "$@" >/dev/null 2>/dev/null
    local t m
    t=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b - a}')
    read -r m < "$stats"
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; rss=$m; fi
  done
  printf '  %-16s %8.3f s  %8d KB peak RSS\n' "$name" "$best" "$rss" >&2
  echo "$best $rss"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
for file in "$@"; do
  packets=$($kwire read -q --format json "$file" 2>/dev/null | wc -l)
  echo "capture: $file ($(du -h "$file" | cut -f1), $packets Kafka messages)" >&2
  read -r t_bare _ < <(best_of "$RUNS" "tcpdump -r" tcpdump -r "$file" -w /dev/null)
  read -r t_sum rss_sum < <(best_of "$RUNS" "kwire summary" "$kwire" read -q "$file")
  read -r t_json rss_json < <(best_of "$RUNS" "kwire json" "$kwire" read -q --format json "$file")
  read -r t_tree rss_tree < <(best_of "$RUNS" "kwire tree" "$kwire" read -q --format tree "$file")
  t_tshark=0
  if [ -z "${NO_TSHARK:-}" ]; then
    read -r t_tshark _ < <(best_of "$TSHARK_RUNS" "tshark -T json" tshark -r "$file" \
      -d tcp.port==9092,kafka -d tcp.port==9093,kafka -T json)
  fi
  awk -v bare="$t_bare" -v sum="$t_sum" -v json="$t_json" -v tree="$t_tree" -v ts="$t_tshark" \
      -v n="$packets" -v r1="$rss_sum" -v r2="$rss_json" -v r3="$rss_tree" 'BEGIN {
    if (ts > 0) printf "  kwire json is %.1fx faster than tshark -T json\n", ts / json
    printf "  kwire summary takes %.1fx a bare libpcap read (tcpdump -r -w /dev/null)\n", sum / bare
    printf "  kwire tree takes %.2fx the json time\n", tree / json
    printf "  kwire: summary %.0f, json %.0f, tree %.0f messages/s\n", n / sum, n / json, n / tree
    printf "  kwire peak RSS: summary %.1f MB, json %.1f MB, tree %.1f MB\n", r1 / 1024, r2 / 1024, r3 / 1024
  }'
done
