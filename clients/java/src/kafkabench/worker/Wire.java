package kafkabench.worker;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;

/** The protocol's frames (clients/PROTOCOL.md): a u32 LE length, a type letter, a body. */
final class Wire {
    static final int MAX_FRAME = 16 << 20;

    private Wire() {}

    /** Completion records' size (protocol 2: the acknowledging broker at 44). */
    static final int COMPLETION = 48;

    /** One completion record's 48 bytes at `at` (clients/PROTOCOL.md, `C`). */
    static void putCompletion(byte[] b, int at, long intended, long done, long offsetOrSeq,
            int delay, int partition, int bytes, int topic, int error, int flags, int valueBytes,
            int broker) {
        Out.putLong(b, at, intended);
        Out.putLong(b, at + 8, done);
        Out.putLong(b, at + 16, offsetOrSeq);
        Out.putInt(b, at + 24, delay);
        Out.putInt(b, at + 28, partition);
        Out.putInt(b, at + 32, bytes);
        b[at + 36] = (byte) topic;
        b[at + 37] = (byte) (topic >>> 8);
        b[at + 38] = (byte) error;
        b[at + 39] = (byte) flags;
        Out.putInt(b, at + 40, valueBytes);
        Out.putInt(b, at + 44, broker);
    }

    /**
     * The worker's standard output. JSON messages go out at once; completion or read records
     * are batched into frames of up to 64 KiB, sent when full, before any JSON message (the
     * stream stays ordered) and by a flusher every 5 ms.
     */
    static final class Out {
        private final OutputStream os = new FileOutputStream(FileDescriptor.out);
        private final byte[] records;
        private final int recordSize;
        private final byte kind;
        private int used = 5;

        Out(byte kind, int recordSize) {
            this.kind = kind;
            this.recordSize = recordSize;
            this.records = new byte[5 + (65536 / Math.max(recordSize, 1)) * Math.max(recordSize, 1)];
            Thread flusher = new Thread(() -> {
                while (true) {
                    try {
                        Thread.sleep(5);
                        flushRecords();
                    } catch (InterruptedException | IOException e) {
                        return;
                    }
                }
            }, "kb-flusher");
            flusher.setDaemon(true);
            flusher.start();
        }

        synchronized void json(String body) throws IOException {
            flushRecords();
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            byte[] f = new byte[5 + b.length];
            header(f, 1 + b.length, (byte) 'J');
            System.arraycopy(b, 0, f, 5, b.length);
            os.write(f);
            os.flush();
        }

        private static void header(byte[] f, int len, byte kind) {
            f[0] = (byte) len;
            f[1] = (byte) (len >>> 8);
            f[2] = (byte) (len >>> 16);
            f[3] = (byte) (len >>> 24);
            f[4] = kind;
        }

        synchronized void flushRecords() throws IOException {
            if (used == 5) {
                return;
            }
            header(records, used - 4, kind);
            os.write(records, 0, used);
            os.flush();
            used = 5;
        }

        /** Room for one record; the caller writes `recordSize` bytes at the returned index. */
        private int reserve() throws IOException {
            if (used + recordSize > records.length) {
                flushRecords();
            }
            int at = used;
            used += recordSize;
            return at;
        }

        /** One completion record (clients/PROTOCOL.md, `C`). */
        synchronized void completion(long intended, long done, long offsetOrSeq, int delay,
                int partition, int bytes, int topic, int error, int flags, int valueBytes,
                int broker) throws IOException {
            putCompletion(records, reserve(), intended, done, offsetOrSeq, delay, partition, bytes,
                    topic, error, flags, valueBytes, broker);
        }

        /** One read record (clients/PROTOCOL.md, `R`); `stamp` null when the record has none. */
        synchronized void read(long readNs, long offset, int part, int bytes, byte[] stamp)
                throws IOException {
            int at = reserve();
            byte[] b = records;
            putLong(b, at, readNs);
            putLong(b, at + 8, offset);
            putInt(b, at + 16, part);
            putInt(b, at + 20, bytes);
            if (stamp != null && stamp.length == 21) {
                System.arraycopy(stamp, 0, b, at + 24, 21);
                b[at + 45] = 1;
            } else {
                java.util.Arrays.fill(b, at + 24, at + 46, (byte) 0);
            }
            b[at + 46] = 0;
            b[at + 47] = 0;
        }

        static void putLong(byte[] b, int at, long v) {
            for (int k = 0; k < 8; k++) {
                b[at + k] = (byte) (v >>> (8 * k));
            }
        }

        static void putInt(byte[] b, int at, int v) {
            for (int k = 0; k < 4; k++) {
                b[at + k] = (byte) (v >>> (8 * k));
            }
        }
    }

    /** A frame read: its type and body. */
    static final class Frame {
        final byte kind;
        final byte[] body;

        Frame(byte kind, byte[] body) {
            this.kind = kind;
            this.body = body;
        }

        Map<String, Object> json() {
            if (kind != 'J') {
                throw new IllegalArgumentException("a '" + (char) kind + "' frame where a message was due");
            }
            return Json.object(new String(body, StandardCharsets.UTF_8));
        }
    }

    /** The worker's standard input. */
    static final class In {
        private final DataInputStream in;

        In(InputStream s) {
            in = new DataInputStream(new java.io.BufferedInputStream(s, 1 << 16));
        }

        /** The next frame; null at the end of the input. */
        Frame next() throws IOException {
            int len;
            try {
                len = Integer.reverseBytes(in.readInt());
            } catch (EOFException e) {
                return null;
            }
            if (len <= 0 || len > MAX_FRAME) {
                throw new IOException("a frame of " + len + " bytes");
            }
            byte kind = in.readByte();
            byte[] body = new byte[len - 1];
            in.readFully(body);
            return new Frame(kind, body);
        }

        Map<String, Object> message() throws IOException {
            Frame f = next();
            if (f == null) {
                throw new EOFException("kafkabench closed the worker's input");
            }
            return f.json();
        }

        /** Payload lines until `count` are read (`L` frames). */
        List<byte[]> lines(long count) throws IOException {
            List<byte[]> out = new ArrayList<>();
            while (out.size() < count) {
                Frame f = next();
                if (f == null || f.kind != 'L') {
                    throw new IOException("payload lines expected");
                }
                int at = 0;
                byte[] b = f.body;
                while (at < b.length) {
                    int n = (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16
                            | (b[at + 3] & 0xff) << 24;
                    at += 4;
                    out.add(java.util.Arrays.copyOfRange(b, at, at + n));
                    at += n;
                }
            }
            return out;
        }

        /**
         * Reads the rest of the input on a thread of its own: messages into `queue`, and
         * `stop` noted at once in `stop` besides. The end of the input is a `close`.
         */
        void follow(LinkedBlockingQueue<Map<String, Object>> queue, Stop stop) {
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        Frame f = next();
                        if (f == null) {
                            break;
                        }
                        Map<String, Object> m = f.json();
                        if ("stop".equals(m.get("msg"))) {
                            Object d = m.get("drain_timeout_ms");
                            stop.drainMs = d instanceof Double ? (long) (double) (Double) d : 5000;
                            stop.requested = true;
                        }
                        queue.put(m);
                    }
                } catch (Exception e) {
                    System.err.println("kafkabench worker: reading input: " + e);
                }
                stop.requested = true;
                Map<String, Object> close = new java.util.HashMap<>();
                close.put("msg", "close");
                queue.add(close);
            }, "kb-input");
            t.setDaemon(true);
            t.start();
        }
    }

    /** `stop` seen: the current phase ends, a drain waits at most `drainMs`. */
    static final class Stop {
        volatile boolean requested;
        volatile long drainMs = 5000;
    }
}
