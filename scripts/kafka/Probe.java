// Readiness probe for scripts/kafka-local, run in Java's source-launcher mode (no build step):
// waits until the cluster reports the expected number of brokers, then proves it accepts an
// acks=all write. Exit 0 when ready, 1 when the deadline passes.
// Arguments: bootstrap, broker count, timeout in seconds, and optionally a client properties file
// (security.protocol, SASL and truststore settings for a secured listener).
import java.io.FileReader;
import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Probe {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int brokers = Integer.parseInt(args[1]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[2]) * 1000;
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "3000");
        p.put("default.api.timeout.ms", "5000");
        if (args.length > 3) {
            try (FileReader security = new FileReader(args[3])) { p.load(security); }
        }
        String last = "no answer yet";
        while (System.currentTimeMillis() < deadline) {
            try (Admin admin = Admin.create(p)) {
                int seen = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
                if (seen < brokers) { last = seen + " of " + brokers + " brokers up"; Thread.sleep(500); continue; }
                short rf = (short) Math.min(brokers, 3);
                try {
                    admin.createTopics(List.of(new NewTopic("__kafkabench_probe", 1, rf))).all().get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) throw e;
                }
                Properties pp = new Properties();
                pp.putAll(p);
                pp.put("acks", "all");
                pp.put("delivery.timeout.ms", "10000");
                pp.put("request.timeout.ms", "5000");
                pp.put("linger.ms", "0");
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                    producer.send(new ProducerRecord<>("__kafkabench_probe", "ready".getBytes())).get(10, TimeUnit.SECONDS);
                }
                System.out.println("ready: " + seen + " broker(s) at " + bootstrap + " accept acks=all writes");
                return;
            } catch (Exception e) {
                last = e.toString();
                Thread.sleep(500);
            }
        }
        System.err.println("kafka-local: cluster not ready in time: " + last);
        System.exit(1);
    }
}
