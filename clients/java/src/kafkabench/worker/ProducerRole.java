package kafkabench.worker;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The producer role (clients/PROTOCOL.md): the schedule run on this thread, one completion
 * record per record from KafkaProducer's own callback. Nothing is measured here.
 */
final class ProducerRole {
    private static final int MEASURED = 1;
    private static final int REFUSED = 2;
    private static final byte STAMP_MEASURED = 1;
    private static final byte STAMP_BACKLOG = 4;

    private final Map<String, Object> setup;
    private final Wire.Out out;
    private final LinkedBlockingQueue<Map<String, Object>> inbox;
    private final Wire.Stop stop;
    private final long origin;
    private final long unixMsAtOrigin;
    private final KafkaProducer<byte[], byte[]> producer;
    private final String[] topics;
    private final int topicFirst;
    private final int topicStep;
    private final int[] partitions;
    private int nextPartition;
    private final int ordinal;
    private final Generator gen;
    private final Rng tombstones;
    private final Long tombstoneAtMost;
    private final boolean stamped;
    private final List<Header> headers;
    private final byte[] stamp = new byte[21];
    private final Long inFlight;
    private final Internals internals;

    private final AtomicLong completed = new AtomicLong();
    private long issued;
    private long seq;
    private long topicCounter;
    private final Thread sender = Thread.currentThread();
    private boolean inSend;

    private final ConcurrentHashMap<String, Integer> kinds = new ConcurrentHashMap<>();
    private int nextKind = 1;

    ProducerRole(Map<String, Object> setup, List<byte[]> lines, Wire.Out out,
            LinkedBlockingQueue<Map<String, Object>> inbox, Wire.Stop stop) {
        this.setup = setup;
        this.out = out;
        this.inbox = inbox;
        this.stop = stop;
        origin = Json.big(setup, "origin_monotonic_ns");
        unixMsAtOrigin = Json.big(setup, "unix_ms_at_origin");
        Properties props = new Properties();
        for (Map.Entry<String, Object> e : Json.obj(setup, "properties").entrySet()) {
            props.put(e.getKey(), String.valueOf(e.getValue()));
        }
        // Java's averages cover a sample window (30 s by default): one that covers the run
        // makes their sums whole-run sums (clients/java/README.md).
        props.putIfAbsent("metrics.sample.window.ms", "86400000");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        producer = new KafkaProducer<>(props);
        List<Object> ts = Json.list(setup, "topics");
        topics = new String[ts.size()];
        for (int i = 0; i < topics.length; i++) {
            topics[i] = (String) ts.get(i);
        }
        topicFirst = (int) Json.num(setup, "topic_first");
        topicStep = (int) Json.num(setup, "topic_step");
        Object ps = setup.get("partitions");
        if (ps instanceof List) {
            List<?> l = (List<?>) ps;
            partitions = new int[l.size()];
            for (int i = 0; i < partitions.length; i++) {
                partitions[i] = (int) (double) (Double) l.get(i);
            }
        } else {
            partitions = null;
        }
        ordinal = (int) Json.num(setup, "ordinal");
        Map<String, Object> seeds = Json.obj(setup, "seeds");
        gen = new Generator(Json.obj(setup, "payload"), Json.obj(setup, "key"),
                Json.big(seeds, "payload"), Json.big(seeds, "key"), lines);
        tombstones = new Rng(Json.big(seeds, "tombstone"));
        tombstoneAtMost = Json.bigOrNull(setup, "tombstone_at_most");
        stamped = Json.bool(setup, "stamp");
        List<Header> hs = new ArrayList<>();
        if (stamped) {
            hs.add(new RecordHeader("kb", stamp));
        }
        for (Object o : Json.list(setup, "headers")) {
            List<?> kv = (List<?>) o;
            hs.add(new RecordHeader((String) kv.get(0),
                    ((String) kv.get(1)).getBytes(StandardCharsets.UTF_8)));
        }
        headers = hs.isEmpty() ? null : java.util.Collections.unmodifiableList(hs);
        inFlight = Json.longOrNull(setup, "in_flight");
        internals = new Internals(producer);
    }

    long now() {
        return System.nanoTime() - origin;
    }

    void run() throws Exception {
        // The partition leaders known before the clock: the first records do not wait for
        // metadata.
        for (String t : topics) {
            producer.partitionsFor(t);
        }
        out.json("{\"msg\":\"ready\"}");
        while (true) {
            Map<String, Object> m = inbox.take();
            String msg = (String) m.get("msg");
            switch (msg) {
                case "phase":
                    phase(m);
                    break;
                case "stop":
                    break; // noted by the input thread; the next phase sends nothing
                case "close":
                    producer.close(java.time.Duration.ofSeconds(stop.requested ? 0 : 30));
                    out.json("{\"msg\":\"bye\"}");
                    return;
                default:
                    throw new IllegalArgumentException("a producer does not take '" + msg + "'");
            }
        }
    }

    /** One phase: the schedule until its count, duration or shape ends; then its drain. */
    private void phase(Map<String, Object> m) throws Exception {
        String name = Json.str(m, "phase");
        boolean measured = name.equals("measured");
        boolean backlog = name.equals("backlog");
        Long count = Json.longOrNull(m, "count");
        Long durationNs = Json.bigOrNull(m, "duration_ns");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        internals.begin();
        Schedule sch = new Schedule(Json.obj(setup, "rate"), (long) Json.num(setup, "share_index"),
                (long) Json.num(setup, "share_of"), backlog);
        long start = now();
        long end = durationNs == null ? Long.MAX_VALUE : start + durationNs;
        long sent = 0, refused = 0, first = 0, last = 0;
        long nextProgress = start + 100_000_000L;
        int flags = measured ? MEASURED : 0;
        byte stampFlags = measured ? STAMP_MEASURED : backlog ? STAMP_BACKLOG : 0;
        while (!stop.requested) {
            if (count != null && sent >= count) {
                break;
            }
            long slot = sch.nextSlot();
            if (slot == Schedule.DONE) {
                break;
            }
            if (inFlight != null && !backlog) {
                waitInFlight(inFlight);
            }
            long intended, actual;
            if (slot == Schedule.NOW) {
                intended = actual = now();
                if (intended >= end) {
                    break;
                }
            } else {
                intended = start + slot;
                if (intended >= end) {
                    break;
                }
                waitUntil(intended);
                actual = now();
            }
            boolean tombstone = tombstoneAtMost != null
                    && Long.compareUnsigned(tombstones.next(), tombstoneAtMost) <= 0;
            long unixMs = unixMsAtOrigin + intended / 1_000_000L;
            byte[] value = tombstone ? null : gen.value(seq, unixMs);
            byte[] key = gen.key(seq);
            Integer partition = null;
            if (partitions != null) {
                partition = pick(key);
            }
            int topic = topicStep == 0 ? topicFirst
                    : (int) ((topicFirst + topicCounter * topicStep) % topics.length);
            topicCounter++;
            if (stamped) {
                Wire.Out.putLong(stamp, 0, intended);
                Wire.Out.putInt(stamp, 8, ordinal);
                Wire.Out.putLong(stamp, 12, seq);
                stamp[20] = stampFlags;
            }
            int bytes = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
            Completion cb = new Completion(intended, delayCode(actual - intended), bytes,
                    value == null ? -1 : value.length, topic, seq, flags);
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topics[topic], partition,
                    null, key, value, headers);
            inSend = true;
            try {
                producer.send(record, cb);
            } catch (RuntimeException e) {
                cb.refusedBy(e);
            } finally {
                inSend = false;
            }
            seq++;
            if (cb.refused) {
                refused++;
            } else {
                sent++;
                issued++;
            }
            if (measured) {
                if (first == 0) {
                    first = Math.max(actual, 1);
                }
                last = actual;
            }
            if (actual >= nextProgress) {
                nextProgress = actual + 100_000_000L;
                internals.sampleBuffer();
                out.json("{\"msg\":\"progress\",\"sent\":" + sent + "}");
            }
        }
        boolean drained = true;
        if (Json.bool(m, "drain")) {
            drained = drain(Json.num(m, "drain_timeout_ms"));
        }
        long cpu = mx.getCurrentThreadCpuTime() - cpu0;
        internals.sampleBuffer();
        String body = "{\"msg\":\"phase_done\",\"sent\":" + sent + ",\"refused\":" + refused
                + ",\"first_send_ns\":\"" + first + "\",\"last_send_ns\":\"" + last
                + "\",\"sender_cpu_ns\":\"" + Math.max(cpu, 0) + "\",\"drained\":" + drained
                + ",\"outstanding\":" + Math.max(issued - completed.get(), 0)
                + ",\"internals\":" + internals.end() + "}";
        out.json(body);
    }

    /** A shard's partition for a record: FNV-1a 64 of its key over the shard's own, or in turn. */
    private int pick(byte[] key) {
        int n = partitions.length;
        if (key == null) {
            int at = nextPartition;
            nextPartition = at + 1 == n ? 0 : at + 1;
            return partitions[at];
        }
        long h = 0xcbf29ce484222325L;
        for (byte b : key) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return partitions[(int) Long.remainderUnsigned(h, n)];
    }

    /** Never early: park until close, then spin the last stretch. */
    private void waitUntil(long t) {
        while (true) {
            long rem = t - now();
            if (rem <= 0 || stop.requested) {
                return;
            }
            if (rem > 200_000) {
                LockSupport.parkNanos(rem - 100_000);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private void waitInFlight(long limit) {
        int spins = 0;
        while (issued - completed.get() >= limit && !stop.requested) {
            if (spins++ < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    /** Every record sent has its completion, or the timeout passed (cut short by `stop`). */
    private boolean drain(double timeoutMs) {
        Thread f = new Thread(producer::flush, "kb-flush");
        f.setDaemon(true);
        f.start();
        long deadline = System.nanoTime() + (long) (timeoutMs * 1e6);
        boolean cut = false;
        while (completed.get() < issued) {
            if (stop.requested && !cut) {
                cut = true;
                deadline = Math.min(deadline, System.nanoTime() + stop.drainMs * 1_000_000L);
            }
            if (System.nanoTime() >= deadline) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    /** A send delay as the record carries it: ns below 2^31, else µs with bit 31 set. */
    static int delayCode(long ns) {
        if (ns < 0) {
            return 0;
        }
        if (ns < (1L << 31)) {
            return (int) ns;
        }
        return (int) (0x80000000L | Math.min(ns / 1000, 0x7fffffffL));
    }

    /** The id of an error kind, named to kafkabench the first time it is used. */
    private int kind(Exception e) {
        String name = e.getClass().getSimpleName();
        Integer id = kinds.get(name);
        if (id != null) {
            return id;
        }
        synchronized (this) {
            id = kinds.get(name);
            if (id != null) {
                return id;
            }
            int k = nextKind < 255 ? nextKind++ : 255;
            String named = k == 255 ? "other" : name;
            try {
                out.json("{\"msg\":\"error_kind\",\"id\":" + k + ",\"name\":"
                        + Json.quote(named) + "}");
            } catch (java.io.IOException io) {
                throw new java.io.UncheckedIOException(io);
            }
            kinds.put(name, k);
            return k;
        }
    }

    /** One record's completion, as ProducerPerformance's callback (one object per record). */
    private final class Completion implements Callback {
        private final long intended;
        private final int delay;
        private final int bytes;
        private final int valueBytes; // -1 (0xFFFFFFFF) for a tombstone
        private final int topic;
        private final long seq;
        private final int flags;
        boolean refused;

        Completion(long intended, int delay, int bytes, int valueBytes, int topic, long seq,
                int flags) {
            this.intended = intended;
            this.delay = delay;
            this.bytes = bytes;
            this.valueBytes = valueBytes;
            this.topic = topic;
            this.seq = seq;
            this.flags = flags;
        }

        void refusedBy(Exception e) {
            refused = true;
            write(now(), seq, -1, kind(e), flags | REFUSED);
        }

        @Override
        public void onCompletion(RecordMetadata md, Exception e) {
            long done = now();
            if (e == null) {
                completed.incrementAndGet();
                write(done, md.offset(), md.partition(), 0, flags);
                return;
            }
            // Called inside send() on the sending thread: the send call refused it.
            if (inSend && Thread.currentThread() == sender) {
                refused = true;
                write(done, seq, -1, kind(e), flags | REFUSED);
                return;
            }
            completed.incrementAndGet();
            int partition = md == null ? -1 : md.partition();
            write(done, seq, partition, kind(e), flags);
        }

        private void write(long done, long offsetOrSeq, int partition, int error, int f) {
            try {
                // The client does not say which broker acknowledged the record: unknown.
                out.completion(intended, done, offsetOrSeq, delay, partition, bytes, topic,
                        error, f, valueBytes, -1);
            } catch (java.io.IOException io) {
                // kafkabench is gone: the worker ends with its input.
                System.err.println("kafkabench worker: writing a completion: " + io);
            }
        }
    }
}
