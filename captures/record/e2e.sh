#!/usr/bin/env bash
# End-to-end run for tests/e2e_kafka.rs: `kwire live` sniffs lo while a fresh
# Kafka 4.4.0 KRaft quorum (3 controllers + 1 broker, 127.0.0.1 only) elects its
# first leader and a Java consumer joins a group. Reuses record.sh's settings and
# functions (sourced), so the cluster is the one the fixture captures came from.
#
# usage: e2e.sh OUTDIR
#   env: KWIRE_BIN          the kwire binary (required)
#        KWIRE_CTRL_PORTS   "a b c", the controllers' ports (record.sh's default otherwise)
#        KWIRE_BROKER_PORT  the broker's port
#        KWIRE_MVN_OPTS     extra Maven arguments for the Kafka fetch, e.g.
#                           "-Dmaven.repo.local=/tmp/m2" (a cold cache) or "-o"
#
# Writes into OUTDIR: kwire.ndjson (kwire's stdout), kwire.err (its stderr),
# result.txt (what the cluster itself says: leader and epoch, the broker, the
# group's coordinator as Admin reports it, kwire's exit code),
# quorum-state-c{1,2,3}.json (each controller's quorum-state while the leader
# was agreed, before any node stopped) and run/ (configs, data and logs).
#
# Exit status: 0 done; 77 skipped (the last stderr line says "SKIP: why": no
# Java or Maven, or Kafka could not be fetched); anything else is a failure.
# Every process started here is tracked by pid and stopped by the EXIT trap:
# kwire first (SIGINT), then the clients and Kafka nodes (SIGTERM, SIGKILL
# after 10 s). Every wait is bounded.
set -euo pipefail

(($# == 1)) || { echo "usage: $(basename "$0") OUTDIR" >&2; exit 2; }
E2E_OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
export KWIRE_RUN_DIR="$E2E_OUT/run"

# shellcheck source=record.sh
source "$(dirname "${BASH_SOURCE[0]}")/record.sh"

GROUP="kwire-e2e-group"
E2E_TOPIC="kwire-e2e"
KWIRE_STOP_SECS=20

skip() { log "SKIP: $*"; echo "SKIP: $*" >&2; exit 77; }

# Stops kwire with SIGINT (it flushes its output), then every other tracked
# process at once: SIGTERM, and SIGKILL for whatever is still there after 10 s.
# The cluster's data is thrown away, so no clean shutdown is waited for.
e2e_cleanup() {
    local rc=$? name pid i alive
    # Finish this even when signalled again (e.g. the test's time-out SIGTERM
    # arriving mid-cleanup): dying here would orphan the nodes.
    trap - EXIT
    trap '' INT TERM
    running kwire && stop_kwire
    for name in "${!PIDS[@]}"; do
        kill -TERM "${PIDS[$name]}" 2>/dev/null || true
        kill -CONT "${PIDS[$name]}" 2>/dev/null || true
    done
    for ((i = 0; i < 50; i++)); do
        alive=0
        for name in "${!PIDS[@]}"; do running "$name" && alive=1; done
        ((alive)) || break
        sleep 0.2
    done
    for name in "${!PIDS[@]}"; do
        pid="${PIDS[$name]}"
        if kill -0 "$pid" 2>/dev/null; then
            log "$name (pid $pid) ignored SIGTERM for 10 s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
    log "stopped every process this run started"
    exit "$rc"
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM

# Fetches Kafka into lib/ and compiles the client mains, like record.sh's
# setup_java, but bounded in time, and a fetch that fails is a skip, not a failure.
e2e_setup_java() {
    local stamp="$HERE/lib/.built" out rc=0
    if [[ -f "$stamp" && -z "$(find "$HERE/pom.xml" "$HERE/src" -newer "$stamp" -print -quit)" ]]; then
        return 0
    fi
    log "fetching Kafka 4.4.0 into lib/ and compiling the client mains (Maven)"
    # shellcheck disable=SC2086 # KWIRE_MVN_OPTS is a list of arguments
    out="$(cd "$HERE" && timeout 180 mvn -B -q ${KWIRE_MVN_OPTS:-} package 2>&1)" || rc=$?
    if ((rc != 0)); then
        echo "$out" | tail -n 20 >&2
        if ((rc == 124)); then
            skip "fetching Kafka 4.4.0 with Maven took over 180 s"
        fi
        if grep -qiE 'resolv|transfer|unknownhost|connect|unreachable|offline|artifact' <<<"$out"; then
            skip "Kafka 4.4.0 could not be fetched from Maven Central (mvn exit $rc)"
        fi
        die "mvn package failed (exit $rc), and not for want of a download"
    fi
    touch "$stamp"
}

# Starts kwire live on lo for the cluster's ports and waits until it captures.
start_kwire() {
    local filter="" port ports="" i
    for port in "${CTRL_PORTS[@]}" "$BROKER_PORT"; do
        filter+="${filter:+ or }port $port"
        ports+="${ports:+,}$port"
    done
    # --duration is a backstop only: the test stops kwire with SIGINT long before.
    "$KWIRE_BIN" live -i lo -f "tcp and ($filter)" --format json --port "$ports" \
        --duration 290 >"$E2E_OUT/kwire.ndjson" 2>"$E2E_OUT/kwire.err" &
    PIDS[kwire]=$!
    for ((i = 0; i < 100; i++)); do
        grep -q "capturing on" "$E2E_OUT/kwire.err" && break
        running kwire || die "kwire live failed: $(cat "$E2E_OUT/kwire.err")"
        sleep 0.1
    done
    grep -q "capturing on" "$E2E_OUT/kwire.err" || die "kwire live did not start capturing in 10 s"
    log "kwire live (pid ${PIDS[kwire]}) captures tcp and ($filter)"
}

# Stops kwire with SIGINT, bounded; sets KWIRE_RC to its exit code. (Not run in
# a subshell: only this shell can wait for its own children.)
KWIRE_RC=""
stop_kwire() {
    local pid="${PIDS[kwire]}" i rc=0
    kill -INT "$pid" 2>/dev/null || true
    for ((i = 0; i < KWIRE_STOP_SECS * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "kwire (pid $pid) ignored SIGINT for $KWIRE_STOP_SECS s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || rc=$?
    unset "PIDS[kwire]"
    KWIRE_RC="$rc"
}

# Copies each controller's quorum-state to OUTDIR/quorum-state-cN.json at a
# moment when all three agree on the leader, before anything is stopped (a node
# that is shutting down may write another state). Sets le="leader epoch".
snapshot_quorum() {
    local try id agreed
    for ((try = 0; try < 5; try++)); do
        le="$(wait_leader 30 1 1 2 3)"
        for id in 1 2 3; do
            cp "$RUN/c$id-data/__cluster_metadata-0/quorum-state" "$E2E_OUT/quorum-state-c$id.json"
        done
        agreed="$(python3 -c 'import json,sys
s={(d["leaderId"],d["leaderEpoch"]) for d in (json.load(open(f)) for f in sys.argv[1:])}
print("%d %d" % s.pop() if len(s)==1 else "")' "$E2E_OUT"/quorum-state-c{1,2,3}.json)"
        [[ "$agreed" == "$le" ]] && return 0
        log "quorum-state changed while it was copied ($le, then '$agreed'); again"
    done
    die "the controllers' quorum-state kept changing"
}

# ---------------------------------------------------------------- main
[[ -n "${KWIRE_BIN:-}" && -x "$KWIRE_BIN" ]] || die "set KWIRE_BIN to the kwire binary"
command -v java >/dev/null || skip "java is missing (Kafka 4.4 needs Java 17+)"
command -v mvn >/dev/null || skip "mvn is missing (it fetches Kafka 4.4.0)"
command -v ss >/dev/null || skip "ss (iproute2) is missing"
command -v python3 >/dev/null || skip "python3 is missing (reads quorum-state)"
command -v timeout >/dev/null || skip "timeout (coreutils) is missing"
e2e_setup_java

rm -f "$E2E_OUT"/result.txt "$E2E_OUT"/kwire.* "$E2E_OUT"/quorum-state-c*.json
fresh_cluster
start_kwire
# The whole cluster at once: the broker waits for the quorum by itself.
start_node c1; start_node c2; start_node c3; start_node broker
le="$(wait_leader 60 1 1 2 3)"
log "quorum up: leader ${le% *} at epoch ${le#* }"
wait_listen "$BROKER_PORT" 60
log "broker listens on 127.0.0.1:$BROKER_PORT"

run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.GroupConsume \
    "127.0.0.1:$BROKER_PORT" "$E2E_TOPIC" "$GROUP" 5 60
run_client 60 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.GroupCoordinator \
    "127.0.0.1:$BROKER_PORT" "$GROUP"
coordinator="$(grep '^coordinator ' "$RUN/clients.log" | tail -n 1)"
[[ -n "$coordinator" ]] || die "GroupCoordinator printed no coordinator (see $RUN/clients.log)"

# What the cluster says now, while kwire still listens: all three controllers
# agree on one leader (its Vote traffic is in the capture by then).
snapshot_quorum
sleep 1   # the last answers and ACKs
stop_kwire
log "kwire stopped (exit $KWIRE_RC): $(grep -c . "$E2E_OUT/kwire.ndjson" || true) messages"
{
    echo "leader ${le% *}"
    echo "epoch ${le#* }"
    echo "broker $BROKER_ID 127.0.0.1 $BROKER_PORT"
    echo "$coordinator"
    echo "group $GROUP"
    echo "kwire_rc $KWIRE_RC"
} >"$E2E_OUT/result.txt.tmp"
mv "$E2E_OUT/result.txt.tmp" "$E2E_OUT/result.txt"
log "done: $(tr '\n' ';' <"$E2E_OUT/result.txt")"
