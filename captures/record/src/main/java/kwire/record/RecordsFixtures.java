package kwire.record;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;

/**
 * Record batches written by Kafka's own MemoryRecordsBuilder, in every magic
 * (0, 1, 2) and codec it allows, with create and log-append time, a
 * transactional batch, transaction markers and a KRaft LeaderChangeMessage,
 * for the batch layouts real clients of Kafka 4.4 no longer send. Writes
 * OUT.bin (the fields, one after another) and OUT.txt (FIELD at=OFFSET len=N,
 * then what Kafka's MemoryRecords reads back, as Verify --records prints it).
 *
 * <p>Usage: RecordsFixtures OUT
 */
public final class RecordsFixtures {
    private RecordsFixtures() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: RecordsFixtures OUT");
            System.exit(2);
        }
        ByteArrayOutputStream bin = new ByteArrayOutputStream();
        StringBuilder txt = new StringBuilder();
        String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
        for (byte magic = 0; magic <= 2; magic++) {
            for (String codec : codecs) {
                if (magic < 2 && codec.equals("zstd")) {
                    continue; // Kafka allows zstd from magic 2 on
                }
                for (TimestampType tt : new TimestampType[] {TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME}) {
                    if (magic == 0 && tt == TimestampType.LOG_APPEND_TIME) {
                        continue;
                    }
                    ByteBuffer buf = ByteBuffer.allocate(1 << 16);
                    long logAppend = tt == TimestampType.LOG_APPEND_TIME ? 1_700_000_009_000L : -1L;
                    MemoryRecordsBuilder b = MemoryRecords.builder(buf, magic, compression(codec), tt, 100L, logAppend);
                    append(b, magic, codec);
                    add(bin, txt, String.format("magic=%d codec=%s tstype=%s", magic, codec, tt), b.build());
                }
            }
        }
        // Two magic 2 batches in one field, the second transactional and zstd.
        ByteBuffer two = ByteBuffer.allocate(1 << 16);
        MemoryRecordsBuilder b1 = MemoryRecords.builder(two, Compression.NONE, TimestampType.CREATE_TIME, 0L);
        append(b1, (byte) 2, "first");
        b1.close();
        MemoryRecordsBuilder b2 = MemoryRecords.builder(two, (byte) 2, Compression.zstd().build(), TimestampType.CREATE_TIME,
            3L, 1_700_000_000_000L, 4242L, (short) 3, 17, true, -1);
        append(b2, (byte) 2, "txn");
        b2.close();
        two.flip();
        add(bin, txt, "two batches, the second transactional", MemoryRecords.readableRecords(two));
        // Transaction markers and a KRaft control record.
        for (ControlRecordType t : new ControlRecordType[] {ControlRecordType.COMMIT, ControlRecordType.ABORT}) {
            ByteBuffer m = ByteBuffer.allocate(256);
            MemoryRecords.writeEndTransactionalMarker(m, 7L, 1_700_000_000_500L, 3, 4242L, (short) 3,
                new EndTransactionMarker(t, 11));
            m.flip();
            add(bin, txt, "marker " + t, MemoryRecords.readableRecords(m));
        }
        LeaderChangeMessage lc = new LeaderChangeMessage().setLeaderId(2)
            .setVoters(java.util.List.of(new LeaderChangeMessage.Voter().setVoterId(1),
                new LeaderChangeMessage.Voter().setVoterId(2), new LeaderChangeMessage.Voter().setVoterId(3)))
            .setGrantingVoters(java.util.List.of(new LeaderChangeMessage.Voter().setVoterId(2),
                new LeaderChangeMessage.Voter().setVoterId(3)));
        add(bin, txt, "leader change", MemoryRecords.withLeaderChangeMessage(20L, 1_700_000_001_000L, 5,
            ByteBuffer.allocate(256), lc));
        Files.write(Path.of(args[0] + ".bin"), bin.toByteArray());
        Files.writeString(Path.of(args[0] + ".txt"), txt.toString());
        System.out.println("wrote " + bin.size() + " bytes of fixtures");
    }

    private static Compression compression(String codec) {
        return switch (codec) {
            case "gzip" -> Compression.gzip().build();
            case "snappy" -> Compression.snappy().build();
            case "lz4" -> Compression.lz4().build();
            case "zstd" -> Compression.zstd().build();
            default -> Compression.NONE;
        };
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Three records: key, value and headers; a null key; a null value. */
    private static void append(MemoryRecordsBuilder b, byte magic, String tag) {
        Header[] hs = magic >= 2
            ? new Header[] {new RecordHeader("h", b("v-" + tag)), new RecordHeader("null", (byte[]) null)}
            : new Header[0];
        b.append(1_700_000_000_001L, b("key-" + tag), b("value of " + tag + " ".repeat(40) + "end"), hs);
        b.append(1_700_000_000_002L, null, b("no key " + tag));
        b.append(1_700_000_000_003L, b("tombstone-" + tag), null);
    }

    private static void add(ByteArrayOutputStream bin, StringBuilder txt, String what, MemoryRecords mr) {
        ByteBuffer buf = mr.buffer();
        byte[] bytes = new byte[buf.remaining()];
        buf.duplicate().get(bytes);
        txt.append(String.format("FIELD fixture=%s at=%d len=%d%n", what.replace(' ', '_'), bin.size(), bytes.length));
        bin.write(bytes, 0, bytes.length);
        Verify.batches(txt, false, mr);
    }
}
