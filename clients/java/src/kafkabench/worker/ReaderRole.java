package kafkabench.worker;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The reader role (clients/PROTOCOL.md): KafkaConsumer polled on this thread, one read record
 * per record it hands out (read time taken once per poll), the group's assignments and each
 * partition's end as messages. Nothing is verified or measured here.
 */
final class ReaderRole {
    private final Wire.Out out;
    private final LinkedBlockingQueue<Map<String, Object>> inbox;
    private final Wire.Stop stop;
    private final long origin;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<String> topics;
    private final int partitions;
    private final boolean group;
    private final String commit;
    private final long commitEvery;
    private final boolean commitSync;
    private boolean paused;
    private boolean subscribed;
    private long sinceCommit;
    /** Partitions whose end was said since their last record. */
    private final Set<TopicPartition> atEnd = new HashSet<>();
    private final Set<TopicPartition> mine = new HashSet<>();
    private double fetchBase = Double.NaN;
    private double bytesBase = Double.NaN;
    private long cpuBase = -1;

    ReaderRole(Map<String, Object> setup, Wire.Out out,
            LinkedBlockingQueue<Map<String, Object>> inbox, Wire.Stop stop) {
        this.out = out;
        this.inbox = inbox;
        this.stop = stop;
        origin = Json.big(setup, "origin_monotonic_ns");
        Properties props = new Properties();
        for (Map.Entry<String, Object> e : Json.obj(setup, "properties").entrySet()) {
            props.put(e.getKey(), String.valueOf(e.getValue()));
        }
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Map<String, Object> c = Json.obj(setup, "commit");
        commit = Json.str(c, "kind");
        commitEvery = commit.equals("every") ? (long) Json.num(c, "records") : 0;
        commitSync = commit.equals("every") && Json.bool(c, "sync");
        props.put("enable.auto.commit", String.valueOf(commit.equals("auto")));
        if (commit.equals("auto")) {
            props.put("auto.commit.interval.ms", String.valueOf((long) Json.num(c, "interval_ms")));
        }
        group = Json.bool(setup, "group");
        paused = Json.bool(setup, "paused");
        consumer = new KafkaConsumer<>(props);
        topics = new ArrayList<>();
        for (Object t : Json.list(setup, "topics")) {
            topics.add((String) t);
        }
        partitions = (int) Json.num(setup, "partitions");
        if (group) {
            subscribe();
        } else {
            List<TopicPartition> tps = new ArrayList<>();
            List<long[]> at = new ArrayList<>();
            for (Object o : Json.list(setup, "assign")) {
                List<?> a = (List<?>) o;
                int t = (int) (double) (Double) a.get(0);
                int p = (int) (double) (Double) a.get(1);
                tps.add(new TopicPartition(topics.get(t), p));
                at.add(new long[] {Long.parseLong((String) a.get(2))});
            }
            consumer.assign(tps);
            List<TopicPartition> beginning = new ArrayList<>();
            for (int i = 0; i < tps.size(); i++) {
                long off = at.get(i)[0];
                if (off < 0) {
                    beginning.add(tps.get(i));
                } else {
                    consumer.seek(tps.get(i), off);
                }
            }
            if (!beginning.isEmpty()) {
                consumer.seekToBeginning(beginning);
            }
            mine.addAll(tps);
            if (paused) {
                consumer.pause(tps);
            }
        }
    }

    long now() {
        return System.nanoTime() - origin;
    }

    private int part(TopicPartition tp) {
        int t = topics.indexOf(tp.topic());
        return t < 0 ? -1 : t * partitions + tp.partition();
    }

    private String parts(Collection<TopicPartition> tps) {
        StringBuilder b = new StringBuilder("[");
        for (TopicPartition tp : tps) {
            int p = part(tp);
            if (p >= 0) {
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append(p);
            }
        }
        return b.append(']').toString();
    }

    private void say(String json) {
        try {
            out.json(json);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void subscribe() {
        subscribed = true;
        consumer.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                // What was read is committed before the partitions go to another member.
                if (commit.equals("every")) {
                    consumer.commitSync();
                }
                mine.removeAll(tps);
                atEnd.removeAll(tps);
                say("{\"msg\":\"revoked\",\"parts\":" + parts(tps) + ",\"lost\":false}");
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> tps) {
                mine.removeAll(tps);
                atEnd.removeAll(tps);
                say("{\"msg\":\"revoked\",\"parts\":" + parts(tps) + ",\"lost\":true}");
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                if (paused && !tps.isEmpty()) {
                    consumer.pause(tps);
                }
                mine.addAll(tps);
                int g = consumer.groupMetadata().generationId();
                say("{\"msg\":\"assigned\",\"parts\":" + parts(tps) + ",\"generation\":" + g + "}");
            }
        });
    }

    private double metric(String group, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(name) && n.group().equals(group) && !n.tags().containsKey("topic")
                    && !n.tags().containsKey("node-id")) {
                Object v = e.getValue().metricValue();
                return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
            }
        }
        return Double.NaN;
    }

    void run() throws Exception {
        out.json("{\"msg\":\"ready\"}");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        while (true) {
            Map<String, Object> m;
            while ((m = inbox.poll()) != null) {
                String msg = (String) m.get("msg");
                switch (msg) {
                    case "measure":
                        if (paused) {
                            paused = false;
                            consumer.resume(consumer.assignment());
                        }
                        fetchBase = metric("consumer-fetch-manager-metrics", "fetch-total");
                        bytesBase = metric("consumer-fetch-manager-metrics", "bytes-consumed-total");
                        cpuBase = mx.getCurrentThreadCpuTime();
                        break;
                    case "leave":
                        if (subscribed) {
                            consumer.unsubscribe();
                            subscribed = false;
                        }
                        break;
                    case "rejoin":
                        if (!subscribed) {
                            subscribe();
                        }
                        break;
                    case "stop":
                        break;
                    case "close":
                        close(mx);
                        return;
                    default:
                        throw new IllegalArgumentException("a reader does not take '" + msg + "'");
                }
            }
            if (stop.requested) {
                // Wait for `close` without reading further.
                Thread.sleep(1);
                continue;
            }
            if (!subscribed && group) {
                Thread.sleep(10);
                continue;
            }
            ConsumerRecords<byte[], byte[]> rs = consumer.poll(Duration.ofMillis(10));
            long readNs = now();
            for (ConsumerRecord<byte[], byte[]> r : rs) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                int p = part(tp);
                if (p < 0) {
                    continue;
                }
                atEnd.remove(tp);
                Header h = r.headers().lastHeader("kb");
                int bytes = Math.max(r.serializedKeySize(), 0) + Math.max(r.serializedValueSize(), 0);
                out.read(readNs, r.offset(), p, bytes, h == null ? null : h.value());
                if (commitEvery > 0 && ++sinceCommit >= commitEvery) {
                    sinceCommit = 0;
                    if (commitSync) {
                        consumer.commitSync();
                    } else {
                        consumer.commitAsync();
                    }
                }
            }
            if (!paused) {
                for (TopicPartition tp : mine) {
                    if (atEnd.contains(tp)) {
                        continue;
                    }
                    OptionalLong lag = consumer.currentLag(tp);
                    if (lag.isPresent() && lag.getAsLong() == 0) {
                        atEnd.add(tp);
                        out.json("{\"msg\":\"end\",\"part\":" + part(tp) + "}");
                    }
                }
            }
        }
    }

    private void close(ThreadMXBean mx) throws Exception {
        double fetches = metric("consumer-fetch-manager-metrics", "fetch-total") - fetchBase;
        double bytes = metric("consumer-fetch-manager-metrics", "bytes-consumed-total") - bytesBase;
        long cpu = cpuBase < 0 ? 0 : mx.getCurrentThreadCpuTime() - cpuBase;
        if (commit.equals("every")) {
            try {
                consumer.commitSync();
            } catch (RuntimeException e) {
                System.err.println("kafkabench worker: the last commit: " + e);
            }
        }
        consumer.close(Duration.ofSeconds(10));
        StringBuilder b = new StringBuilder("{\"msg\":\"bye\",\"reader_cpu_ns\":\"" + cpu
                + "\",\"internals\":{");
        boolean any = false;
        if (!Double.isNaN(fetches)) {
            b.append("\"fetch-requests\":{\"total\":").append(fetches).append('}');
            any = true;
        }
        if (!Double.isNaN(bytes)) {
            b.append(any ? "," : "").append("\"fetch-bytes\":{\"total\":").append(bytes).append('}');
        }
        out.json(b.append("}}").toString());
    }
}
