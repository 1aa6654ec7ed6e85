package kwire.record;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Writes COUNT records, then reads them back as a member of consumer group GROUP
 * and commits, so the broker sees FindCoordinator(key type GROUP) and the group
 * protocol. Started while the broker is still coming up, it also meets the
 * coordinator errors of a broker that has no __consumer_offsets yet.
 *
 * <p>Usage: GroupConsume BOOTSTRAP TOPIC GROUP COUNT TIMEOUT_SECONDS
 */
public final class GroupConsume {
    private GroupConsume() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: GroupConsume BOOTSTRAP TOPIC GROUP COUNT TIMEOUT_SECONDS");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int count = Integer.parseInt(args[3]);
        long deadline = System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[4])).toNanos();

        Produce.produce(bootstrap, topic, count, "kwire-java-seed");

        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-java-consumer");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        int seen = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            while (seen < count && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                seen += records.count();
            }
            consumer.commitSync(Duration.ofSeconds(30));
        }
        System.out.println("group " + group + " consumed " + seen + " of " + count + " records");
        if (seen < count) {
            System.exit(1);
        }
    }
}
