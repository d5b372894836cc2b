//! The rows of `expect`'s figures per broker (issue 52): what `of broker` may follow, and where
//! a broker's figure may stand.

use super::Case::Check;
use super::Statement;

pub(super) const STATEMENTS: &[Statement] = &[
    Statement {
        quote: "`throughput of broker 2` is a diagnostic (`kb::metric`), and so is any noun but `broker`",
        cases: &[
            Check {
                refused: "@T workload { messages = 10 }\nexpect { throughput of broker 2 > 1/s }",
                code: "kb::metric",
                accepted: "@T workload { messages = 10 }\nexpect { ack.p99 of broker 2 < 1s }",
            },
            Check {
                refused: "@T workload { messages = 10 }\nexpect { ack.p99 of partition 2 < 1s }",
                code: "kb::metric",
                accepted: "@T workload { messages = 10 }\nexpect { ack.p99 of every broker < 1s }",
            },
        ],
    },
    Statement {
        quote: "(`ack.p99 of broker 2 < 2 * ack.p99` is refused: write two lines)",
        cases: &[Check {
            refused: "@T workload { messages = 10 }\nexpect { ack.p99 of broker 2 < 2 * ack.p99 }",
            code: "kb::value",
            accepted: "@T workload { messages = 10 }\nexpect { ack.p99 of broker 2 < 20ms }",
        }],
    },
    Statement {
        quote: "Each refusal is a `kb::value` diagnostic at the assertion.",
        cases: &[
            Check {
                refused: "@T workload { messages = 10 }\nexpect { ack.p99 of broker 1 < 20ms with 95% confidence }",
                code: "kb::value",
                accepted: "@T workload { messages = 10 }\nexpect { ack.p99 < 20ms with 95% confidence }",
            },
            Check {
                refused: "@T workload { payload = random(size: 100B) }\ncapacity { from = 1k/s  to = 10k/s  slo { ack.p99 of every broker < 20ms } }",
                code: "kb::value",
                accepted: "@T workload { payload = random(size: 100B) }\ncapacity { from = 1k/s  to = 10k/s  slo { ack.p99 < 20ms } }",
            },
        ],
    },
    Statement {
        quote: "`check` refuses `of broker` and `of every broker` on an assertion that reads such a run (`kb::client-unsupported`)",
        cases: &[
            Check {
                refused: "@T producer { client = java }\nworkload { messages = 10 }\nexpect { ack.p99 of every broker < 1s }",
                code: "kb::client-unsupported",
                accepted: "@T producer { client = java }\nworkload { messages = 10 }\nexpect { ack.p99 < 1s }",
            },
            Check {
                refused: "topic \"t-{client}\" { partitions = 3 }\nmatrix { client = [librdkafka, franz-go] }\nproducer { client = {client} }\nworkload { messages = 10 }\nexpect { ack.p99 of broker 1 < 1s }",
                code: "kb::client-unsupported",
                accepted: "topic \"t-{client}\" { partitions = 3 }\nmatrix { client = [librdkafka, franz-go] }\nproducer { client = {client} }\nworkload { messages = 10 }\nexpect { ack.p99 of broker 1 < 1s  when client == librdkafka }",
            },
        ],
    },
];
