#!/usr/bin/env bash
# Times two or more kwire builds on one capture by alternating them, run after run, so
# that a noisy host (a shared VM) slows each build alike. Prints each build's best and
# median wall time and its median CPU time (user + system, from the child's rusage), and
# the same for a bare libpcap read (tcpdump) as the reference the issue's ratio uses.
# A benchmark, not a test: run it by hand.
#
# usage: scripts/bench-ab.sh RUNS CAPTURE KWIRE_A KWIRE_B [KWIRE...] [-- KWIRE_ARGS...]
#   KWIRE_ARGS default to `read -q`; e.g. `-- read -q --format tree`.
# example: scripts/bench-ab.sh 15 target/bench/mixed-200000.pcap old/kwire target/release/kwire
set -euo pipefail

if [ $# -lt 4 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
runs=$1 capture=$2
shift 2
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  bins+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(read -q)

python3 - "$runs" "$capture" "${#bins[@]}" "${bins[@]}" "${args[@]}" <<'PY'
import os, statistics, subprocess, sys, time

runs, capture, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
bins, args = sys.argv[4:4 + n], sys.argv[4 + n:]
# Named by place as well, so one build given twice (a check of the spread) stays two.
cmds = [(f"{chr(65 + i)}: {b}", [b, *args, capture]) for i, b in enumerate(bins)]
cmds.append(("tcpdump -r -w /dev/null", ["tcpdump", "-r", capture, "-w", "/dev/null"]))
wall = {name: [] for name, _ in cmds}
cpu = {name: [] for name, _ in cmds}
for _ in range(runs):
    for name, cmd in cmds:
        start = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"{' '.join(cmd)} failed ({status})")
        wall[name].append((time.perf_counter() - start) * 1000)
        cpu[name].append((usage.ru_utime + usage.ru_stime) * 1000)
print(f"{runs} alternating runs on {capture}; load average {os.getloadavg()[0]:.2f}")
for name, _ in cmds:
    w, c = wall[name], cpu[name]
    print(f"  wall best {min(w):7.1f} ms  median {statistics.median(w):7.1f} ms"
          f"  cpu median {statistics.median(c):7.1f} ms  {name}")
PY
