// An independent end-to-end reader for bench/e2e.sh: Kafka's own Java consumer (not
// librdkafka) reads a kafkabench topic and, for every measured record, writes the time it
// arrived less the intended send time its stamp carries (header `kb`, 21 bytes little-endian:
// intended ns since the run's clock origin, producer, sequence, flags; docs/result-format.md).
// Both clocks are the machine's CLOCK_MONOTONIC (System.nanoTime on Linux), so once the run's
// origin is known (`stamp_origin_monotonic_ns` in its result file) e2e = value - origin.
//
// Usage: java -cp kafka-clients.jar:... StampReader BOOTSTRAP TOPIC OUT_FILE IDLE_SECS
import java.io.*;
import java.nio.*;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class StampReader {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], out = args[2];
        long idleNs = Long.parseLong(args[3]) * 1_000_000_000L;
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("fetch.max.wait.ms", "100");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long n = 0, first = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
             DataOutputStream w = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out)))) {
            // The topic is created by kafkabench: wait until it exists, then read every
            // partition by hand (no group to join: reading starts at once).
            List<org.apache.kafka.common.PartitionInfo> parts;
            while ((parts = c.listTopics(Duration.ofSeconds(5)).get(topic)) == null) Thread.sleep(50);
            List<org.apache.kafka.common.TopicPartition> tps = new ArrayList<>();
            for (org.apache.kafka.common.PartitionInfo pi : parts)
                tps.add(new org.apache.kafka.common.TopicPartition(topic, pi.partition()));
            c.assign(tps);
            c.seekToBeginning(tps);
            long lastRecord = System.nanoTime();
            while (System.nanoTime() - lastRecord < idleNs) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                long now = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    lastRecord = now;
                    Header h = r.headers().lastHeader("kb");
                    if (h == null || h.value().length != 21) continue;
                    ByteBuffer b = ByteBuffer.wrap(h.value()).order(ByteOrder.LITTLE_ENDIAN);
                    long intended = b.getLong(0);
                    boolean measured = (h.value()[20] & 1) != 0;
                    if (!measured) continue;
                    w.writeLong(now - intended);
                    n++;
                }
            }
        }
        System.err.println("StampReader: " + n + " measured records");
    }
}
