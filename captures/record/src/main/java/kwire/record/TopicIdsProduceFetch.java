package kwire.record;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Produce (v13) and Fetch (v13+) carry topic ids, not names: writes COUNT records
 * to an existing TOPIC, then reads them back with assign() (no group), so the
 * capture holds Produce, Metadata (names and ids) and Fetch only.
 *
 * <p>Usage: TopicIdsProduceFetch BOOTSTRAP TOPIC COUNT
 */
public final class TopicIdsProduceFetch {
    private TopicIdsProduceFetch() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: TopicIdsProduceFetch BOOTSTRAP TOPIC COUNT");
            System.exit(2);
        }
        int count = Integer.parseInt(args[2]);
        Produce.produce(args[0], args[1], count, "kwire-topic-ids-producer");
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-topic-ids-consumer");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        int seen = 0;
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(args[1], 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (seen < count && System.nanoTime() < deadline) {
                seen += c.poll(Duration.ofMillis(500)).count();
            }
        }
        System.out.println("fetched " + seen + " of " + count + " records from " + args[1]);
        if (seen < count) {
            System.exit(1);
        }
    }
}
