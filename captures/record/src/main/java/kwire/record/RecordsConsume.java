package kwire.record;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Fetches partition 0 of TOPIC from the start until it has seen COUNT records
 * (read_uncommitted, so aborted records and transaction markers come back in
 * the Fetch responses too), or TIMEOUT seconds pass.
 *
 * <p>Usage: RecordsConsume BOOTSTRAP TOPIC COUNT TIMEOUT
 */
public final class RecordsConsume {
    private RecordsConsume() {}

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: RecordsConsume BOOTSTRAP TOPIC COUNT TIMEOUT");
            System.exit(2);
        }
        int count = Integer.parseInt(args[2]);
        long deadline = System.nanoTime() + Long.parseLong(args[3]) * 1_000_000_000L;
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-java-records-consumer");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "2097152");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        int seen = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(args[1], 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (seen < count && System.nanoTime() < deadline) {
                seen += c.poll(Duration.ofMillis(500)).count();
            }
        }
        System.out.println("consumed " + seen + " of " + count + " records from " + args[1]);
        System.exit(seen >= count ? 0 : 1);
    }
}
