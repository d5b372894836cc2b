package kafkabench.worker;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * kafkabench's worker for Apache Kafka's Java client (clients/PROTOCOL.md): `hello`, a `setup`
 * for one role, then that role until `close`. `--vectors DIR` checks the generator and the
 * schedule against kafkabench's test vectors instead (the build runs it).
 */
public final class Main {
    private Main() {}

    /** The kafka-clients jar's own version (its `kafka/kafka-version.properties`). */
    static String clientVersion() {
        try (java.io.InputStream s = org.apache.kafka.clients.producer.KafkaProducer.class
                .getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (s != null) {
                p.load(s);
            }
            return p.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--vectors")) {
            System.exit(Vectors.check(Path.of(args[1])));
        }
        String version = clientVersion();
        boolean reader = false;
        Wire.Out out = null;
        Wire.In in = new Wire.In(System.in);
        // `hello` goes out before the output knows its records' size: a plain JSON frame.
        Wire.Out hello = new Wire.Out((byte) 'C', Wire.COMPLETION);
        hello.json("{\"msg\":\"hello\",\"protocol\":2,\"client\":\"java\",\"version\":"
                + Json.quote(version) + ",\"roles\":[\"producer\",\"reader\"]}");
        out = hello;
        try {
            Map<String, Object> setup = in.message();
            if (!"setup".equals(setup.get("msg"))) {
                throw new IllegalArgumentException("'setup' expected, got " + setup.get("msg"));
            }
            String role = Json.str(setup, "role");
            reader = role.equals("reader");
            if (reader) {
                out = new Wire.Out((byte) 'R', 48);
            }
            List<byte[]> lines = null;
            Map<String, Object> payload = reader ? null : Json.obj(setup, "payload");
            if (payload != null && "lines".equals(payload.get("kind"))) {
                lines = in.lines((long) Json.num(payload, "count"));
            }
            LinkedBlockingQueue<Map<String, Object>> inbox = new LinkedBlockingQueue<>();
            Wire.Stop stop = new Wire.Stop();
            switch (role) {
                case "producer": {
                    ProducerRole p = new ProducerRole(setup, lines, out, inbox, stop);
                    in.follow(inbox, stop);
                    p.run();
                    break;
                }
                case "reader": {
                    ReaderRole r = new ReaderRole(setup, out, inbox, stop);
                    in.follow(inbox, stop);
                    r.run();
                    break;
                }
                default:
                    throw new IllegalArgumentException("no role '" + role + "'");
            }
            out.flushRecords();
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            try {
                out.json("{\"msg\":\"fail\",\"message\":" + Json.quote(String.valueOf(t)) + "}");
            } catch (Throwable ignored) {
                // the output is gone too
            }
            System.exit(1);
        }
    }
}
