package kafkabench.worker;

import java.util.List;
import java.util.Map;

/**
 * The send schedule, kafkabench's pacer (src/run/pacer.rs) in the same floating-point steps:
 * record i is due when the rate's integral reaches i; sender k of P takes i = k (mod P).
 */
final class Schedule {
    /** The next record is due at once (an unlimited rate). */
    static final long NOW = -1;
    /** The shape is over. */
    static final long DONE = -2;

    private static final double ROUNDING_SLACK = 1e-9;

    private final int kind; // 0 unlimited, 1 fixed, 2 shape
    private final double nsPerRecord;
    private final double[] first;
    private final double[] end;
    private final double[] startNs;
    private final double[] segNsPerRecord;
    private final double[] rampRate;
    private final double[] rampHalfSlope;
    private final boolean[] ramp;
    private final long total;

    private final long step;
    private long next;
    private int segment;

    Schedule(Map<String, Object> rate, long shareIndex, long shareOf, boolean unlimited) {
        String k = unlimited ? "unlimited" : Json.str(rate, "kind");
        step = shareOf;
        next = shareIndex;
        switch (k) {
            case "unlimited":
                kind = 0;
                nsPerRecord = 0;
                first = end = startNs = segNsPerRecord = rampRate = rampHalfSlope = null;
                ramp = null;
                total = 0;
                break;
            case "fixed":
                kind = 1;
                nsPerRecord = 1e9 / Json.num(rate, "per_sec");
                first = end = startNs = segNsPerRecord = rampRate = rampHalfSlope = null;
                ramp = null;
                total = 0;
                break;
            case "shape": {
                kind = 2;
                nsPerRecord = 0;
                List<Object> segs = Json.list(rate, "segments");
                int n = segs.size();
                double[] f = new double[n], e = new double[n], st = new double[n];
                double[] npr = new double[n], rr = new double[n], hs = new double[n];
                boolean[] rp = new boolean[n];
                double integral = 0.0, start = 0.0;
                int used = 0;
                for (Object o : segs) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> s = (Map<String, Object>) o;
                    long durNs = Json.big(s, "duration_ns");
                    // Duration::as_secs_f64: whole seconds plus the nanoseconds over 1e9.
                    double secs = (double) (durNs / 1_000_000_000L)
                            + (double) (durNs % 1_000_000_000L) / 1e9;
                    double perSec = Json.num(s, "per_sec");
                    double to = s.get("ramp_to") == null ? perSec : Json.num(s, "ramp_to");
                    double records = (perSec + to) / 2.0 * secs;
                    if (records > 0.0) {
                        f[used] = integral;
                        e[used] = integral + records;
                        st[used] = start;
                        npr[used] = 1e9 / perSec;
                        rp[used] = to != perSec;
                        rr[used] = perSec;
                        hs[used] = (to - perSec) / (2.0 * secs);
                        used++;
                    }
                    integral += records;
                    start += secs * 1e9;
                }
                first = java.util.Arrays.copyOf(f, used);
                end = java.util.Arrays.copyOf(e, used);
                startNs = java.util.Arrays.copyOf(st, used);
                segNsPerRecord = java.util.Arrays.copyOf(npr, used);
                ramp = java.util.Arrays.copyOf(rp, used);
                rampRate = java.util.Arrays.copyOf(rr, used);
                rampHalfSlope = java.util.Arrays.copyOf(hs, used);
                total = (long) Math.floor(integral + ROUNDING_SLACK);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown rate kind " + k);
        }
    }

    boolean paced() {
        return kind != 0;
    }

    /**
     * The next record of this share: its offset in ns from the phase's start, NOW or DONE.
     */
    long nextSlot() {
        long i = next;
        long offset;
        switch (kind) {
            case 0:
                return NOW;
            case 1:
                offset = (long) ((double) i * nsPerRecord);
                break;
            default:
                if (i >= total) {
                    return DONE;
                }
                while (true) {
                    if (segment >= first.length) {
                        return DONE;
                    }
                    if ((double) i < end[segment] - ROUNDING_SLACK) {
                        offset = timeIn(segment, i);
                        break;
                    }
                    segment++;
                }
        }
        next += step;
        return offset;
    }

    private long timeIn(int s, long i) {
        double k = Math.max((double) i - first[s], 0.0);
        double secs;
        if (!ramp[s]) {
            return (long) (startNs[s] + k * segNsPerRecord[s]);
        } else if (k == 0.0) {
            secs = 0.0;
        } else {
            double rate = rampRate[s];
            double half = rampHalfSlope[s];
            secs = 2.0 * k / (rate + Math.sqrt(Math.max(rate * rate + 4.0 * half * k, 0.0)));
        }
        return (long) (startNs[s] + secs * 1e9);
    }
}
