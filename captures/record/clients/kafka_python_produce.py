"""Producer written with kafka-python: for each CODEC, one producer sends a keyed
record with a header, a record with a null key and a tombstone, as one batch.

usage: kafka_python_produce.py BOOTSTRAP TOPIC CODEC[,CODEC...]
"""
import sys

import kafka
from kafka import KafkaProducer


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    bootstrap, topic, codecs = sys.argv[1:]
    for codec in codecs.split(","):
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            client_id=f"kwire-kafka-python-{codec}",
            compression_type=codec,
            acks="all",
            linger_ms=200,
        )
        producer.send(topic, key=f"py-{codec}".encode(), value=f"kafka-python {codec} record 0".encode(),
                      headers=[("origin", b"kafka-python")])
        producer.send(topic, key=None, value=f"kafka-python {codec} record 1, null key".encode())
        producer.send(topic, key=f"py-{codec}-tombstone".encode(), value=None)
        producer.flush()
        producer.close()
        print(f"kafka-python {kafka.__version__}: produced 3 records with {codec}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
