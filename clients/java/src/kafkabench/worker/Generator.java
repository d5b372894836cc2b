package kafkabench.worker;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * kafkabench's payload and key generators (src/run/payload.rs), byte for byte: the same seed
 * gives the same values and keys on every client (checked against clients/vectors/).
 *
 * KafkaProducer copies a record's key and value into its batch inside send(), so each is
 * written into an array reused per length: nothing is allocated per record here.
 */
final class Generator {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** Where values and keys come from. */
    private final int payloadKind; // 0 random, 1 json, 2 lines
    private final int size;
    private final int randomBytes;
    private final byte[] event;
    private final List<byte[]> lines;
    private final long lineOffset;
    private final Rng payloadRng;
    private final byte[] randomBuf;
    private final byte[] jsonScratch;
    private final byte[][] jsonBySize = new byte[64][];
    private final java.util.HashMap<Integer, byte[]> jsonLarge = new java.util.HashMap<>();

    /** `sizes` in the payload: each record's size drawn (random, json, a constant's line). */
    private final SizeTable sizes;
    private final Rng sizeRng;
    private final double compressibility;

    private final int keyKind; // 0 none, 1 fixed, 2 sequence, 3 uniform, 4 zipf
    private final byte[] fixedKey;
    private final long uniformN;
    private final Zipf zipf;
    private final Rng keyRng;
    private final byte[] keyScratch = new byte[32];
    private final byte[][] keyByLength = new byte[33][];

    Generator(Map<String, Object> payload, Map<String, Object> key, long payloadSeed,
            long keySeed, List<byte[]> lines) {
        payloadRng = new Rng(payloadSeed);
        String pk = Json.str(payload, "kind");
        switch (pk) {
            case "random": {
                payloadKind = 0;
                size = (int) Json.num(payload, "size");
                double c = Json.num(payload, "compressibility");
                randomBytes = (int) Math.round((double) size * (1.0 - c));
                randomBuf = new byte[size];
                event = null;
                jsonScratch = null;
                this.lines = null;
                lineOffset = 0;
                break;
            }
            case "json":
                payloadKind = 1;
                size = (int) Json.num(payload, "size");
                randomBytes = 0;
                randomBuf = null;
                event = Json.str(payload, "event").getBytes(StandardCharsets.UTF_8);
                jsonScratch = new byte[Math.max(size, 256) + event.length + 128];
                this.lines = null;
                lineOffset = 0;
                break;
            case "lines":
                payloadKind = 2;
                size = 0;
                randomBytes = 0;
                randomBuf = null;
                event = null;
                jsonScratch = null;
                if (lines == null || lines.isEmpty()) {
                    throw new IllegalArgumentException("a lines payload with no lines");
                }
                this.lines = lines;
                lineOffset = Json.big(payload, "offset");
                break;
            default:
                throw new IllegalArgumentException("unknown payload kind " + pk);
        }
        compressibility = "random".equals(pk) ? Json.num(payload, "compressibility") : 0.0;
        Object st = payload.get("sizes");
        if (st != null) {
            @SuppressWarnings("unchecked")
            Map<String, Object> sm = (Map<String, Object>) st;
            sizes = new SizeTable(sm);
            sizeRng = new Rng(Json.big(sm, "seed"));
            int largest = payloadKind == 2 ? lines.get(0).length : size;
            if (payloadKind == 2 && lines.size() != 1) {
                throw new IllegalArgumentException("drawn sizes over " + lines.size()
                        + " payload lines (a constant is one)");
            }
            if (sizes.largest() > largest) {
                throw new IllegalArgumentException("sizes up to " + sizes.largest()
                        + " bytes in a payload of " + largest);
            }
        } else {
            sizes = null;
            sizeRng = null;
        }
        keyRng = new Rng(keySeed);
        String kk = Json.str(key, "kind");
        byte[] fixed = null;
        long n = 0;
        Zipf z = null;
        switch (kk) {
            case "none": keyKind = 0; break;
            case "fixed":
                keyKind = 1;
                fixed = Json.str(key, "value").getBytes(StandardCharsets.UTF_8);
                break;
            case "sequence": keyKind = 2; break;
            case "uniform":
                keyKind = 3;
                n = Json.big(key, "n");
                break;
            case "zipf":
                keyKind = 4;
                z = new Zipf(Json.big(key, "n"), Json.num(key, "s"));
                break;
            default:
                throw new IllegalArgumentException("unknown key kind " + kk);
        }
        fixedKey = fixed;
        uniformN = n;
        zipf = z;
    }

    /** The value of record `seq`; `unixMs` is stamped into JSON records. */
    byte[] value(long seq, long unixMs) {
        if (sizes != null) {
            return drawn(seq, unixMs);
        }
        switch (payloadKind) {
            case 0:
                payloadRng.fill(randomBuf, randomBytes);
                return randomBuf;
            case 1:
                return json(seq, unixMs);
            default: {
                long count = lines.size();
                // (seq + offset) mod count, all unsigned as usize is.
                long i = Long.remainderUnsigned(seq + lineOffset, count);
                return lines.get((int) i);
            }
        }
    }

    /**
     * A record whose size is drawn first (payload.rs's generate). Its array is new: sizes vary
     * per record, and an array kept per size could hold up to 64 MiB for each.
     */
    private byte[] drawn(long seq, long unixMs) {
        int n = sizes.draw(sizeRng);
        switch (payloadKind) {
            case 0: {
                byte[] out = new byte[n];
                int random = (int) Math.round((double) n * (1.0 - compressibility));
                payloadRng.fill(out, Math.max(0, Math.min(random, n)));
                return out;
            }
            case 1:
                return json(seq, unixMs, n);
            default:
                return java.util.Arrays.copyOf(lines.get(0), n);
        }
    }

    private int put(byte[] b, int at, byte[] what) {
        System.arraycopy(what, 0, b, at, what.length);
        return at + what.length;
    }

    private static final byte[] J_SEQ = ascii("{\"seq\":");
    private static final byte[] J_ID = ascii(",\"id\":\"");
    private static final byte[] J_TS = ascii("\",\"ts\":");
    private static final byte[] J_EVENT = ascii(",\"event\":\"");
    private static final byte[] J_PAYLOAD = ascii("\",\"payload\":\"");
    private static final byte[] J_END = ascii("\"}");

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private byte[] json(long seq, long unixMs) {
        return json(seq, unixMs, size);
    }

    private byte[] json(long seq, long unixMs, int size) {
        byte[] b = jsonScratch;
        int at = put(b, 0, J_SEQ);
        at = decimal(b, at, seq);
        at = put(b, at, J_ID);
        at = hex(b, at, 16);
        at = put(b, at, J_TS);
        at = decimal(b, at, unixMs);
        at = put(b, at, J_EVENT);
        at = put(b, at, event);
        at = put(b, at, J_PAYLOAD);
        int filler = Math.max(size - (at + 2), 0);
        byte[] out = sizes == null ? jsonArray(at + filler + 2) : new byte[at + filler + 2];
        System.arraycopy(b, 0, out, 0, at);
        at = hex(out, at, filler);
        put(out, at, J_END);
        return out;
    }

    /** The reused array of a JSON record's length. */
    private byte[] jsonArray(int len) {
        int slot = len - size;
        if (slot >= 0 && slot < jsonBySize.length) {
            byte[] a = jsonBySize[slot];
            if (a == null) {
                a = jsonBySize[slot] = new byte[len];
            }
            return a;
        }
        return jsonLarge.computeIfAbsent(len, byte[]::new);
    }

    /** `n` lowercase hex characters, low nibble first, one draw per 16. */
    private int hex(byte[] b, int at, int n) {
        int left = n;
        while (left > 0) {
            long x = payloadRng.next();
            int take = Math.min(left, 16);
            for (int k = 0; k < take; k++) {
                b[at++] = HEX[(int) (x & 0xf)];
                x >>>= 4;
            }
            left -= take;
        }
        return at;
    }

    /** The decimal digits of the unsigned `v`. */
    private int decimal(byte[] b, int at, long v) {
        return decimalInto(b, at, v);
    }

    /** The key of record `seq` (null for none). */
    byte[] key(long seq) {
        long k;
        switch (keyKind) {
            case 0: return null;
            case 1: return fixedKey;
            case 2: k = seq; break;
            case 3: k = Long.remainderUnsigned(keyRng.next(), uniformN); break;
            default: k = zipf.sample(keyRng) - 1; break;
        }
        byte[] s = keyScratch;
        s[0] = 'k';
        s[1] = 'e';
        s[2] = 'y';
        s[3] = '-';
        int len = decimalInto(s, 4, k);
        byte[] out = keyByLength[len];
        if (out == null) {
            out = keyByLength[len] = new byte[len];
        }
        System.arraycopy(s, 0, out, 0, len);
        return out;
    }

    private final byte[] digits = new byte[20];

    /** Writes the unsigned `v` in decimal at `at` without allocating; returns the end. */
    private int decimalInto(byte[] b, int at, long v) {
        byte[] tmp = digits;
        int i = 20;
        do {
            i--;
            tmp[i] = (byte) ('0' + Long.remainderUnsigned(v, 10));
            v = Long.divideUnsigned(v, 10);
        } while (v != 0);
        System.arraycopy(tmp, i, b, at, 20 - i);
        return at + 20 - i;
    }

    /** Zipf over 1..=n by rejection-inversion (Hörmann and Derflinger), as payload.rs. */
    static final class Zipf {
        private final double n;
        private final double s;
        private final double hX1;
        private final double hN;
        private final double c;

        Zipf(long n, double s) {
            this.n = (double) n;
            this.s = s;
            this.hX1 = bigH(1.5) - 1.0;
            this.hN = bigH((double) n + 0.5);
            this.c = 2.0 - bigHInv(bigH(2.5) - h(2.0));
        }

        private double h(double x) {
            return Math.exp(-s * Math.log(x));
        }

        private double bigH(double x) {
            double lx = Math.log(x);
            return expm1OverX((1.0 - s) * lx) * lx;
        }

        private double bigHInv(double x) {
            double t = Math.max(x * (1.0 - s), -1.0);
            return Math.exp(log1pOverX(t) * x);
        }

        long sample(Rng rng) {
            while (true) {
                double u = hN + rng.nextF64() * (hX1 - hN);
                double x = bigHInv(u);
                double k = Math.min(Math.max((double) Math.round(x), 1.0), n);
                if (k - x <= c || u >= bigH(k + 0.5) - h(k)) {
                    return (long) k;
                }
            }
        }

        private static double log1pOverX(double x) {
            if (Math.abs(x) > 1e-8) {
                return Math.log1p(x) / x;
            }
            return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
        }

        private static double expm1OverX(double x) {
            if (Math.abs(x) > 1e-8) {
                return Math.expm1(x) / x;
            }
            return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
        }
    }
}
