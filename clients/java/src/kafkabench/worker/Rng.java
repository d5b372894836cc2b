package kafkabench.worker;

/** kafkabench's generator, wyrand (src/random.rs): one 64-bit draw per call. */
final class Rng {
    private long s;

    Rng(long seed) {
        s = seed ^ 0x9E3779B97F4A7C15L;
    }

    long next() {
        s += 0xa0761d6478bd642fL;
        long a = s;
        long b = s ^ 0xe7037ed1a0b428dbL;
        // The unsigned 128-bit product's high half from the signed one (Java 17 has no
        // Math.unsignedMultiplyHigh).
        long hi = Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
        return hi ^ (a * b);
    }

    /** Uniform in [0, 1). */
    double nextF64() {
        return (next() >>> 11) * 0x1.0p-53;
    }

    /** Fills buf[0, n) with draws, 8 bytes each little-endian, the last partial. */
    void fill(byte[] buf, int n) {
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            long x = next();
            for (int k = 0; k < 8; k++) {
                buf[i + k] = (byte) (x >>> (8 * k));
            }
        }
        if (i < n) {
            long x = next();
            for (int k = 0; i < n; k++, i++) {
                buf[i] = (byte) (x >>> (8 * k));
            }
        }
    }
}
