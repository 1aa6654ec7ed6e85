"""Producer and consumer-group member over TLS, written with kafka-python. Both
write their TLS secrets to KEYLOG (ssl.SSLContext.keylog_filename, NSS format),
so that the capture can be decrypted.

usage: kafka_python_tls.py BOOTSTRAP TOPIC GROUP COUNT CAFILE KEYLOG MODE
  MODE: tls13 (whatever suite the listener picks), or tls12:OPENSSL_CIPHER
        (TLS 1.2 with that one cipher, e.g. tls12:ECDHE-RSA-AES128-GCM-SHA256)
"""
import ssl
import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer


def context(cafile: str, keylog: str, mode: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile)
    ctx.check_hostname = True  # the test certificate names IP 127.0.0.1
    ctx.keylog_filename = keylog
    if mode == "tls13":
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    elif mode.startswith("tls12:"):
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(mode.split(":", 1)[1])
    else:
        raise SystemExit(f"unknown mode {mode}")
    return ctx


def main() -> int:
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, group, count, cafile, keylog, mode = sys.argv[1:]
    count = int(count)
    tag = mode.replace(":", "-").lower()
    common = dict(
        bootstrap_servers=bootstrap,
        security_protocol="SSL",
        ssl_context=context(cafile, keylog, mode),
    )
    producer = KafkaProducer(client_id=f"kwire-tls-producer-{tag}", acks="all", **common)
    for i in range(count):
        producer.send(topic, key=f"k{i}".encode(), value=f"kwire tls record {i} ({mode})".encode()).get(30)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(
        topic,
        group_id=group,
        client_id=f"kwire-tls-consumer-{tag}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **common,
    )
    seen, deadline = 0, time.monotonic() + 60
    while seen < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            seen += len(records)
    consumer.commit()
    consumer.close()
    print(f"kafka-python {kafka.__version__} {mode}: produced {count}, group {group} consumed {seen}")
    return 0 if seen >= count else 1


if __name__ == "__main__":
    sys.exit(main())
