package kafkabench.worker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol's JSON messages: a small reader (objects, arrays, strings, numbers, booleans,
 * null) and a writer of the same, so the worker needs nothing beside kafka-clients. Numbers are
 * read as Double; 64-bit integers travel as decimal strings (clients/PROTOCOL.md).
 */
final class Json {
    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    static Object parse(String text) {
        Json j = new Json(text);
        Object v = j.value();
        j.ws();
        if (j.i != j.s.length()) {
            throw new IllegalArgumentException("trailing characters at " + j.i);
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        Object v = parse(text);
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object");
        }
        return (Map<String, Object>) v;
    }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private Object value() {
        ws();
        if (i >= s.length()) {
            throw new IllegalArgumentException("unexpected end");
        }
        char c = s.charAt(i);
        switch (c) {
            case '{': {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    m.put(k, value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            case '[': {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            case '"':
                return string();
            case 't':
                word("true");
                return Boolean.TRUE;
            case 'f':
                word("false");
                return Boolean.FALSE;
            case 'n':
                word("null");
                return null;
            default:
                int from = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                    i++;
                }
                if (from == i) {
                    throw new IllegalArgumentException("unexpected '" + c + "' at " + i);
                }
                return Double.parseDouble(s.substring(from, i));
        }
    }

    private void expect(char c) {
        if (i >= s.length() || s.charAt(i) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + i);
        }
        i++;
    }

    private void word(String w) {
        if (!s.startsWith(w, i)) {
            throw new IllegalArgumentException("expected " + w + " at " + i);
        }
        i += w.length();
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
                case 'n': b.append('\n'); break;
                case 't': b.append('\t'); break;
                case 'r': b.append('\r'); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'u':
                    b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                    break;
                default: b.append(e);
            }
        }
    }

    /** A JSON string literal. */
    static String quote(String v) {
        StringBuilder b = new StringBuilder(v.length() + 2).append('"');
        for (int k = 0; k < v.length(); k++) {
            char c = v.charAt(k);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    // ---- typed access to a message's fields ----

    static String str(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (!(v instanceof String)) {
            throw new IllegalArgumentException("'" + k + "' is not a string");
        }
        return (String) v;
    }

    /** A 64-bit integer written as a decimal string (unsigned values above 2^63 wrap). */
    static long big(Map<String, Object> m, String k) {
        return Long.parseUnsignedLong(str(m, k));
    }

    static Long bigOrNull(Map<String, Object> m, String k) {
        return m.get(k) == null ? null : big(m, k);
    }

    static double num(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (!(v instanceof Double)) {
            throw new IllegalArgumentException("'" + k + "' is not a number");
        }
        return (Double) v;
    }

    static Long longOrNull(Map<String, Object> m, String k) {
        Object v = m.get(k);
        return v == null ? null : (long) num(m, k);
    }

    static boolean bool(Map<String, Object> m, String k) {
        return Boolean.TRUE.equals(m.get(k));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("'" + k + "' is not an object");
        }
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Map<String, Object> m, String k) {
        Object v = m.get(k);
        if (!(v instanceof List)) {
            throw new IllegalArgumentException("'" + k + "' is not a list");
        }
        return (List<Object>) v;
    }
}
