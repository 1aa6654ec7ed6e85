"""Producer written with confluent-kafka (librdkafka): for each CODEC, one
producer sends a keyed record with a header, a record with a null key and a
tombstone, as one batch.

usage: librdkafka_produce.py BOOTSTRAP TOPIC CODEC[,CODEC...]
"""
import sys
from importlib.metadata import version

import confluent_kafka
from confluent_kafka import Producer


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, codecs = sys.argv[1:]
    for codec in codecs.split(","):
        producer = Producer({
            "bootstrap.servers": bootstrap,
            "client.id": f"kwire-librdkafka-{codec}",
            "compression.type": codec,
            "acks": "all",
            "linger.ms": 200,
        })
        producer.produce(topic, key=f"rd-{codec}".encode(), value=f"librdkafka {codec} record 0".encode(),
                         headers=[("origin", b"librdkafka"), ("nothing", None)])
        producer.produce(topic, key=None, value=f"librdkafka {codec} record 1, null key".encode())
        producer.produce(topic, key=f"rd-{codec}-tombstone".encode(), value=None)
        left = producer.flush(30)
        if left:
            print(f"{left} records not delivered", file=sys.stderr)
            return 1
        print(f"confluent-kafka {version('confluent-kafka')} / librdkafka "
              f"{confluent_kafka.libversion()[0]}: produced 3 records with {codec}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
