package kafkabench.worker;

import java.util.List;
import java.util.Map;

/**
 * A record size drawn as kafkabench's SizeTable::draw (src/model/size.rs): an alias table over
 * bins of whole sizes, then a size uniformly within the bin. Two draws, integer arithmetic
 * only, so every client draws the same sizes from the same seed (clients/PROTOCOL.md).
 */
final class SizeTable {
    private final int[] lo;
    private final long[] span;
    private final long[] keep;
    private final int[] alias;

    SizeTable(Map<String, Object> m) {
        List<Object> bins = Json.list(m, "bins");
        List<Object> slots = Json.list(m, "slots");
        int n = bins.size();
        if (n == 0 || slots.size() != n) {
            throw new IllegalArgumentException("a size table of " + n + " bins and "
                    + slots.size() + " slots");
        }
        lo = new int[n];
        span = new long[n];
        keep = new long[n];
        alias = new int[n];
        for (int i = 0; i < n; i++) {
            List<?> b = (List<?>) bins.get(i);
            List<?> s = (List<?>) slots.get(i);
            lo[i] = (int) (double) (Double) b.get(0);
            span[i] = (long) (double) (Double) b.get(1);
            keep[i] = Long.parseUnsignedLong((String) s.get(0));
            alias[i] = (int) (double) (Double) s.get(1);
            if (span[i] < 1 || alias[i] < 0 || alias[i] >= n) {
                throw new IllegalArgumentException("size bin " + i + " is malformed");
            }
        }
    }

    /** The high half of the unsigned 128-bit product (Java 17 has no unsignedMultiplyHigh). */
    private static long mulHigh(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }

    int draw(Rng r) {
        long x = r.next();
        long n = keep.length;
        int i = (int) mulHigh(x, n);
        int b = Long.compareUnsigned(x * n, keep[i]) < 0 ? i : alias[i];
        return lo[b] + (int) mulHigh(r.next(), span[b]);
    }

    int largest() {
        int n = lo.length - 1;
        return lo[n] + (int) span[n] - 1;
    }
}
