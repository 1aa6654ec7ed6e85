package kwire.record;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.VoteRequestData;
import org.apache.kafka.common.message.VoteResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.VoteRequest;
import org.apache.kafka.common.requests.VoteResponse;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;

/**
 * A second opinion on a capture from Kafka's own parsers: reads a pcap
 * (Ethernet or Linux cooked, IPv4, TCP), puts each TCP direction back in order,
 * cuts it into size-prefixed Kafka frames, parses requests with
 * kafka-clients' RequestHeader/AbstractRequest and responses with
 * AbstractResponse (matched by correlation id on the same connection), and prints
 * counts per API and version, the errors each response carries, and one line per
 * Vote, FindCoordinator, SASL and classic group membership exchange. SASL lines
 * give the mechanism and the sizes of the auth bytes, never their content.
 * Produce, Fetch and Metadata lines give the topic ids (UUID form) and names.
 *
 * <p>With --records (or --records-digest), it prints instead every record batch
 * of every Produce request and Fetch response as Kafka's MemoryRecords reads it:
 * where the records field sits in its frame, each batch's header and CRC
 * verdict, and each record's offset, timestamp, key, value and headers (values
 * as hex, or as length and CRC-32 when long or with --records-digest).
 *
 * <p>Usage: Verify [--records|--records-digest] FILE.pcap SERVER_PORT...
 */
public final class Verify {
    private Verify() {}

    /** One direction of one TCP connection; sequence numbers relative to the first one seen. */
    private static final class Flow {
        Long base;                                  // absolute sequence number of rel. 0
        boolean sawSyn;
        final TreeMap<Long, byte[]> segs = new TreeMap<>();
        final TreeMap<Long, Integer> frameOfSeq = new TreeMap<>(); // rel. seq -> pcap frame number

        void syn(long seq) {
            base = seq;
            sawSyn = true;
        }

        void add(long seq, byte[] data, int frame) {
            if (data.length == 0) {
                return;
            }
            if (base == null) {
                base = seq;
            }
            long rel = (seq - base) & 0xffffffffL;
            segs.putIfAbsent(rel, data);
            frameOfSeq.putIfAbsent(rel, frame);
        }
    }

    private record Conn(int clientPort, int serverPort) {}

    private record Frame(int pcapFrame, ByteBuffer bytes) {}

    public static void main(String[] args) throws IOException {
        if (args.length > 0 && args[0].startsWith("--records")) {
            records(args[0].equals("--records-digest"), java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length < 2) {
            System.err.println("usage: Verify [--records|--records-digest] FILE.pcap SERVER_PORT...");
            System.exit(2);
        }
        Set<Integer> serverPorts = new java.util.HashSet<>();
        for (int i = 1; i < args.length; i++) {
            serverPorts.add(Integer.parseInt(args[i]));
        }
        Map<Conn, Flow[]> conns = new LinkedHashMap<>();
        readPcap(Path.of(args[0]), serverPorts, conns);

        Map<String, Integer> requests = new TreeMap<>();
        Map<String, Integer> responses = new TreeMap<>();
        Map<String, Integer> errors = new TreeMap<>();
        List<String> details = new ArrayList<>();
        int unparsed = 0;
        int unmatched = 0;
        int skippedBytes = 0;

        for (Map.Entry<Conn, Flow[]> e : conns.entrySet()) {
            Map<Integer, RequestHeader> pending = new HashMap<>();
            Map<Integer, AbstractRequest> pendingBody = new HashMap<>();
            int[] skipped = new int[1];
            List<Frame> reqFrames = frames(e.getValue()[0], skipped);
            List<Frame> rspFrames = frames(e.getValue()[1], skipped);
            skippedBytes += skipped[0];
            for (Frame f : reqFrames) {
                try {
                    RequestHeader h = RequestHeader.parse(f.bytes());
                    String name = h.apiKey().name + " v" + h.apiVersion();
                    requests.merge(name, 1, Integer::sum);
                    pending.put(h.correlationId(), h);
                    AbstractRequest body = AbstractRequest.parseRequest(
                        h.apiKey(), h.apiVersion(), new ByteBufferAccessor(f.bytes())).request;
                    pendingBody.put(h.correlationId(), body);
                    String d = describeRequest(body);
                    if (d != null) {
                        details.add(String.format("#%d %s req corr=%d client=%s %s",
                            f.pcapFrame(), name, h.correlationId(), h.clientId(), d));
                    }
                } catch (RuntimeException ex) {
                    unparsed++;
                    details.add("#" + f.pcapFrame() + " request not parsed: " + ex);
                }
            }
            for (Frame f : rspFrames) {
                int corr = f.bytes().duplicate().getInt();
                RequestHeader h = pending.get(corr);
                if (h == null) {
                    unmatched++;
                    continue;
                }
                String name = h.apiKey().name + " v" + h.apiVersion();
                try {
                    AbstractResponse rsp = parseResponse(f.bytes(), h);
                    responses.merge(name, 1, Integer::sum);
                    for (Map.Entry<Errors, Integer> err : rsp.errorCounts().entrySet()) {
                        if (err.getKey() != Errors.NONE) {
                            errors.merge(h.apiKey().name + " " + err.getKey().name(),
                                err.getValue(), Integer::sum);
                        }
                    }
                    String d = describeResponse(rsp);
                    if (d != null) {
                        details.add(String.format("#%d %s rsp corr=%d %s",
                            f.pcapFrame(), name, corr, d));
                    }
                } catch (RuntimeException ex) {
                    unparsed++;
                    details.add("#" + f.pcapFrame() + " " + name + " response not parsed: " + ex);
                }
            }
        }

        System.out.println("file: " + args[0]);
        System.out.println("tcp connections: " + conns.size());
        System.out.println("requests (api vN: count): " + fmt(requests));
        System.out.println("responses matched: " + fmt(responses));
        System.out.println("errors in responses: " + (errors.isEmpty() ? "none" : fmt(errors)));
        System.out.println("unparsed frames: " + unparsed + ", responses without their request in the capture: "
            + unmatched + ", bytes before the first frame boundary of mid-stream connections: " + skippedBytes);
        details.sort((a, b) -> Integer.compare(frameNo(a), frameNo(b)));
        for (String d : details) {
            System.out.println("  " + d);
        }
    }

    /** Prints every records field of every Produce request and Fetch response, in frame order. */
    private static void records(boolean digest, String[] args) throws IOException {
        Set<Integer> serverPorts = new java.util.HashSet<>();
        for (int i = 1; i < args.length; i++) {
            serverPorts.add(Integer.parseInt(args[i]));
        }
        Map<Conn, Flow[]> conns = new LinkedHashMap<>();
        readPcap(Path.of(args[0]), serverPorts, conns);
        TreeMap<Long, String> out = new TreeMap<>();
        long seqNo = 0;
        for (Map.Entry<Conn, Flow[]> e : conns.entrySet()) {
            Conn c = e.getKey();
            Map<Integer, RequestHeader> pending = new HashMap<>();
            int[] skipped = new int[1];
            for (Frame f : frames(e.getValue()[0], skipped)) {
                try {
                    ByteBuffer frame = f.bytes().duplicate();
                    RequestHeader h = RequestHeader.parse(frame);
                    pending.put(h.correlationId(), h);
                    if (h.apiKey() != ApiKeys.PRODUCE) {
                        continue;
                    }
                    if (h.apiVersion() < 3) {
                        // kafka-clients 4.x no longer parses these requests; their
                        // layout is fixed, and MemoryRecords still reads their records.
                        StringBuilder sb = new StringBuilder();
                        oldProduce(sb, digest, c, h, f, frame);
                        out.put(((long) f.pcapFrame() << 20) + seqNo++, sb.toString());
                        continue;
                    }
                    AbstractRequest body = AbstractRequest.parseRequest(
                        h.apiKey(), h.apiVersion(), new ByteBufferAccessor(frame)).request;
                    StringBuilder sb = new StringBuilder();
                    for (ProduceRequestData.TopicProduceData t : ((ProduceRequest) body).data().topicData()) {
                        String topic = t.name().isEmpty() ? t.topicId().toString() : t.name();
                        for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
                            field(sb, digest, c, "req", h, f, topic, p.index(), p.records());
                        }
                    }
                    out.put(((long) f.pcapFrame() << 20) + seqNo++, sb.toString());
                } catch (RuntimeException ex) {
                    out.put(((long) f.pcapFrame() << 20) + seqNo++, "UNPARSED frame=" + f.pcapFrame() + " " + ex + "\n");
                }
            }
            for (Frame f : frames(e.getValue()[1], skipped)) {
                int corr = f.bytes().duplicate().getInt();
                RequestHeader h = pending.get(corr);
                if (h == null || h.apiKey() != ApiKeys.FETCH) {
                    continue;
                }
                try {
                    FetchResponse rsp = (FetchResponse) parseResponse(f.bytes(), h);
                    StringBuilder sb = new StringBuilder();
                    for (FetchResponseData.FetchableTopicResponse t : rsp.data().responses()) {
                        String topic = t.topic().isEmpty() ? t.topicId().toString() : t.topic();
                        for (FetchResponseData.PartitionData p : t.partitions()) {
                            field(sb, digest, c, "rsp", h, f, topic, p.partitionIndex(), p.records());
                        }
                    }
                    out.put(((long) f.pcapFrame() << 20) + seqNo++, sb.toString());
                } catch (RuntimeException ex) {
                    out.put(((long) f.pcapFrame() << 20) + seqNo++, "UNPARSED frame=" + f.pcapFrame() + " " + ex + "\n");
                }
            }
        }
        for (String s : out.values()) {
            System.out.print(s);
        }
    }

    /** Produce v0-v2: acks, timeout, then [topic name, [partition, records]]. */
    private static void oldProduce(StringBuilder sb, boolean digest, Conn c, RequestHeader h, Frame f,
                                   ByteBuffer body) {
        ByteBuffer b = body.duplicate();
        b.getShort();
        b.getInt();
        int topics = b.getInt();
        for (int i = 0; i < topics; i++) {
            byte[] name = new byte[b.getShort()];
            b.get(name);
            int parts = b.getInt();
            for (int j = 0; j < parts; j++) {
                int index = b.getInt();
                int size = b.getInt();
                ByteBuffer rb = b.slice();
                rb.limit(size);
                b.position(b.position() + size);
                field(sb, digest, c, "req", h, f, new String(name, java.nio.charset.StandardCharsets.UTF_8),
                    index, MemoryRecords.readableRecords(rb));
            }
        }
    }

    private static void field(StringBuilder sb, boolean digest, Conn c, String dir, RequestHeader h, Frame f,
                              String topic, int partition, BaseRecords records) {
        if (records == null) {
            return;
        }
        MemoryRecords mr = (MemoryRecords) records;
        ByteBuffer rb = mr.buffer();
        int at = rb.arrayOffset() + rb.position() - f.bytes().arrayOffset();
        sb.append(String.format("FIELD client=%d server=%d dir=%s corr=%d api=%d v=%d frame=%d topic=%s partition=%d at=%d len=%d%n",
            c.clientPort(), c.serverPort(), dir, h.correlationId(), h.apiKey().id, h.apiVersion(), f.pcapFrame(),
            topic, partition, at, mr.sizeInBytes()));
        batches(sb, digest, mr);
    }

    /** BATCH and REC lines for every batch Kafka reads, and PARTIAL for what is left. */
    static void batches(StringBuilder sb, boolean digest, MemoryRecords mr) {
        int used = 0;
        for (RecordBatch b : mr.batches()) {
            used += b.sizeInBytes();
            sb.append(String.format("BATCH magic=%d base=%d last=%d crc=%d valid=%s codec=%s tstype=%s maxts=%d "
                    + "txn=%s control=%s pid=%d pepoch=%d seq=%d count=%s ple=%d size=%d%n",
                b.magic(), b.baseOffset(), b.lastOffset(), b.checksum(), b.isValid(), b.compressionType().name,
                b.timestampType(), b.maxTimestamp(), b.isTransactional(), b.isControlBatch(), b.producerId(),
                b.producerEpoch(), b.baseSequence(), b.countOrNull(), b.partitionLeaderEpoch(), b.sizeInBytes()));
            for (Record r : b) {
                StringBuilder hs = new StringBuilder();
                for (Header hd : r.headers()) {
                    if (hs.length() > 0) {
                        hs.append(',');
                    }
                    hs.append(hex(hd.key().getBytes(java.nio.charset.StandardCharsets.UTF_8), false)).append('=')
                        .append(hd.value() == null ? "null" : hex(hd.value(), digest));
                }
                sb.append(String.format("REC offset=%d ts=%d key=%s value=%s headers=%s%n", r.offset(), r.timestamp(),
                    bytes(r.key(), digest), bytes(r.value(), digest), hs.length() == 0 ? "-" : hs));
                if (b.isControlBatch() && r.key() != null
                        && org.apache.kafka.common.record.internal.ControlRecordType.parse(r.key())
                            == org.apache.kafka.common.record.internal.ControlRecordType.LEADER_CHANGE) {
                    org.apache.kafka.common.message.LeaderChangeMessage lc =
                        org.apache.kafka.common.record.internal.ControlRecordUtils.deserializeLeaderChangeMessage(r);
                    sb.append(String.format("LEADERCHANGE leader=%d voters=%s granting=%s%n", lc.leaderId(),
                        lc.voters().stream().map(v -> String.valueOf(v.voterId())).collect(Collectors.joining(",")),
                        lc.grantingVoters().stream().map(v -> String.valueOf(v.voterId())).collect(Collectors.joining(","))));
                }
            }
        }
        if (used < mr.sizeInBytes()) {
            sb.append(String.format("PARTIAL bytes=%d%n", mr.sizeInBytes() - used));
        }
    }

    private static String bytes(ByteBuffer b, boolean digest) {
        if (b == null) {
            return "null";
        }
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return hex(a, digest);
    }

    /** Hex, or #LENGTH:CRC32 for long values (and all values when digesting). */
    private static String hex(byte[] a, boolean digest) {
        if (digest || a.length > 64) {
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(a);
            return String.format("#%d:%08x", a.length, crc.getValue());
        }
        StringBuilder sb = new StringBuilder();
        for (byte x : a) {
            sb.append(String.format("%02x", x));
        }
        return sb.toString();
    }

    private static int frameNo(String s) {
        return Integer.parseInt(s.substring(1, s.indexOf(' ')));
    }

    private static String fmt(Map<String, Integer> m) {
        return m.entrySet().stream().map(x -> x.getKey() + ": " + x.getValue())
            .collect(Collectors.joining(", "));
    }

    private static AbstractResponse parseResponse(ByteBuffer buf, RequestHeader h) {
        try {
            return AbstractResponse.parseResponse(buf.duplicate(), h);
        } catch (RuntimeException ex) {
            // A broker answers an ApiVersions request of a version it lacks with v0.
            if (h.apiKey() == ApiKeys.API_VERSIONS) {
                return AbstractResponse.parseResponse(buf.duplicate(),
                    new RequestHeader(ApiKeys.API_VERSIONS, (short) 0, h.clientId(), h.correlationId()));
            }
            throw ex;
        }
    }

    /** A topic id as kwire and most tools print it (not Kafka's base64). */
    private static String uuid(Uuid id) {
        return new java.util.UUID(id.getMostSignificantBits(), id.getLeastSignificantBits()).toString();
    }

    private static String describeRequest(AbstractRequest body) {
        if (body instanceof ProduceRequest pr) {
            return "topics=" + pr.data().topicData().stream()
                .map(t -> uuid(t.topicId()) + "/" + t.name()).collect(Collectors.joining(","));
        }
        if (body instanceof FetchRequest fr) {
            return "topics=" + fr.data().topics().stream()
                .map(t -> uuid(t.topicId()) + "/" + t.topic()).collect(Collectors.joining(","));
        }
        if (body instanceof SaslHandshakeRequest h) {
            return "mechanism=" + h.data().mechanism();
        }
        if (body instanceof SaslAuthenticateRequest a) {
            return "authBytes=" + a.data().authBytes().length + " bytes";
        }
        if (body instanceof JoinGroupRequest j) {
            return String.format("group=%s memberId=%s sessionTimeoutMs=%d", j.data().groupId(),
                j.data().memberId(), j.data().sessionTimeoutMs());
        }
        if (body instanceof SyncGroupRequest g) {
            return String.format("group=%s memberId=%s generation=%d assignments=%d", g.data().groupId(),
                g.data().memberId(), g.data().generationId(), g.data().assignments().size());
        }
        if (body instanceof HeartbeatRequest h) {
            return String.format("group=%s memberId=%s generation=%d", h.data().groupId(),
                h.data().memberId(), h.data().generationId());
        }
        if (body instanceof LeaveGroupRequest l) {
            return "group=" + l.data().groupId() + " members=" + l.data().members().stream()
                .map(m -> m.memberId()).collect(Collectors.joining(","));
        }
        if (body instanceof VoteRequest v) {
            VoteRequestData d = v.data();
            StringBuilder sb = new StringBuilder("voterId=" + d.voterId());
            for (VoteRequestData.TopicData t : d.topics()) {
                for (VoteRequestData.PartitionData p : t.partitions()) {
                    sb.append(String.format(" candidate=%d epoch=%d preVote=%s lastOffsetEpoch=%d lastOffset=%d",
                        p.replicaId(), p.replicaEpoch(), p.preVote(), p.lastOffsetEpoch(), p.lastOffset()));
                }
            }
            return sb.toString();
        }
        if (body instanceof FindCoordinatorRequest fc) {
            FindCoordinatorRequestData d = fc.data();
            String keys = d.coordinatorKeys().isEmpty() ? "key=" + d.key() : "coordinatorKeys=" + d.coordinatorKeys();
            return "keyType=" + d.keyType() + " " + keys;
        }
        return null;
    }

    private static String describeResponse(AbstractResponse rsp) {
        if (rsp instanceof ProduceResponse pr) {
            return "topics=" + pr.data().responses().stream()
                .map(t -> uuid(t.topicId()) + "/" + t.name()).collect(Collectors.joining(","));
        }
        if (rsp instanceof FetchResponse fr) {
            return "topics=" + fr.data().responses().stream()
                .map(t -> uuid(t.topicId()) + "/" + t.topic()).collect(Collectors.joining(","));
        }
        if (rsp instanceof MetadataResponse mr) {
            return "topics=" + mr.data().topics().stream()
                .map(t -> uuid(t.topicId()) + "/" + t.name()).collect(Collectors.joining(","));
        }
        if (rsp instanceof SaslHandshakeResponse h) {
            return "error=" + Errors.forCode(h.data().errorCode()).name() + " mechanisms=" + h.data().mechanisms();
        }
        if (rsp instanceof SaslAuthenticateResponse a) {
            return String.format("error=%s authBytes=%d bytes sessionLifetimeMs=%d",
                Errors.forCode(a.data().errorCode()).name(), a.data().authBytes().length,
                a.data().sessionLifetimeMs());
        }
        if (rsp instanceof JoinGroupResponse j) {
            return String.format("error=%s generation=%d leader=%s memberId=%s members=%d",
                Errors.forCode(j.data().errorCode()).name(), j.data().generationId(), j.data().leader(),
                j.data().memberId(), j.data().members().size());
        }
        if (rsp instanceof SyncGroupResponse g) {
            return "error=" + Errors.forCode(g.data().errorCode()).name();
        }
        if (rsp instanceof HeartbeatResponse h) {
            return "error=" + Errors.forCode(h.data().errorCode()).name();
        }
        if (rsp instanceof LeaveGroupResponse l) {
            return "error=" + Errors.forCode(l.data().errorCode()).name();
        }
        if (rsp instanceof VoteResponse v) {
            VoteResponseData d = v.data();
            StringBuilder sb = new StringBuilder("error=" + Errors.forCode(d.errorCode()).name());
            for (VoteResponseData.TopicData t : d.topics()) {
                for (VoteResponseData.PartitionData p : t.partitions()) {
                    sb.append(String.format(" partitionError=%s leaderId=%d leaderEpoch=%d voteGranted=%s",
                        Errors.forCode(p.errorCode()).name(), p.leaderId(), p.leaderEpoch(), p.voteGranted()));
                }
            }
            return sb.toString();
        }
        if (rsp instanceof FindCoordinatorResponse fc) {
            FindCoordinatorResponseData d = fc.data();
            if (d.coordinators().isEmpty()) {
                return String.format("error=%s nodeId=%d host=%s port=%d", Errors.forCode(d.errorCode()).name(),
                    d.nodeId(), d.host(), d.port());
            }
            return d.coordinators().stream().map(c -> String.format("[key=%s error=%s nodeId=%d]", c.key(),
                Errors.forCode(c.errorCode()).name(), c.nodeId())).collect(Collectors.joining(" "));
        }
        return null;
    }

    /**
     * The in-order bytes of a flow cut into frames. A flow whose SYN was not
     * captured starts at the first segment from which size prefixes chain up to
     * the end of the contiguous data.
     */
    private static List<Frame> frames(Flow flow, int[] skipped) {
        List<Frame> out = new ArrayList<>();
        if (flow.segs.isEmpty()) {
            return out;
        }
        long start = flow.sawSyn ? 1 : flow.segs.firstKey();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<long[]> offsets = new ArrayList<>(); // [offset in all, seq]
        long next = start;
        for (Map.Entry<Long, byte[]> s : flow.segs.entrySet()) {
            long seq = s.getKey();
            byte[] data = s.getValue();
            if (seq + data.length <= next) {
                continue; // retransmission
            }
            if (seq > next) {
                break; // a hole: stop at the contiguous part
            }
            int from = (int) (next - seq);
            offsets.add(new long[] {all.size(), seq + from});
            all.write(data, from, data.length - from);
            next = seq + data.length;
        }
        byte[] bytes = all.toByteArray();
        int begin = 0;
        if (!flow.sawSyn) {
            begin = -1;
            for (long[] o : offsets) {
                if (chains(bytes, (int) o[0])) {
                    begin = (int) o[0];
                    break;
                }
            }
            if (begin < 0) {
                skipped[0] += bytes.length;
                return out;
            }
            skipped[0] += begin;
        }
        int pos = begin;
        while (pos + 4 <= bytes.length) {
            int len = ByteBuffer.wrap(bytes, pos, 4).getInt();
            if (len < 0 || pos + 4 + len > bytes.length) {
                break;
            }
            long seq = start + pos;
            Map.Entry<Long, Integer> fe = flow.frameOfSeq.floorEntry(seq + 4 + len - 1);
            int frameNo = fe == null ? 0 : fe.getValue();
            out.add(new Frame(frameNo, ByteBuffer.wrap(bytes, pos + 4, len).slice()));
            pos += 4 + len;
        }
        return out;
    }

    private static boolean chains(byte[] b, int pos) {
        int n = 0;
        while (pos + 4 <= b.length) {
            int len = ByteBuffer.wrap(b, pos, 4).getInt();
            if (len < 8 || len > 64 << 20) {
                return false;
            }
            pos += 4 + len;
            n++;
        }
        return n > 0 && pos == b.length;
    }

    private static void readPcap(Path file, Set<Integer> serverPorts, Map<Conn, Flow[]> conns) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        int magic = b.order(ByteOrder.BIG_ENDIAN).getInt(0);
        if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1) {
            b.order(ByteOrder.LITTLE_ENDIAN);
        } else if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
            throw new IOException("not a pcap file (pcapng is not read here)");
        }
        int linkType = b.getInt(20);
        int pos = 24;
        int frame = 0;
        while (pos + 16 <= b.limit()) {
            int incl = b.getInt(pos + 8);
            int p = pos + 16;
            int end = p + incl;
            pos = end;
            frame++;
            int ip;
            int etherType;
            switch (linkType) {
                case 1 -> { etherType = Short.toUnsignedInt(b.order(ByteOrder.BIG_ENDIAN).getShort(p + 12)); ip = p + 14; }
                case 113 -> { etherType = Short.toUnsignedInt(b.order(ByteOrder.BIG_ENDIAN).getShort(p + 14)); ip = p + 16; }
                default -> throw new IOException("link type " + linkType + " is not read here");
            }
            b.order(magic == 0xa1b2c3d4 || magic == 0xa1b23c4d ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
            if (etherType != 0x0800 || (b.get(ip + 9) & 0xff) != 6) {
                continue;
            }
            ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
            int ihl = (be.get(ip) & 0x0f) * 4;
            int ipEnd = Math.min(end, ip + Short.toUnsignedInt(be.getShort(ip + 2)));
            int tcp = ip + ihl;
            int sport = Short.toUnsignedInt(be.getShort(tcp));
            int dport = Short.toUnsignedInt(be.getShort(tcp + 2));
            long seq = Integer.toUnsignedLong(be.getInt(tcp + 4));
            int doff = ((be.get(tcp + 12) & 0xf0) >> 4) * 4;
            int flags = be.get(tcp + 13) & 0xff;
            boolean toServer = serverPorts.contains(dport);
            if (!toServer && !serverPorts.contains(sport)) {
                continue;
            }
            Conn c = toServer ? new Conn(sport, dport) : new Conn(dport, sport);
            Flow[] fl = conns.computeIfAbsent(c, k -> new Flow[] {new Flow(), new Flow()});
            Flow f = fl[toServer ? 0 : 1];
            if ((flags & 0x02) != 0) {
                if (f.base != null) { // the port pair is reused: keep the old connection apart
                    conns.put(new Conn(-conns.size(), c.serverPort()), fl);
                    fl = new Flow[] {new Flow(), new Flow()};
                    conns.put(c, fl);
                    f = fl[toServer ? 0 : 1];
                }
                f.syn(seq);
            }
            byte[] data = new byte[Math.max(0, ipEnd - tcp - doff)];
            be.get(tcp + doff, data);
            f.add(seq, data, frame);
        }
    }
}
