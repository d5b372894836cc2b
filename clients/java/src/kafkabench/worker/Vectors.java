package kafkabench.worker;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The port checked against kafkabench's own generator and schedule: clients/vectors/
 * generator.json, written by kafkabench's test (src/run/worker/vectors.rs). Run by the build;
 * any disagreement fails it, so a worker that would send other records is never built.
 */
final class Vectors {
    private Vectors() {}

    private static int failures;

    private static void same(String what, Object want, Object got) {
        if (!want.equals(got)) {
            failures++;
            if (failures <= 20) {
                System.err.println("vectors: " + what + ": kafkabench " + want + ", this worker " + got);
            }
        }
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        if (b == null) {
            return s.toString();
        }
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    private static byte[] unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(Map<String, Object> m, String k) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object o : Json.list(m, k)) {
            out.add((Map<String, Object>) o);
        }
        return out;
    }

    static int check(Path dir) throws Exception {
        Map<String, Object> v = Json.object(
                new String(Files.readAllBytes(dir.resolve("generator.json")), StandardCharsets.UTF_8));
        int checked = 0;
        for (Map<String, Object> r : maps(v, "rng")) {
            Rng g = new Rng(Json.big(r, "seed"));
            for (Object d : Json.list(r, "draws")) {
                same("rng " + r.get("seed"), d, Long.toUnsignedString(g.next()));
                checked++;
            }
            for (Object f : Json.list(r, "f64")) {
                same("rng f64 " + r.get("seed"), f, g.nextF64());
                checked++;
            }
        }
        for (Map<String, Object> p : maps(v, "payloads")) {
            Map<String, Object> payload = Json.obj(p, "payload");
            List<byte[]> lines = new ArrayList<>();
            for (Object l : Json.list(p, "lines")) {
                lines.add(unhex((String) l));
            }
            long seed = "lines".equals(payload.get("kind")) ? Json.big(payload, "offset") : 0;
            // The payload seed travels in the vector's records' generator: the same as setup.
            Generator g = new Generator(payload, noKey(), seedOf(p), 0, lines);
            for (Map<String, Object> rec : maps(p, "records")) {
                long seq = (long) Json.num(rec, "seq");
                byte[] value = g.value(seq, Json.big(rec, "unix_ms"));
                same("payload " + payload + " seq " + seq, rec.get("value"), hex(value));
                checked++;
            }
        }
        for (Map<String, Object> k : maps(v, "keys")) {
            Generator g = new Generator(constantPayload(), Json.obj(k, "key"), 0, Json.big(k, "seed"),
                    List.of(new byte[0]));
            long seq = 0;
            for (Object want : Json.list(k, "keys")) {
                byte[] key = g.key(seq);
                same("key " + k.get("key") + " seq " + seq, want,
                        key == null ? "" : new String(key, StandardCharsets.UTF_8));
                seq++;
                checked++;
            }
        }
        for (Map<String, Object> t : maps(v, "tombstones")) {
            Rng r = new Rng(Json.big(t, "seed"));
            long atMost = Json.big(t, "at_most");
            for (Object want : Json.list(t, "tombstones")) {
                same("tombstone", want, Long.compareUnsigned(r.next(), atMost) <= 0);
                checked++;
            }
        }
        for (Map<String, Object> s : maps(v, "schedules")) {
            Schedule sch = new Schedule(Json.obj(s, "rate"), (long) Json.num(s, "share_index"),
                    (long) Json.num(s, "share_of"), false);
            int i = 0;
            for (Object want : Json.list(s, "slots")) {
                long slot = sch.nextSlot();
                String got = slot == Schedule.NOW ? "now" : slot == Schedule.DONE ? "done"
                        : Long.toUnsignedString(slot);
                same("schedule " + s.get("rate") + " share " + s.get("share_index") + " slot " + i,
                        want, got);
                i++;
                checked++;
                if (slot == Schedule.DONE) {
                    break;
                }
            }
        }
        checked += completions(dir);
        if (failures > 0) {
            System.err.println("vectors: " + failures + " of " + checked + " disagree");
            return 1;
        }
        System.err.println("vectors: " + checked + " agree");
        return 0;
    }

    /** The completion records byte for byte as kafkabench decodes them (completions.json). */
    private static int completions(Path dir) throws Exception {
        Map<String, Object> v = Json.object(new String(
                Files.readAllBytes(dir.resolve("completions.json")), StandardCharsets.UTF_8));
        int checked = 0;
        for (Map<String, Object> c : maps(v, "completions")) {
            byte[] b = new byte[Wire.COMPLETION];
            Wire.putCompletion(b, 0, Json.big(c, "intended_ns"), Json.big(c, "done_ns"),
                    Json.big(c, "offset_or_seq"),
                    ProducerRole.delayCode(Json.big(c, "send_delay_ns")),
                    (int) Json.num(c, "partition"), (int) (long) Json.num(c, "bytes"),
                    (int) Json.num(c, "topic"), (int) Json.num(c, "error"),
                    (int) Json.num(c, "flags"), (int) (long) Json.num(c, "value_bytes"),
                    (int) Json.num(c, "broker"));
            same("completion " + checked, c.get("hex"), hex(b));
            checked++;
        }
        return checked;
    }

    private static long seedOf(Map<String, Object> p) {
        return Json.big(p, "payload_seed");
    }

    private static Map<String, Object> noKey() {
        return Json.object("{\"kind\":\"none\"}");
    }

    private static Map<String, Object> constantPayload() {
        return Json.object("{\"kind\":\"lines\",\"offset\":\"0\",\"count\":1}");
    }
}
