package kwire.record;

import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes a few records to a topic (auto-created by the broker), so that the
 * consumer-group scenarios have something to read.
 *
 * <p>Usage: Produce BOOTSTRAP TOPIC COUNT CLIENT_ID
 */
public final class Produce {
    private Produce() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Produce BOOTSTRAP TOPIC COUNT CLIENT_ID");
            System.exit(2);
        }
        produce(args[0], args[1], Integer.parseInt(args[2]), args[3]);
    }

    static void produce(String bootstrap, String topic, int count, String clientId) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "kwire fixture record " + i)).get();
            }
            producer.flush();
        }
        System.out.println("produced " + count + " records to " + topic);
    }
}
