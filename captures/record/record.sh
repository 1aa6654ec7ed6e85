#!/usr/bin/env bash
# Records kwire's fixture captures from a real Apache Kafka 4.4.0 KRaft cluster
# (3 controllers + 1 broker, all on 127.0.0.1) with tcpdump on lo.
#
# usage: record.sh all | SCENARIO... | verify | tshark-tls NAME
#   scenarios: kraft-initial-election kraft-reelection consumer-group-java
#              transactional-producer consumer-group-kafka-python
#              consumer-group-librdkafka tls-kafka-python tls-resumption
#              tls-kraft-election
#              records records-large
#   env: KWIRE_CTRL_PORTS (default "19301 19302 19303"), KWIRE_BROKER_PORT (19392),
#        KWIRE_BROKER_TLS_PORTS (default "19393 19394 19395": SSL listeners, any
#        suite / TLS 1.3 AES-128-GCM only / TLS 1.3 ChaCha20-Poly1305 only),
#        KWIRE_TLS_PROXY_PORT (19396: a TLS terminator in front of the broker),
#        KWIRE_RUN_DIR (default run/ here: the cluster's configs, data and logs)
#
# Writes captures/<scenario>.pcap (captures/records/ for the records scenarios);
# `verify` prints what tshark and Kafka's own parsers find in each capture;
# `records-truth` writes captures/records/truth/ (every record batch of every
# capture as Kafka's MemoryRecords reads it). Kafka's jars (lib/), the compiled client mains
# (target/), the Python venv (.venv/) and the cluster's data and logs (run/) all
# stay in this folder and are git-ignored. Every process started here is tracked
# by pid and stopped by the EXIT trap.
#
# Sourced (as e2e.sh does), it only defines the settings and functions and sets
# the EXIT trap; the main part below runs only when the script is executed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$(cd "$HERE/.." && pwd)"
RUN="${KWIRE_RUN_DIR:-$HERE/run}"
VENV="$HERE/.venv"

read -r -a CTRL_PORTS <<<"${KWIRE_CTRL_PORTS:-19301 19302 19303}"
BROKER_PORT="${KWIRE_BROKER_PORT:-19392}"
read -r -a TLS_PORTS <<<"${KWIRE_BROKER_TLS_PORTS:-19393 19394 19395}"
# tls-resumption's TLS terminator (clients/tls_proxy.py) in front of the broker.
TLS_PROXY_PORT="${KWIRE_TLS_PROXY_PORT:-19396}"
# The broker gets its SSL listeners only when a TLS scenario runs (set in main).
WITH_TLS=0
# Password of the throw-away test keystore made at record time.
TLS_PASS="kwire-test"
# The controllers' listener uses SSL too (tls-kraft-election only).
TLS_CONTROLLERS=0
# Java has no key log of its own: the extract-tls-secrets agent (Maven Central
# name.neykov:extract-tls-secrets, https://github.com/neykov/extract-tls-secrets)
# writes one per JVM; start_node passes AGENT_FOR[name] when set.
AGENT_VERSION="4.0.0"
declare -A AGENT_FOR=()
BROKER_ID=4
# A fixed cluster id (base64url of the 16 bytes "kwire-captures01") keeps runs alike.
CLUSTER_ID="a3dpcmUtY2FwdHVyZXMwMQ"
TOPIC="kwire-demo"
# Client library versions installed into the venv.
KAFKA_PYTHON_VERSION="3.0.12"
CONFLUENT_KAFKA_VERSION="2.16.1"
# kafka-python's LZ4 codec.
LZ4_VERSION="4.4.4"
# Small heaps: the machine has 2 cores shared with compilers.
JVM_OPTS=(-Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
          -Djava.awt.headless=true "-Dlog4j2.configurationFile=$HERE/log4j2.properties")

SCENARIOS=(kraft-initial-election kraft-reelection consumer-group-java
           transactional-producer consumer-group-kafka-python consumer-group-librdkafka
           tls-kafka-python tls-resumption tls-kraft-election
           records records-large)
RECORDS_TOPIC="kwire-records"

usage() {
    echo "usage: $(basename "$0") all | SCENARIO... | verify | records-truth" >&2
    echo "  scenarios: ${SCENARIOS[*]}" >&2
    exit 2
}

log() { echo "[record $(date +%H:%M:%S)] $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- processes
declare -A PIDS=()   # name -> pid of every process this script started
CAPTURE=""           # name of the capture tcpdump is writing

# stop NAME [SIGNAL]: signal one tracked process and wait (bounded) for it to go.
stop() {
    local name="$1" sig="${2:-TERM}" pid i
    pid="${PIDS[$name]:-}"
    [[ -n "$pid" ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill "-$sig" "$pid" 2>/dev/null || true
        kill -CONT "$pid" 2>/dev/null || true   # in case it was paused (kraft-reelection)
        for ((i = 0; i < 150; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "$name (pid $pid) ignored SIG$sig for 30 s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || true
    unset "PIDS[$name]"
}

running() {
    local pid="${PIDS[$1]:-}"
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

cleanup() {
    local rc=$? name
    trap - EXIT INT TERM
    # tcpdump first (SIGINT flushes the file), then clients, broker, controllers.
    for name in tcpdump client broker c3 c2 c1; do
        if [[ -n "${PIDS[$name]:-}" ]]; then
            [[ "$name" == tcpdump ]] && stop "$name" INT || stop "$name" TERM
        fi
    done
    for name in "${!PIDS[@]}"; do stop "$name" TERM; done
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- setup
setup_java() {
    local stamp="$HERE/lib/.built"
    if [[ ! -f "$stamp" || -n "$(find "$HERE/pom.xml" "$HERE/src" -newer "$stamp" -print -quit)" ]]; then
        log "fetching Kafka 4.4.0 into lib/ and compiling the client mains"
        (cd "$HERE" && mvn -q -B package)
        touch "$stamp"
    fi
}

setup_python() {
    if [[ ! -x "$VENV/bin/python" ]]; then
        log "creating the Python venv in .venv/"
        python3 -m venv "$VENV"
    fi
    if ! "$VENV/bin/python" -c "import kafka, confluent_kafka, lz4" 2>/dev/null; then
        "$VENV/bin/pip" install -q "kafka-python==$KAFKA_PYTHON_VERSION" \
            "confluent-kafka==$CONFLUENT_KAFKA_VERSION" "lz4==$LZ4_VERSION"
    fi
}

# capture_file NAME: where scenario NAME's capture goes.
capture_file() {
    case "$1" in
        records*) echo "$OUT/records/$1.pcap" ;;
        *) echo "$OUT/$1.pcap" ;;
    esac
}

port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }

# wait_listen PORT SECONDS: until something listens on 127.0.0.1:PORT.
wait_listen() {
    local port="$1" secs="$2" i
    for ((i = 0; i < secs * 5; i++)); do
        ss -Hltn "sport = :$port" | grep -q . && return 0
        sleep 0.2
    done
    die "nothing listens on port $port after ${secs} s (see $RUN/*.log)"
}

# A plain command (not a function), so that `"${JAVA[@]}" ... &` leaves $! = the JVM's pid.
JAVA=(java "${JVM_OPTS[@]}" -cp "$HERE/target/classes:$HERE/lib/*")

voters() {
    local i v=()
    for i in 1 2 3; do v+=("$i@127.0.0.1:${CTRL_PORTS[$((i - 1))]}"); done
    (IFS=,; echo "${v[*]}")
}

# ---------------------------------------------------------------- cluster
# fresh_cluster: new data dirs and configs, storage formatted. Static quorum
# (controller.quorum.voters), so every node is formatted alike with one command.
fresh_cluster() {
    local id port ctrl_proto=PLAINTEXT
    if ((TLS_CONTROLLERS)); then ctrl_proto=SSL; fi
    for port in "${CTRL_PORTS[@]}" "$BROKER_PORT"; do
        port_free "$port" || die "port $port is taken; set KWIRE_CTRL_PORTS / KWIRE_BROKER_PORT"
    done
    rm -rf "$RUN"
    mkdir -p "$RUN"
    if ((WITH_TLS)); then make_certs; fi
    for id in 1 2 3; do
        port="${CTRL_PORTS[$((id - 1))]}"
        cat >"$RUN/c$id.properties" <<EOF
process.roles=controller
node.id=$id
listeners=CONTROLLER://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:$ctrl_proto
controller.quorum.voters=$(voters)
controller.quorum.election.timeout.ms=1000
controller.quorum.fetch.timeout.ms=2000
controller.quorum.election.backoff.max.ms=1000
log.dirs=$RUN/c$id-data
EOF
        if ((TLS_CONTROLLERS)); then tls_props >>"$RUN/c$id.properties"; fi
    done
    local listeners="PLAINTEXT://127.0.0.1:$BROKER_PORT" protomap="CONTROLLER:$ctrl_proto,PLAINTEXT:PLAINTEXT"
    if ((WITH_TLS)); then
        listeners+=",SSL://127.0.0.1:${TLS_PORTS[0]},TLSAES128://127.0.0.1:${TLS_PORTS[1]}"
        listeners+=",TLSCHACHA://127.0.0.1:${TLS_PORTS[2]}"
        protomap+=",SSL:SSL,TLSAES128:SSL,TLSCHACHA:SSL"
    fi
    cat >"$RUN/broker.properties" <<EOF
process.roles=broker
node.id=$BROKER_ID
listeners=$listeners
advertised.listeners=$listeners
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=$protomap
controller.quorum.voters=$(voters)
log.dirs=$RUN/broker-data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
group.initial.rebalance.delay.ms=0
# Room for the records-large scenario's 1,000,000-byte value.
message.max.bytes=2097152
EOF
    if ((WITH_TLS)); then
        tls_props >>"$RUN/broker.properties"
        cat >>"$RUN/broker.properties" <<EOF
listener.name.tlsaes128.ssl.enabled.protocols=TLSv1.3
listener.name.tlsaes128.ssl.cipher.suites=TLS_AES_128_GCM_SHA256
listener.name.tlschacha.ssl.enabled.protocols=TLSv1.3
listener.name.tlschacha.ssl.cipher.suites=TLS_CHACHA20_POLY1305_SHA256
EOF
    fi
    for id in c1 c2 c3 broker; do
        "${JAVA[@]}" kafka.tools.StorageTool format -t "$CLUSTER_ID" \
            -c "$RUN/$id.properties" >>"$RUN/format.log" 2>&1 \
            || die "formatting $id failed (see $RUN/format.log)"
    done
    log "formatted cluster $CLUSTER_ID in run/"
}

# make_certs: a throw-away self-signed RSA certificate for 127.0.0.1 (keytool),
# as the broker's PKCS12 keystore and as the clients' CA file. Made at record
# time in run/tls/, never committed.
make_certs() {
    mkdir -p "$RUN/tls"
    rm -f "$RUN/tls/broker.p12" "$RUN/tls/ca.pem"
    keytool -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 30 \
        -dname "CN=127.0.0.1" -ext "SAN=IP:127.0.0.1,DNS:localhost" \
        -keystore "$RUN/tls/broker.p12" -storetype PKCS12 \
        -storepass "$TLS_PASS" -keypass "$TLS_PASS" >>"$RUN/format.log" 2>&1 \
        || die "keytool failed (see $RUN/format.log)"
    keytool -exportcert -rfc -alias broker -keystore "$RUN/tls/broker.p12" \
        -storepass "$TLS_PASS" -file "$RUN/tls/ca.pem" >>"$RUN/format.log" 2>&1 \
        || die "keytool -exportcert failed (see $RUN/format.log)"
    keytool -importcert -noprompt -alias broker -file "$RUN/tls/ca.pem" \
        -keystore "$RUN/tls/trust.p12" -storetype PKCS12 -storepass "$TLS_PASS" \
        >>"$RUN/format.log" 2>&1 || die "keytool -importcert failed (see $RUN/format.log)"
    openssl pkcs12 -in "$RUN/tls/broker.p12" -nodes -passin "pass:$TLS_PASS" \
        -out "$RUN/tls/certkey.pem" >>"$RUN/format.log" 2>&1 \
        || die "openssl pkcs12 failed (see $RUN/format.log)"
}

# setup_agent: fetch the key-log agent for the Java nodes into lib/agent/.
setup_agent() {
    local jar="$HERE/lib/agent/extract-tls-secrets-$AGENT_VERSION.jar"
    if [[ ! -f "$jar" ]]; then
        log "fetching extract-tls-secrets $AGENT_VERSION into lib/agent/"
        (cd "$HERE" && mvn -q -B dependency:copy \
            "-Dartifact=name.neykov:extract-tls-secrets:$AGENT_VERSION" \
            -DoutputDirectory="$HERE/lib/agent")
    fi
    AGENT_JAR="$jar"
}

# tls_props: the SSL settings every node shares (its keystore, and the
# certificate as truststore for the controller connections it opens).
tls_props() {
    cat <<EOF
ssl.keystore.type=PKCS12
ssl.keystore.location=$RUN/tls/broker.p12
ssl.keystore.password=$TLS_PASS
ssl.key.password=$TLS_PASS
ssl.truststore.type=PKCS12
ssl.truststore.location=$RUN/tls/trust.p12
ssl.truststore.password=$TLS_PASS
ssl.client.auth=none
EOF
}

# start_node NAME: start controller c1..c3 or the broker from run/NAME.properties.
start_node() {
    local name="$1"
    local agent=()
    if [[ -n "${AGENT_FOR[$name]:-}" ]]; then agent=("-javaagent:$AGENT_JAR=${AGENT_FOR[$name]}"); fi
    "${JAVA[@]}" "${agent[@]}" kafka.Kafka "$RUN/$name.properties" >>"$RUN/$name.log" 2>&1 &
    PIDS[$name]=$!
    log "started $name (pid ${PIDS[$name]})"
}

# quorum_state ID: "leaderId leaderEpoch" as controller ID last wrote it to disk.
quorum_state() {
    local f="$RUN/c$1-data/__cluster_metadata-0/quorum-state"
    [[ -f "$f" ]] || { echo "-1 -1"; return; }
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("leaderId",-1), d.get("leaderEpoch",-1))' "$f" 2>/dev/null \
        || echo "-1 -1"
}

# wait_leader SECONDS [MIN_EPOCH] [IDS...]: until all listed controllers (default:
# the running ones) agree on one leader at epoch >= MIN_EPOCH; echoes "leader epoch".
wait_leader() {
    local secs="$1" min_epoch="${2:-0}" i id ids=() st leader epoch agree
    shift 2 || shift $#
    if (($#)); then ids=("$@"); else
        for id in 1 2 3; do running "c$id" && ids+=("$id"); done
    fi
    for ((i = 0; i < secs * 5; i++)); do
        agree=1 leader="" epoch=""
        for id in "${ids[@]}"; do
            st="$(quorum_state "$id")"
            if [[ "$st" == "-1 "* ]] || ((${st#* } < min_epoch)) \
                || [[ -n "$leader" && "$st" != "$leader $epoch" ]]; then
                agree=0; break
            fi
            leader="${st% *}" epoch="${st#* }"
        done
        if ((agree)) && [[ -n "$leader" ]]; then echo "$leader $epoch"; return 0; fi
        sleep 0.2
    done
    die "controllers ${ids[*]} agreed on no leader (epoch >= $min_epoch) in ${secs} s"
}

start_quorum() {
    start_node c1; start_node c2; start_node c3
    local le; le="$(wait_leader 90 1 1 2 3)"
    log "quorum up: leader ${le% *} at epoch ${le#* }"
}

ensure_quorum() {
    if running c1 && running c2 && running c3; then return 0; fi
    [[ -z "${PIDS[c1]:-}${PIDS[c2]:-}${PIDS[c3]:-}" ]] || die "a controller died (see $RUN/c*.log)"
    fresh_cluster
    start_quorum
}

start_broker() {
    start_node broker
    wait_listen "$BROKER_PORT" 90
    if ((WITH_TLS)); then
        local p
        for p in "${TLS_PORTS[@]}"; do wait_listen "$p" 30; done
    fi
    log "broker listens on 127.0.0.1:$BROKER_PORT"
}

ensure_broker() {
    ensure_quorum
    running broker || start_broker
}

# ---------------------------------------------------------------- capture
# capture_start NAME PORT...: tcpdump on lo, full packets, only those ports.
capture_start() {
    local name="$1" filter="" port i; shift
    for port in "$@"; do filter+="${filter:+ or }port $port"; done
    CAPTURE="$name"
    local file; file="$(capture_file "$name")"
    mkdir -p "$(dirname "$file")"
    rm -f "$file"
    : >"$RUN/tcpdump-$name.log"
    # -U writes each packet at once; -c bounds the file whatever happens.
    tcpdump -i lo -s 0 -U -c 20000 -w "$file" "tcp and ($filter)" \
        >"$RUN/tcpdump-$name.log" 2>&1 &
    PIDS[tcpdump]=$!
    for ((i = 0; i < 50; i++)); do
        grep -q "listening on" "$RUN/tcpdump-$name.log" && break
        running tcpdump || die "tcpdump failed: $(cat "$RUN/tcpdump-$name.log")"
        sleep 0.2
    done
    log "capturing $name.pcap (tcp and ($filter))"
}

capture_stop() {
    sleep 1   # let the last answers and ACKs land
    stop tcpdump INT
    log "$CAPTURE.pcap: $(grep -h 'packets captured' "$RUN/tcpdump-$CAPTURE.log" || true)"
}

# run_client SECONDS CMD...: one client process in the foreground, bounded in time.
run_client() {
    local secs="$1" i; shift
    "$@" >>"$RUN/clients.log" 2>&1 &
    PIDS[client]=$!
    for ((i = 0; i < secs * 5; i++)); do
        running client || break
        sleep 0.2
    done
    if running client; then
        stop client TERM
        die "client $1 did not finish in ${secs} s (see $RUN/clients.log)"
    fi
    local rc=0
    wait "${PIDS[client]}" || rc=$?
    unset "PIDS[client]"
    ((rc == 0)) || die "client $* exited $rc (see $RUN/clients.log)"
    tail -n 1 "$RUN/clients.log" >&2
}

# ---------------------------------------------------------------- scenarios
# kraft-initial-election: capture the controller ports from before the first
# controller starts until all three agree on a leader and have fetched a while.
scenario_kraft_initial_election() {
    stop broker; stop c1; stop c2; stop c3
    fresh_cluster
    capture_start kraft-initial-election "${CTRL_PORTS[@]}"
    start_quorum
    sleep 3
    capture_stop
}

# kraft-reelection: crash the leader (SIGKILL), let the other two elect a new one
# and restart the crashed node; then stop the new leader cleanly (SIGTERM, so it
# resigns with EndQuorumEpoch), and restart that one too; then pause a follower
# (SIGSTOP), crash and restart the leader so the other two elect without it, and
# resume the follower (SIGCONT) with its stale epoch.
scenario_kraft_reelection() {
    ensure_quorum
    local le old epoch new
    le="$(wait_leader 60 1)"
    old="${le% *}" epoch="${le#* }"
    capture_start kraft-reelection "${CTRL_PORTS[@]}"
    sleep 2
    log "crashing leader c$old (epoch $epoch) with SIGKILL"
    stop "c$old" KILL
    le="$(wait_leader 60 $((epoch + 1)))"
    new="${le% *}" epoch="${le#* }"
    log "new leader c$new at epoch $epoch; restarting c$old"
    sleep 2
    start_node "c$old"
    le="$(wait_leader 90 "$epoch" 1 2 3)"
    log "c$old rejoined: leader ${le% *} epoch ${le#* }"
    sleep 2
    old="$new"
    log "stopping leader c$old (epoch $epoch) with SIGTERM"
    stop "c$old" TERM
    le="$(wait_leader 60 $((epoch + 1)))"
    new="${le% *}" epoch="${le#* }"
    log "new leader c$new at epoch $epoch; restarting c$old"
    sleep 2
    start_node "c$old"
    le="$(wait_leader 90 "$epoch" 1 2 3)"
    log "c$old rejoined: leader ${le% *} epoch ${le#* }"
    sleep 2
    # A follower that sleeps through an election wakes up with a stale epoch.
    local lead="$new" paused other id
    for id in 1 2 3; do [[ "$id" != "$lead" ]] && paused="$id" && break; done
    for id in 1 2 3; do [[ "$id" != "$lead" && "$id" != "$paused" ]] && other="$id"; done
    log "pausing follower c$paused (SIGSTOP), crashing leader c$lead (epoch $epoch)"
    kill -STOP "${PIDS[c$paused]}"
    stop "c$lead" KILL
    sleep 2
    start_node "c$lead"
    le="$(wait_leader 90 $((epoch + 1)) "$lead" "$other")"
    log "leader ${le% *} at epoch ${le#* } without c$paused; resuming c$paused (SIGCONT)"
    epoch="${le#* }"
    kill -CONT "${PIDS[c$paused]}"
    le="$(wait_leader 90 "$epoch" 1 2 3)"
    log "c$paused caught up: leader ${le% *} epoch ${le#* }"
    sleep 2
    capture_stop
}

# consumer-group-java: start the broker under capture and the Java consumer at
# once, so its first FindCoordinator requests meet a broker without
# __consumer_offsets (COORDINATOR_NOT_AVAILABLE) before the group forms.
scenario_consumer_group_java() {
    ensure_quorum
    stop broker
    capture_start consumer-group-java "$BROKER_PORT"
    start_node broker
    run_client 120 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.GroupConsume \
        "127.0.0.1:$BROKER_PORT" "$TOPIC" kwire-java-group 5 90
    capture_stop
}

scenario_transactional_producer() {
    ensure_broker
    capture_start transactional-producer "$BROKER_PORT"
    run_client 120 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.TxProduce \
        "127.0.0.1:$BROKER_PORT" "$TOPIC" kwire-txn kwire-txn-group
    capture_stop
}

# seed: make sure the topic holds records before a Python client reads them
# (outside any capture).
seed() {
    run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.Produce \
        "127.0.0.1:$BROKER_PORT" "$TOPIC" 5 kwire-java-seed
}

scenario_consumer_group_kafka_python() {
    setup_python
    ensure_broker
    seed
    capture_start consumer-group-kafka-python "$BROKER_PORT"
    run_client 90 "$VENV/bin/python" "$HERE/clients/kafka_python_consume.py" \
        "127.0.0.1:$BROKER_PORT" "$TOPIC" kwire-kafka-python-group 5 60
    capture_stop
}

scenario_consumer_group_librdkafka() {
    setup_python
    ensure_broker
    seed
    capture_start consumer-group-librdkafka "$BROKER_PORT"
    run_client 90 "$VENV/bin/python" "$HERE/clients/librdkafka_consume.py" \
        "127.0.0.1:$BROKER_PORT" "$TOPIC" kwire-librdkafka-group 5 60
    capture_stop
}

# ---------------------------------------------------------------- issue 13 scenarios
# Topic admin, SASL, a rebalancing group and topic ids. Each one also writes
# captures/verify/<scenario>.txt, Kafka's own parsers' view (Verify), the truth
# kwire's tests compare with.
SCENARIOS+=(topic-admin sasl-plain-scram group-rebalance produce-fetch-topic-ids)
SASL_PLAIN_PORT="${KWIRE_SASL_PLAIN_PORT:-19395}"
SASL_SCRAM_PORT="${KWIRE_SASL_SCRAM_PORT:-19396}"

# write_truth NAME PORT...: Verify's output for captures/NAME.pcap, path relative.
write_truth() {
    local name="$1"; shift
    mkdir -p "$OUT/verify"
    (cd "$OUT" && "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.Verify "$name.pcap" "$@") \
        >"$OUT/verify/$name.txt"
    log "verify/$name.txt: $(sed -n 3p "$OUT/verify/$name.txt")"
}

scenario_topic_admin() {
    ensure_broker
    capture_start topic-admin "$BROKER_PORT"
    run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.TopicAdmin \
        "127.0.0.1:$BROKER_PORT" kwire-admin-topic "$BROKER_ID"
    capture_stop
    write_truth topic-admin "$BROKER_PORT"
}

# sasl-plain-scram: restart the broker with two more listeners, SASL_PLAINTEXT
# with PLAIN and with SCRAM-SHA-256 (test credentials only), set the SCRAM
# credential outside the capture, then write one record through each.
scenario_sasl_plain_scram() {
    ensure_quorum
    stop broker
    local f="$RUN/broker.properties"
    if ! grep -q '^listener.name.saslplain' "$f"; then
        sed -i -e "s|^listeners=.*|&,SASLPLAIN://127.0.0.1:$SASL_PLAIN_PORT,SASLSCRAM://127.0.0.1:$SASL_SCRAM_PORT|" \
            -e "s|^advertised.listeners=.*|&,SASLPLAIN://127.0.0.1:$SASL_PLAIN_PORT,SASLSCRAM://127.0.0.1:$SASL_SCRAM_PORT|" \
            -e "s|^listener.security.protocol.map=.*|&,SASLPLAIN:SASL_PLAINTEXT,SASLSCRAM:SASL_PLAINTEXT|" "$f"
        cat >>"$f" <<'EOF2'
listener.name.saslplain.sasl.enabled.mechanisms=PLAIN
listener.name.saslplain.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_kwire-plain="kwire-plain-test-secret";
listener.name.saslscram.sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.saslscram.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
EOF2
    fi
    start_broker
    wait_listen "$SASL_SCRAM_PORT" 30
    run_client 60 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.SaslClients scram-user \
        "127.0.0.1:$BROKER_PORT" kwire-scram kwire-scram-test-secret
    capture_start sasl-plain-scram "$SASL_PLAIN_PORT" "$SASL_SCRAM_PORT"
    run_client 60 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.SaslClients produce \
        "127.0.0.1:$SASL_PLAIN_PORT" PLAIN kwire-plain kwire-plain-test-secret "$TOPIC"
    run_client 60 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.SaslClients produce \
        "127.0.0.1:$SASL_SCRAM_PORT" SCRAM-SHA-256 kwire-scram kwire-scram-test-secret "$TOPIC"
    capture_stop
    write_truth sasl-plain-scram "$SASL_PLAIN_PORT" "$SASL_SCRAM_PORT"
}

# group-rebalance: three classic members of one group on a 3-partition topic
# (created outside the capture): join, join, join, one expires, one leaves.
scenario_group_rebalance() {
    ensure_broker
    run_client 60 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.TopicAdmin \
        "127.0.0.1:$BROKER_PORT" kwire-rebalance-topic "$BROKER_ID" create 3
    capture_start group-rebalance "$BROKER_PORT"
    run_client 180 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.GroupRebalance \
        "127.0.0.1:$BROKER_PORT" kwire-rebalance-topic kwire-rebalance-group
    capture_stop
    write_truth group-rebalance "$BROKER_PORT"
}

scenario_produce_fetch_topic_ids() {
    ensure_broker
    capture_start produce-fetch-topic-ids "$BROKER_PORT"
    run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.TopicIdsProduceFetch \
        "127.0.0.1:$BROKER_PORT" kwire-topic-ids 3
    capture_stop
    write_truth produce-fetch-topic-ids "$BROKER_PORT"
}

# tls-kafka-python: kafka-python producers and consumer groups on the SSL
# listeners, each run with its own TLS version and cipher suite, all writing
# their secrets to captures/tls-kafka-python.keys (test keys only).
TLS_RUNS=(
    "1 tls13"                                  # TLS_AES_128_GCM_SHA256 (listener allows only it)
    "0 tls13"                                  # the broker's pick: TLS_AES_256_GCM_SHA384
    "2 tls13"                                  # TLS_CHACHA20_POLY1305_SHA256
    "0 tls12:ECDHE-RSA-AES128-GCM-SHA256"      # 0xC02F
    "0 tls12:ECDHE-RSA-CHACHA20-POLY1305"      # 0xCCA8
    "0 tls12:AES256-GCM-SHA384"                # 0x009D, RSA key exchange
)
scenario_tls_kafka_python() {
    setup_python
    ensure_broker
    local keys="$OUT/tls-kafka-python.keys" run idx mode
    rm -f "$keys"
    capture_start tls-kafka-python "${TLS_PORTS[@]}"
    for run in "${TLS_RUNS[@]}"; do
        read -r idx mode <<<"$run"
        run_client 120 "$VENV/bin/python" "$HERE/clients/kafka_python_tls.py" \
            "127.0.0.1:${TLS_PORTS[$idx]}" kwire-tls "kwire-tls-group-$idx-${mode//[:]/-}" 3 \
            "$RUN/tls/ca.pem" "$keys" "$mode"
    done
    capture_stop
    chmod 644 "$keys"
}

# tls-resumption: raw TLS sockets (Python ssl) resume a session, TLS 1.2
# (ticket) and TLS 1.3 (PSK from a NewSessionTicket), one ApiVersions each.
# Kafka's Java listener never resumes a session, so the TLS ends at a TLS
# terminator (clients/tls_proxy.py, OpenSSL) that relays to the broker.
scenario_tls_resumption() {
    setup_python
    ensure_broker
    local keys="$OUT/tls-resumption.keys"
    rm -f "$keys"
    port_free "$TLS_PROXY_PORT" || die "port $TLS_PROXY_PORT is taken; set KWIRE_TLS_PROXY_PORT"
    "$VENV/bin/python" "$HERE/clients/tls_proxy.py" "$TLS_PROXY_PORT" "$BROKER_PORT" \
        "$RUN/tls/certkey.pem" >>"$RUN/proxy.log" 2>&1 &
    PIDS[proxy]=$!
    wait_listen "$TLS_PROXY_PORT" 30
    capture_start tls-resumption "$TLS_PROXY_PORT"
    run_client 60 "$VENV/bin/python" "$HERE/clients/tls_resume.py" 127.0.0.1 "$TLS_PROXY_PORT" \
        "$RUN/tls/ca.pem" "$keys"
    capture_stop
    stop proxy
    chmod 644 "$keys"
}

# tls-kraft-election: like kraft-initial-election, but the controllers talk SSL
# (TLS 1.3, Java's choice of suite) and each JVM writes its key log through the
# agent; the logs are merged into captures/tls-kraft-election.keys.
scenario_tls_kraft_election() {
    stop broker; stop c1; stop c2; stop c3
    setup_agent
    TLS_CONTROLLERS=1
    local keys="$OUT/tls-kraft-election.keys" id
    rm -f "$keys"
    fresh_cluster
    for id in 1 2 3; do AGENT_FOR[c$id]="$RUN/keys-c$id.log"; done
    capture_start tls-kraft-election "${CTRL_PORTS[@]}"
    start_quorum
    sleep 3
    capture_stop
    stop c1; stop c2; stop c3
    AGENT_FOR=()
    # Both ends log each session: keep every line once.
    cat "$RUN"/keys-c*.log | sort -u >"$keys"
    chmod 644 "$keys"
}

# tshark_tls NAME: what tshark finds inside the TLS of a capture, decrypted with
# its key log and decoded as Kafka: one line per Kafka message, tab-separated
# frame, tcp stream, request key, version, correlation id, response key.
tshark_tls() {
    local f="$OUT/$1.pcap" k="$OUT/$1.keys" port ports dargs=()
    ports=("${TLS_PORTS[@]}")
    if [[ "$1" == tls-kraft-* ]]; then ports=("${CTRL_PORTS[@]}"); fi
    if [[ "$1" == tls-resumption ]]; then ports=("$TLS_PROXY_PORT"); fi
    for port in "${ports[@]}"; do
        dargs+=(-d "tcp.port==$port,tls" -d "tls.port==$port,kafka")
    done
    tshark -r "$f" -o "tls.keylog_file:$k" "${dargs[@]}" -Y kafka -T fields \
        -e frame.number -e tcp.stream -e kafka.request_key -e kafka.api_version \
        -e kafka.correlation_id -e kafka.response_key 2>/dev/null
}

# records: one batch per codec from the Java producer (none, gzip, snappy, lz4,
# zstd), from kafka-python (gzip, lz4) and from librdkafka (gzip, snappy, zstd);
# records with headers, null keys and null values; a transaction that commits
# and one that aborts (their markers are control batches); then a consumer
# fetching all of it from offset 0, read_uncommitted.
scenario_records() {
    setup_python
    ensure_broker
    local boot="127.0.0.1:$BROKER_PORT"
    capture_start records "$BROKER_PORT"
    run_client 120 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.RecordsProduce \
        "$boot" "$RECORDS_TOPIC" none,gzip,snappy,lz4,zstd
    run_client 90 "$VENV/bin/python" "$HERE/clients/kafka_python_produce.py" \
        "$boot" "$RECORDS_TOPIC" gzip,lz4
    run_client 90 "$VENV/bin/python" "$HERE/clients/librdkafka_produce.py" \
        "$boot" "$RECORDS_TOPIC" gzip,snappy,zstd
    run_client 120 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.TxProduce \
        "$boot" "$RECORDS_TOPIC" kwire-records-txn kwire-records-txn-group
    # 15 + 6 + 9 records, 3 committed and 1 aborted.
    run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.RecordsConsume \
        "$boot" "$RECORDS_TOPIC" 34 60
    capture_stop
}

# records-large: one uncompressed 1,000,000-byte value, produced and fetched.
scenario_records_large() {
    ensure_broker
    local boot="127.0.0.1:$BROKER_PORT"
    capture_start records-large "$BROKER_PORT"
    run_client 120 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.RecordsProduce \
        "$boot" "$RECORDS_TOPIC-large" LARGE
    run_client 90 "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.RecordsConsume \
        "$boot" "$RECORDS_TOPIC-large" 1 60
    capture_stop
}

# records-truth: Kafka's own reading of every records field in every capture,
# ours (captures/*.pcap) and the public ones (../shared/captures-public, values
# as length and CRC-32 only), and fixtures.bin: batches that Kafka's
# MemoryRecordsBuilder writes in every magic and codec; for tests/records_kafka.rs.
records_truth() {
    local f s dir="$OUT/records/truth" pub
    mkdir -p "$dir"
    for s in "${SCENARIOS[@]}"; do
        f="$(capture_file "$s")"
        [[ -f "$f" ]] || continue
        # shellcheck disable=SC2046
        "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.Verify --records "$f" $(capture_ports "$s") \
            >"$dir/$s.txt"
        log "$s: $(grep -c '^REC' "$dir/$s.txt" || true) records in $(grep -c '^BATCH' "$dir/$s.txt" || true) batches"
    done
    "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.RecordsFixtures "$dir/fixtures"
    pub="$(cd "$OUT/../.." && pwd)/shared/captures-public"
    [[ -d "$pub" ]] || pub="$(cd "$OUT/../../.." 2>/dev/null && pwd)/shared/captures-public"
    if [[ -d "$pub" ]]; then
        mkdir -p "$RUN"
        for f in "$pub"/*.pcap "$pub"/*.pcapng; do
            s="$(basename "$f")"
            s="${s%.pcap*}"
            if [[ "$f" == *.pcapng ]]; then
                # Verify reads classic pcap only.
                editcap -F pcap "$f" "$RUN/$s.pcap" || continue
                f="$RUN/$s.pcap"
            fi
            "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.Verify --records-digest "$f" 9092 36333 \
                >"$dir/public-$s.txt" 2>/dev/null || true
            if grep -q '^FIELD' "$dir/public-$s.txt"; then
                log "public $s: $(grep -c '^REC' "$dir/public-$s.txt" || true) records"
            else
                rm -f "$dir/public-$s.txt"
            fi
        done
    fi
}

# ---------------------------------------------------------------- verify
# capture_ports NAME: the Kafka server ports a capture was filtered on.
capture_ports() {
    case "$1" in
        kraft-*) echo "${CTRL_PORTS[*]}" ;;
        sasl-*) echo "$SASL_PLAIN_PORT $SASL_SCRAM_PORT" ;;
        *) echo "$BROKER_PORT" ;;
    esac
}

# verify: a second and a third opinion on every capture: tshark's Kafka dissector
# (request/response counts per api key and version, error codes it can read) and
# Kafka's own parsers (target/classes kwire.record.Verify). Prints to stdout.
verify() {
    local s f port ports dargs
    command -v tshark >/dev/null || die "tshark is missing (apt-get install -y tshark)"
    for s in "${SCENARIOS[@]}"; do
        f="$(capture_file "$s")"
        [[ -f "$f" ]] || { echo "== $s.pcap: missing"; continue; }
        if [[ "$s" == tls-* ]]; then
            echo "== $s.pcap ($(stat -c %s "$f") bytes), decrypted with $s.keys"
            tshark_tls "$s" | awk -F'\t' '$3 != "" { n[$3 "/v" $4]++ }
                END { for (x in n) print "  request  " x ": " n[x] }' | sort -V
            continue
        fi
        read -r -a ports <<<"$(capture_ports "$s")"
        dargs=()
        for port in "${ports[@]}"; do dargs+=(-d "tcp.port==$port,kafka"); done
        echo "== $s.pcap ($(stat -c %s "$f") bytes, $(tshark -r "$f" 2>/dev/null | wc -l) packets)"
        echo "-- tshark $(tshark -v 2>/dev/null | head -n 1 | awk '{print $3}'): -Y kafka, count api_key/vN"
        tshark -r "$f" "${dargs[@]}" -Y kafka -T fields -e frame.number \
            -e kafka.request_key -e kafka.api_version -e kafka.correlation_id \
            -e kafka.response_key -e kafka.response.version -e kafka.error 2>/dev/null \
            | awk -F'\t' '
                { n = split($2, k, ","); split($3, v, ",");
                  for (i = 1; i <= n; i++) req[k[i] "/v" v[i]]++;
                  n = split($5, k, ","); split($6, v, ",");
                  for (i = 1; i <= n; i++) rsp[k[i] "/v" v[i]]++;
                  n = split($7, e, ",");
                  for (i = 1; i <= n; i++) if (e[i] != 0) err[$5 " error " e[i]]++ }
                END { for (x in req) print "  request  " x ": " req[x];
                      for (x in rsp) print "  response " x ": " rsp[x];
                      for (x in err) print "  response " x ": " err[x] }' | sort -V
        echo "-- kafka-clients 4.4.0 parsers:"
        "${JAVA[@]}" -Dkwire.log.level=WARN kwire.record.Verify "$f" "${ports[@]}" | sed 's/^/  /'
    done
}

# ---------------------------------------------------------------- main
main() {
    (($#)) || usage
    if [[ "$1" == tshark-tls ]]; then
        (($# == 2)) || usage
        tshark_tls "$2"
        exit 0
    fi
    if [[ "$1" == verify ]]; then
        (($# == 1)) || usage
        setup_java
        verify
        exit 0
    fi
    if [[ "$1" == records-truth ]]; then
        (($# == 1)) || usage
        setup_java
        records_truth
        exit 0
    fi
    if [[ "$1" == all ]]; then
        (($# == 1)) || usage
        set -- "${SCENARIOS[@]}"
    fi
    for s in "$@"; do
        [[ " ${SCENARIOS[*]} " == *" $s "* ]] || usage
        if [[ "$s" == tls-* ]]; then WITH_TLS=1; fi
    done
    command -v tcpdump >/dev/null || die "tcpdump is missing (apt-get install -y tcpdump)"
    command -v java >/dev/null || die "java is missing"
    command -v mvn >/dev/null || die "mvn is missing"
    setup_java
    for s in "$@"; do
        log "=== $s"
        "scenario_${s//-/_}"
    done
    log "all done; the cluster is stopped by the exit trap"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    main "$@"
fi
