//! The rows of the reference's "Clients" section (issue 51): what a side on the Java client
//! or franz-go is refused, and the same scenario on a client that runs it.

use super::Case::{Check, Elsewhere};
use super::Statement;

pub(super) const STATEMENTS: &[Statement] = &[
    Statement {
        quote: "`consumer { client = franz-go }` is refused (below)",
        cases: &[Check {
            refused: "@T producer { client = franz-go }\nconsumer { client = franz-go }\nworkload { messages = 10 }",
            code: "kb::client-unsupported",
            accepted: "@T producer { client = franz-go }\nconsumer { client = java }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "`acks = 2` is refused as the client would refuse it",
        cases: &[Check {
            refused: "@T producer { client = java  acks = 2 }\nworkload { messages = 10 }",
            code: "kb::property",
            accepted: "@T producer { client = java  acks = 1 }\nworkload { messages = 10 }",
        }],
    },
    Statement {
        quote: "refuses, at start, a name it does not have",
        cases: &[Elsewhere(
            "the Java worker's, when it starts on an older kafka-clients: `check` knows 4.4.0's names only",
        )],
    },
    Statement {
        quote: "These are refused on a worker's side, with the reason (`kb::client-unsupported`)",
        cases: &[Check {
            refused: "@T producer { client = java }\nworkload { messages = 10  transaction = 5 }",
            code: "kb::client-unsupported",
            accepted: "@T workload { messages = 10  transaction = 5 }",
        }],
    },
    Statement {
        quote: "| feature | refused on |",
        cases: &[
            Check {
                refused: "@T producer { client = java }\nconsumer { }\nworkload { messages = 10  in_flight_until = consumed }",
                code: "kb::client-unsupported",
                accepted: "@T producer { client = java }\nconsumer { }\nworkload { messages = 10  in_flight = 1 }",
            },
            Check {
                refused: "cluster { lost_after = 30s }\n@T producer { client = franz-go }\nworkload { messages = 10 }",
                code: "kb::client-unsupported",
                accepted: "cluster { lost_after = 30s }\n@T workload { messages = 10 }",
            },
        ],
    },
];
