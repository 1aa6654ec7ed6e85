"""Consumer-group member written with confluent-kafka (librdkafka): joins GROUP
on TOPIC, reads COUNT records (or gives up after TIMEOUT seconds), commits and
leaves.

usage: librdkafka_consume.py BOOTSTRAP TOPIC GROUP COUNT TIMEOUT
"""
import sys
import time
from importlib.metadata import version

import confluent_kafka
from confluent_kafka import Consumer


def main() -> int:
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, group, count, timeout = sys.argv[1:]
    count, deadline = int(count), time.monotonic() + float(timeout)
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": "kwire-librdkafka",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    seen = 0
    while seen < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            print(f"consumer error: {msg.error()}", file=sys.stderr)
            continue
        seen += 1
    if seen:
        consumer.commit(asynchronous=False)
    consumer.close()
    print(f"confluent-kafka {version('confluent-kafka')} / librdkafka "
          f"{confluent_kafka.libversion()[0]}: group {group} consumed {seen} of {count}")
    return 0 if seen >= count else 1


if __name__ == "__main__":
    sys.exit(main())
