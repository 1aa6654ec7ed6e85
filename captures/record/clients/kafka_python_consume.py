"""Consumer-group member written with kafka-python: joins GROUP on TOPIC, reads
COUNT records (or gives up after TIMEOUT seconds), commits and leaves.

usage: kafka_python_consume.py BOOTSTRAP TOPIC GROUP COUNT TIMEOUT
"""
import sys
import time

import kafka
from kafka import KafkaConsumer


def main() -> int:
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, group, count, timeout = sys.argv[1:]
    count, deadline = int(count), time.monotonic() + float(timeout)
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id="kwire-kafka-python",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    seen = 0
    while seen < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            seen += len(records)
    consumer.commit()
    consumer.close()
    print(f"kafka-python {kafka.__version__}: group {group} consumed {seen} of {count}")
    return 0 if seen >= count else 1


if __name__ == "__main__":
    sys.exit(main())
