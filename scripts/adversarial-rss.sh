#!/usr/bin/env bash
# Builds the full-size hostile captures (examples/gen_adversarial.rs) and
# reports kwire's peak RSS and time on each, at a quarter size and at full
# size, so growth can be seen to be linear (time ratio near 4). The goal is
# under 256 MB everywhere. The bomb-* cases print NDJSON: every record under
# --max-decompressed goes out in hex, passed on while the line is written. A measurement, not a test: run it by hand
# (tests/adversarial.rs has the small versions that run in cargo test).
#
# usage: scripts/adversarial-rss.sh [CASE...]
#   Files go to $ADV_DIR (default: a temporary directory), one case at a time,
#   each deleted after use; the largest is about 2.1 GB.
#   KWIRE=PATH measures another kwire binary (e.g. an older build, to compare).
#   Exits 1 if any run exceeds 256 MB, or kwire fails other than as expected.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cargo build --release --quiet --bin kwire --example gen_adversarial
target=${CARGO_TARGET_DIR:-target}
kwire=${KWIRE:-$target/release/kwire}
gen=$target/release/examples/gen_adversarial
dir=${ADV_DIR:-$(mktemp -d)}
mkdir -p "$dir"
trap 'rm -f "$dir"/adv-*.pcap' EXIT
LIMIT_KB=$((256 * 1024))

# case name, then the extra kwire flags it runs with
declare -A FLAGS=(
  [prefix-2g]="--max-frame 4G"
  [prefix-neg]=""
  [array-2g]=""
  [conns-100k]=""
  [hole-1g]=""
  [one-dir-1g]=""
  [pending-1m]=""
  [frames-15m]=""
  [hunt-responses]=""
  [tls-partial-20k]=""
  [bomb-gzip]="--format json --max-buffer 64M"
  [bomb-zstd]="--format json --max-buffer 64M"
  [bomb-lz4]="--format json --max-buffer 64M"
)
ORDER=(prefix-2g prefix-neg array-2g conns-100k hole-1g one-dir-1g pending-1m frames-15m hunt-responses tls-partial-20k bomb-gzip bomb-zstd bomb-lz4)
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${ORDER[@]}")

fail=0
printf '%-15s %10s %9s %8s %10s %9s %8s %6s\n' case "1/4 size" "RSS MB" "time s" "full size" "RSS MB" "time s" ratio
for c in "${cases[@]}"; do
  row=()
  times=()
  for scale in 0.25 1; do
    f=$dir/adv-$c-$scale.pcap
    "$gen" "$c" "$scale" "$f"
    size=$(stat -c %s "$f")
    # shellcheck disable=SC2086
    set +e
    /usr/bin/time -o "$dir/time" -f '%M %e' "$kwire" read "$f" -q ${FLAGS[$c]} >/dev/null
    code=$?
    set -e
    rm -f "$f"
    read -r kb secs <"$dir/time"
    if [ "$code" -ne 0 ]; then
      echo "$c at $scale: kwire exited $code" >&2
      fail=1
    fi
    if [ "$kb" -gt "$LIMIT_KB" ]; then
      echo "$c at $scale: peak RSS $((kb / 1024)) MB is over 256 MB" >&2
      fail=1
    fi
    row+=("$(numfmt --to=iec "$size")" "$((kb / 1024))" "$secs")
    times+=("$secs")
  done
  ratio=$(awk -v a="${times[0]}" -v b="${times[1]}" 'BEGIN { if (a > 0) printf "%.1f", b / a; else print "-" }')
  printf '%-15s %10s %9s %8s %10s %9s %8s %6s\n' "$c" "${row[@]}" "$ratio"
done
exit $fail
