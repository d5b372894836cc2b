// A stand-in for Kafka's LogContext under its pre-4.4 name, for LocalTieredStorage only.
// LocalTieredStorage ships in Kafka's kafka-storage test jar, which Maven Central has for 4.3.x
// but not 4.4.0; the 4.3.1 jar was compiled against org.apache.kafka.common.utils.LogContext,
// which 4.4 moved to ...utils.internals. scripts/kafka-local --tiered compiles this beside the
// jar on the remote storage manager's own class path (searched before the broker's), so the
// jar runs unchanged on a 4.4 broker. Only what LocalTieredStorage calls is here; the prefix
// is not added to its log lines.
package org.apache.kafka.common.utils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

public class LogContext {
    public LogContext(String prefix) {}

    public Logger logger(Class<?> c) {
        return LoggerFactory.getLogger(c);
    }
}
