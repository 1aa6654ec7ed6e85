package kwire.record;

import java.nio.charset.StandardCharsets;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces a few records per compression type, each codec from its own
 * producer so each batch has one codec: a keyed record with two headers (one
 * with a null value), a record with a null key, and a tombstone (null value).
 * With LARGE, one record whose value is 1,000,000 bytes, uncompressed.
 *
 * <p>Usage: RecordsProduce BOOTSTRAP TOPIC CODEC[,CODEC...] | RecordsProduce BOOTSTRAP TOPIC LARGE
 */
public final class RecordsProduce {
    private RecordsProduce() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: RecordsProduce BOOTSTRAP TOPIC CODEC[,CODEC...]|LARGE");
            System.exit(2);
        }
        if (args[2].equals("LARGE")) {
            try (KafkaProducer<byte[], byte[]> p = producer(args[0], "none", "kwire-java-large")) {
                byte[] big = new byte[1_000_000];
                for (int i = 0; i < big.length; i++) {
                    big[i] = (byte) ('a' + i % 26);
                }
                p.send(new ProducerRecord<>(args[1], bytes("large"), big)).get();
            }
            System.out.println("produced one 1,000,000-byte value to " + args[1]);
            return;
        }
        for (String codec : args[2].split(",")) {
            try (KafkaProducer<byte[], byte[]> p = producer(args[0], codec, "kwire-java-" + codec)) {
                RecordHeaders h = new RecordHeaders();
                h.add("trace-id", bytes("abc-" + codec));
                h.add("empty", null);
                p.send(new ProducerRecord<>(args[1], null, bytes("k-" + codec), bytes("java " + codec + " record 0"), h));
                p.send(new ProducerRecord<>(args[1], null, bytes("java " + codec + " record 1, null key")));
                p.send(new ProducerRecord<>(args[1], bytes("k-" + codec + "-tombstone"), null));
                p.flush();
            }
            System.out.println("produced 3 records with compression.type=" + codec);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String codec, String clientId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        // The three sends go out as one batch.
        p.put(ProducerConfig.LINGER_MS_CONFIG, "200");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "2097152");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }
}
