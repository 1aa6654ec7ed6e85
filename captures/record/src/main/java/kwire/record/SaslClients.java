package kwire.record;

import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * SASL fixtures (test credentials only). "scram-user BOOTSTRAP USER PASSWORD"
 * creates a SCRAM-SHA-256 credential over the plaintext listener (run outside
 * the capture). "produce BOOTSTRAP MECHANISM USER PASSWORD TOPIC" authenticates
 * with PLAIN or SCRAM-SHA-256 on a SASL_PLAINTEXT listener and writes one record.
 */
public final class SaslClients {
    private SaslClients() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("scram-user")) {
            Properties p = new Properties();
            p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[1]);
            try (Admin admin = Admin.create(p)) {
                admin.alterUserScramCredentials(java.util.List.of(new UserScramCredentialUpsertion(args[2],
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), args[3]))).all().get();
                // The credential reaches the broker through the metadata log: wait until it is there.
                for (int i = 0; i < 100; i++) {
                    if (!admin.describeUserScramCredentials(java.util.List.of(args[2])).all().get().isEmpty()) {
                        break;
                    }
                    Thread.sleep(100);
                }
            }
            Thread.sleep(1000);
            System.out.println("SCRAM-SHA-256 credential for " + args[2] + " is set");
            return;
        }
        if (args.length != 6 || !args[0].equals("produce")) {
            System.err.println("usage: SaslClients scram-user BOOTSTRAP USER PASSWORD"
                + " | produce BOOTSTRAP MECHANISM USER PASSWORD TOPIC");
            System.exit(2);
        }
        String mech = args[2];
        String module = mech.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
            : "org.apache.kafka.common.security.scram.ScramLoginModule";
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kwire-sasl-" + mech.toLowerCase());
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, mech);
        p.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + args[3]
            + "\" password=\"" + args[4] + "\";");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(args[5], "sasl", "written after " + mech)).get();
        }
        System.out.println("authenticated with " + mech + " as " + args[3] + " and wrote 1 record");
    }
}
