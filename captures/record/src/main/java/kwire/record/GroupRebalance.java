package kwire.record;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A classic consumer group that rebalances: member a joins; b joins; c joins;
 * c goes away without LeaveGroup and is expired by the coordinator after its
 * session timeout (6 s); b leaves with LeaveGroup; a leaves. TOPIC should have
 * 3 partitions. Each step waits until the members hold the expected assignment.
 *
 * <p>Usage: GroupRebalance BOOTSTRAP TOPIC GROUP
 */
public final class GroupRebalance {
    private GroupRebalance() {}

    /** One member, polling on its own thread until told to close. */
    private static final class Member implements ConsumerRebalanceListener {
        final String name;
        final Set<TopicPartition> owned = ConcurrentHashMap.newKeySet();
        final AtomicBoolean stop = new AtomicBoolean();
        volatile boolean leave = true;
        final Thread thread;

        Member(String bootstrap, String topic, String group, String name) {
            this.name = name;
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "kwire-rebalance-" + name);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1500");
            p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "2000");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                "org.apache.kafka.clients.consumer.RangeAssignor");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            thread = new Thread(() -> {
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
                    c.subscribe(List.of(topic), this);
                    while (!stop.get()) {
                        c.poll(Duration.ofMillis(200));
                    }
                    c.close(leave ? CloseOptions.timeout(Duration.ofSeconds(10))
                        : CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP)
                            .withTimeout(Duration.ofSeconds(10)));
                }
            }, "member-" + name);
            thread.start();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> parts) {
            owned.removeAll(parts);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> parts) {
            owned.addAll(parts);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> parts) {
            owned.removeAll(parts);
        }

        void close(boolean sendLeave) throws InterruptedException {
            leave = sendLeave;
            stop.set(true);
            thread.join(30_000);
        }
    }

    /** Waits until the members own exactly the given numbers of partitions. */
    private static void await(String what, Member[] ms, int... counts) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            boolean ok = true;
            for (int i = 0; i < ms.length; i++) {
                ok &= ms[i].owned.size() == counts[i];
            }
            if (ok) {
                System.out.println(what);
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("timed out waiting for: " + what);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: GroupRebalance BOOTSTRAP TOPIC GROUP");
            System.exit(2);
        }
        Member a = new Member(args[0], args[1], args[2], "a");
        await("a owns 3", new Member[] {a}, 3);
        Member b = new Member(args[0], args[1], args[2], "b");
        await("a, b own 2, 1", new Member[] {a, b}, 2, 1);
        Member c = new Member(args[0], args[1], args[2], "c");
        await("a, b, c own 1, 1, 1", new Member[] {a, b, c}, 1, 1, 1);
        c.close(false);
        await("c timed out: a, b own 2, 1", new Member[] {a, b}, 2, 1);
        b.close(true);
        await("b left: a owns 3", new Member[] {a}, 3);
        a.close(true);
        System.out.println("group " + args[2] + " rebalanced through join, timeout and leave");
    }
}
