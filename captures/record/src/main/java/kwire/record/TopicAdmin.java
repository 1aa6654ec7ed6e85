package kwire.record;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Topic administration with the Java Admin client: creates TOPIC (2 partitions,
 * one config override), creates it again (TOPIC_ALREADY_EXISTS), describes its
 * configs and the broker's, then deletes it.
 *
 * <p>Usage: TopicAdmin BOOTSTRAP TOPIC BROKER_ID [create PARTITIONS]; with "create",
 * it only creates TOPIC (a setup step outside a capture).
 */
public final class TopicAdmin {
    private TopicAdmin() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3 && !(args.length == 5 && args[3].equals("create"))) {
            System.err.println("usage: TopicAdmin BOOTSTRAP TOPIC BROKER_ID [create PARTITIONS]");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "kwire-admin");
        String topic = args[1];
        try (Admin admin = Admin.create(p)) {
            if (args.length == 5) {
                admin.createTopics(List.of(new NewTopic(topic, Integer.parseInt(args[4]), (short) 1))).all().get();
                Thread.sleep(1000); // let the broker learn the new partitions' leader
                System.out.println("created " + topic);
                return;
            }
            NewTopic t = new NewTopic(topic, 2, (short) 1).configs(Map.of("retention.ms", "3600000"));
            admin.createTopics(List.of(t)).all().get();
            try {
                admin.createTopics(List.of(t)).all().get();
                throw new IllegalStateException("second CreateTopics succeeded");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, args[2]);
            Map<ConfigResource, Config> cfg = admin.describeConfigs(List.of(tr, br)).all().get();
            String retention = cfg.get(tr).get("retention.ms").value();
            admin.deleteTopics(List.of(topic)).all().get();
            System.out.println("created, described (retention.ms=" + retention + ") and deleted " + topic);
        }
    }
}
