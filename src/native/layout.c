/*
 * The librdkafka message fields the verifying read takes its stamp from
 * (src/native/consumer.rs), measured in librdkafka's own headers at build time. build.rs
 * compiles this to assembly only (nothing runs, so a cross build works too) and reads the
 * "->kb NAME VALUE" lines; a field that is renamed or removed fails the compile, a field
 * that moves gets its new offset.
 */
#include <stddef.h>

#include "rdkafka_int.h"
#include "rdkafka_msg.h"

/* %c0: the constant without the assembler's punctuation ($ on x86). */
#define KB(name, value) __asm__ volatile("\n.ascii \"->kb " #name " %c0\"" : : "i"(value))
#define KB_FIELD(name, type, member)                                                       \
        KB(name##_OFFSET, offsetof(type, member));                                         \
        KB(name##_SIZE, sizeof(((type *)0)->member))

void kb_rdkafka_layout(void) {
        KB(VERSION, RD_KAFKA_VERSION);
        KB(MSG_SIZE, sizeof(rd_kafka_msg_t));
        KB_FIELD(MESSAGE, rd_kafka_msg_t, rkm_rkmessage);
        KB_FIELD(FLAGS, rd_kafka_msg_t, rkm_flags);
        KB_FIELD(HEADERS, rd_kafka_msg_t, rkm_headers);
        KB_FIELD(BINHDRS_LEN, rd_kafka_msg_t, rkm_u.consumer.binhdrs.len);
        KB_FIELD(BINHDRS_DATA, rd_kafka_msg_t, rkm_u.consumer.binhdrs.data);
        KB(MSG_F_PRODUCER, RD_KAFKA_MSG_F_PRODUCER);
}
