package kwire.record;

import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A transactional producer: FindCoordinator with key type TRANSACTION for its
 * transactional.id, then one committed transaction that also commits consumer
 * offsets for GROUP (so FindCoordinator with key type GROUP from a producer),
 * then one aborted transaction.
 *
 * <p>Usage: TxProduce BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP
 */
public final class TxProduce {
    private TxProduce() {}

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: TxProduce BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP");
            System.exit(2);
        }
        String topic = args[1];
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kwire-java-txn-producer");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[2]);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();

            producer.beginTransaction();
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, "t" + i, "committed txn record " + i));
            }
            producer.sendOffsetsToTransaction(
                Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0L)),
                new ConsumerGroupMetadata(args[3]));
            producer.commitTransaction();

            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "a0", "aborted txn record"));
            producer.flush();
            producer.abortTransaction();
        }
        System.out.println("transactional producer " + args[2] + ": 1 committed, 1 aborted");
    }
}
