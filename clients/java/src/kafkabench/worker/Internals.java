package kafkabench.worker;

import java.util.Map;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.stats.SampledStat;

/**
 * The Java client's own metrics over one phase, as sums (clients/PROTOCOL.md, `internals`).
 * An average (`batch-size-avg`) is read as its sample's sum and count: with the sample window
 * covering the client's life (the worker sets `metrics.sample.window.ms` to a day unless the
 * scenario sets it), those are totals since the client started, and a phase's are the
 * difference between its end and its start. Counters (`-total`) likewise; the buffer's free
 * bytes, a gauge, is sampled about every 100 ms and its lowest kept.
 */
final class Internals {
    private static final String[] AVERAGES = {"batch-size", "records-per-request", "compression-rate"};
    private static final String[] TOTALS = {"record-send", "record-error", "record-retry",
        "bufferpool-wait-time-ns", "buffer-exhausted", "batch-split"};

    private static final java.lang.reflect.Method CURRENT;
    private static final java.lang.reflect.Method OLDEST;
    private static final java.lang.reflect.Field VALUE;
    private static final java.lang.reflect.Field EVENTS;

    static {
        java.lang.reflect.Method c = null, o = null;
        java.lang.reflect.Field v = null, n = null;
        try {
            c = SampledStat.class.getMethod("current", long.class);
            o = SampledStat.class.getMethod("oldest", long.class);
            Class<?> sample = Class.forName("org.apache.kafka.common.metrics.stats.SampledStat$Sample");
            v = sample.getField("value");
            n = sample.getField("eventCount");
            c.setAccessible(true);
            o.setAccessible(true);
            v.setAccessible(true);
            n.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("kafkabench worker: the client's averages cannot be read as sums: " + e);
        }
        CURRENT = c;
        OLDEST = o;
        VALUE = v;
        EVENTS = n;
    }

    private final Map<MetricName, ? extends Metric> metrics;
    private final double[][] startAvg = new double[AVERAGES.length][2];
    private final double[] startTotal = new double[TOTALS.length];
    private double bufferMin = Double.NaN;

    Internals(org.apache.kafka.clients.producer.KafkaProducer<?, ?> p) {
        metrics = p.metrics();
    }

    private Metric find(String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals(name) && n.group().equals("producer-metrics")) {
                return e.getValue();
            }
        }
        return null;
    }

    /** (sum, count) of an average since the client started; null when not readable. */
    private double[] parts(String name) {
        Metric m = find(name + "-avg");
        if (!(m instanceof KafkaMetric) || !((KafkaMetric) m).isMeasurable()) {
            return null;
        }
        Object stat = ((KafkaMetric) m).measurable();
        if (!(stat instanceof SampledStat) || CURRENT == null) {
            return null;
        }
        long now = System.currentTimeMillis();
        try {
            // SampledStat.Sample is a protected class: its public fields are read reflectively.
            Object cur = CURRENT.invoke(stat, now);
            Object old = OLDEST.invoke(stat, now);
            double sum = VALUE.getDouble(cur);
            double count = EVENTS.getLong(cur);
            if (old != cur) {
                sum += VALUE.getDouble(old);
                count += EVENTS.getLong(old);
            }
            return new double[] {sum, count};
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private double total(String name) {
        Metric m = find(name + "-total");
        if (m == null) {
            return Double.NaN;
        }
        Object v = m.metricValue();
        return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
    }

    void begin() {
        for (int i = 0; i < AVERAGES.length; i++) {
            double[] p = parts(AVERAGES[i]);
            startAvg[i] = p == null ? new double[] {0, 0} : p;
        }
        for (int i = 0; i < TOTALS.length; i++) {
            startTotal[i] = total(TOTALS[i]);
        }
        bufferMin = Double.NaN;
        sampleBuffer();
    }

    void sampleBuffer() {
        Metric m = find("buffer-available-bytes");
        if (m != null && m.metricValue() instanceof Number) {
            double v = ((Number) m.metricValue()).doubleValue();
            bufferMin = Double.isNaN(bufferMin) ? v : Math.min(bufferMin, v);
        }
    }

    /** The phase's sums as the `internals` JSON object. */
    String end() {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < AVERAGES.length; i++) {
            double[] p = parts(AVERAGES[i]);
            if (p == null) {
                continue;
            }
            double sum = p[0] - startAvg[i][0];
            double count = p[1] - startAvg[i][1];
            if (count <= 0 || Double.isNaN(sum)) {
                continue;
            }
            sep(b).append('"').append(AVERAGES[i]).append("\":{\"sum\":").append(sum)
                    .append(",\"count\":").append(count).append('}');
        }
        for (int i = 0; i < TOTALS.length; i++) {
            double t = total(TOTALS[i]) - startTotal[i];
            if (Double.isNaN(t)) {
                continue;
            }
            sep(b).append('"').append(TOTALS[i]).append("\":{\"total\":").append(t).append('}');
        }
        if (!Double.isNaN(bufferMin)) {
            sep(b).append("\"buffer-available-bytes\":{\"min\":").append(bufferMin).append('}');
        }
        return b.append('}').toString();
    }

    private static StringBuilder sep(StringBuilder b) {
        if (b.length() > 1) {
            b.append(',');
        }
        return b;
    }
}
