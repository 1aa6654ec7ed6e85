package kwire.record;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.common.Node;

/**
 * Asks the cluster (Admin describeConsumerGroups) which broker coordinates
 * consumer group GROUP, and prints one line {@code coordinator ID HOST PORT}.
 * The end-to-end test compares it with the FindCoordinator answers kwire
 * decoded from the wire.
 *
 * <p>Usage: GroupCoordinator BOOTSTRAP GROUP
 */
public final class GroupCoordinator {
    private GroupCoordinator() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GroupCoordinator BOOTSTRAP GROUP");
            System.exit(2);
        }
        String group = args[1];
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "kwire-admin");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(p)) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group))
                    .describedGroups().get(group).get(40, TimeUnit.SECONDS);
            Node c = d.coordinator();
            System.out.println("coordinator " + c.id() + " " + c.host() + " " + c.port());
        }
    }
}
