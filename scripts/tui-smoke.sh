#!/usr/bin/env bash
# Drives the real `kwire tui` in tmux (send-keys, capture-pane): loading, the
# filter, the tree, the request/response jump, help, quitting, and the
# terminal restored after a normal exit and after a panic.
#
# usage: scripts/tui-smoke.sh            the smoke test (needs tmux)
#        scripts/tui-smoke.sh --big [N]  also measure time to first screen and
#                                        RSS on an N-message capture (default 1000000)
# KWIRE=path/to/kwire uses that binary instead of building target/release/kwire.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "needs tmux (apt-get install -y tmux)" >&2; exit 1; }
target=${CARGO_TARGET_DIR:-target}
if [ -z "${KWIRE:-}" ]; then
  cargo build --release --quiet --bin kwire
  KWIRE=$target/release/kwire
fi
KWIRE=$(realpath "$KWIRE")
session=kwire-smoke-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

fail() { echo "FAIL: $*" >&2; echo "--- screen:" >&2; screen >&2 || true; exit 1; }
screen() { tmux capture-pane -p -t "$session"; }
# wait_for TEXT [SECONDS]: until the screen shows TEXT (a fixed string).
wait_for() {
  local deadline=$((SECONDS + ${2:-20}))
  until screen | grep -qF -- "$1"; do
    [ $SECONDS -lt $deadline ] || fail "no \"$1\" on screen"
    sleep 0.05
  done
}
keys() { tmux send-keys -t "$session" "$@"; }
# start W H CMD...: a fresh session running CMD, then a report of how it ended and the tty modes.
start() {
  local w=$1 h=$2; shift 2
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -s "$session" -x "$w" -y "$h" \
    "$*; echo \"EXITED rc=\$?\"; stty -a | tr ' ;' '\n\n' | grep -E -x -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 600"
}
restored() {
  wait_for "EXITED rc=$1"
  wait_for "icanon"
  screen | grep -qE -- '^icanon echo' || fail "the terminal was left in raw mode"
  [ "$(tmux display -p -t "$session" '#{alternate_on}')" = 0 ] || fail "still on the alternate screen"
}

passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

cap=captures/kraft-initial-election.pcap
start 80 24 "$KWIRE" tui "$cap"
wait_for "248/248 msgs"
wait_for "loaded 476 packets"
wait_for "ApiVersions v5"
ok "loads $cap at 80x24"

keys / ; keys -l "vote error"; keys Enter
wait_for "1/248 msgs"
wait_for "filter: vote error"
wait_for "FENCED_"
ok "the filter narrows to the one refused vote"

keys / C-u; keys -l "vote"; keys Enter
wait_for "10/248 msgs"
keys g
wait_for "Frame 201:"
keys r
wait_for "Frame 214:"
keys r
wait_for "Frame 201:"
ok "r jumps between a request and its response"

keys Tab j j j Enter
wait_for "▸ RequestHeader"
keys Enter
wait_for "▾ RequestHeader"
ok "Enter collapses and expands a tree node"

keys Tab g l l l l
wait_for "cursor 0x0004"
wait_for "request_api_key int16 = 52 (Vote)"
ok "moving in the hex pane selects the field"

keys '?'
wait_for "kwire tui: keys"
keys x
sleep 0.2
screen | grep -qF "kwire tui: keys" && fail "help did not close"
ok "? shows help, any key closes it"

keys q
restored 0
ok "q quits and restores the terminal"

# A panic's terminal restore is tested by tests/tui_panic.rs (no test hook in the binary).

start 80 24 "$KWIRE" tui /nonexistent.pcap
wait_for "EXITED rc=1"
screen | grep -qF "kwire: cannot read /nonexistent.pcap" || fail "no reason given for a missing file"
ok "a missing file fails before the terminal is touched"

# Live capture on loopback needs capture rights; a tiny Kafka-shaped exchange drives it.
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null; then
  port=$((20000 + $$ % 10000))
  start 120 30 "$KWIRE" tui -i lo -f "'tcp port $port'" --port "$port"
  wait_for "live lo (tcp port $port)"
  sleep 0.5
  python3 - "$port" <<'PY'
import socket, struct, sys, threading, time
port = int(sys.argv[1])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(1)
def serve():
    c, _ = srv.accept()
    for _ in range(5):
        size = struct.unpack(">i", c.recv(4, socket.MSG_WAITALL))[0]
        req = c.recv(size, socket.MSG_WAITALL)
        body = req[4:8] + struct.pack(">hi", 0, 0)  # ApiVersions v0: corr, error, no keys
        c.sendall(struct.pack(">i", len(body)) + body)
    c.close()
t = threading.Thread(target=serve)
t.start()
cl = socket.create_connection(("127.0.0.1", port))
client = b"live\x1b[2Jsmoke"  # an ESC in the client id must arrive escaped
for corr in range(1, 6):
    body = struct.pack(">hhih", 18, 0, corr, len(client)) + client
    cl.sendall(struct.pack(">i", len(body)) + body)
    size = struct.unpack(">i", cl.recv(4, socket.MSG_WAITALL))[0]
    cl.recv(size, socket.MSG_WAITALL)
    time.sleep(0.05)
cl.close()
t.join()
PY
  wait_for "10/10 msgs"
  wait_for "[newest]"
  wait_for "0 dropped"
  wait_for 'client=live\x1b[2Jsmoke'
  wait_for "ApiVersions v0 response corr=5"
  keys q
  restored 0
  ok "live traffic on lo: follows the tail, shows drops, escapes the client id"
else
  echo "skip: live capture (needs root and python3)"
fi

echo "$passed passed, 0 failed"

if [ "${1:-}" = "--big" ]; then
  n=${2:-1000000}
  big=$target/bench/tui-$n.pcap
  if [ ! -f "$big" ]; then
    mkdir -p "$(dirname "$big")"
    cargo build --release --quiet --example gen_capture
    "$target/release/examples/gen_capture" --messages "$n" "$big" >/dev/null
  fi
  t0=$EPOCHREALTIME
  start 160 45 "$KWIRE" tui "$big"
  # The first screen that lists messages (the empty frame is drawn before any arrive).
  wait_for "FindCoordinator v" 60
  t1=$EPOCHREALTIME
  pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
  pid=$(pgrep -P "$pid" -f "kwire tui" | head -1)
  wait_for "$n/$n msgs" 300
  wait_for "loaded" 300
  t2=$EPOCHREALTIME
  rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
  hwm=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  keys / ; keys -l "response not_coordinator"; t3=$EPOCHREALTIME; keys Enter
  sleep 0.1
  until ! screen | tail -1 | grep -qF "filtering"; do sleep 0.02; done
  t4=$EPOCHREALTIME
  keys G; wait_for "Frame " 10
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v r="$rss" -v h="$hwm" -v n="$n" 'BEGIN{
    printf "%d messages: first screen with rows %.2f s, fully loaded %.2f s, RSS %.0f MiB (peak %.0f MiB), filter over all %.2f s\n",
      n, b - a, c - a, r / 1024, h / 1024, e - d }'
  keys q
  restored 0
fi
