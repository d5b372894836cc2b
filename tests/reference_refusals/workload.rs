//! The rows of the workload's newer refusals: sizes a `json` payload cannot honour (issue 52)
//! and a drain figure where nothing drains (issue 49).

use super::Case::Check;
use super::Statement;

pub(super) const STATEMENTS: &[Statement] = &[
    Statement {
        quote: "`check` refuses a drain figure in a scenario where no run has a backlog",
        cases: &[Check {
            refused: "@T consumer { }\nworkload { messages = 10 }\nexpect { drain.ack.p99 < 1s }",
            code: "kb::metric",
            accepted: "@T consumer { }\nworkload { messages = 10  backlog = 1000 }\nexpect { drain.ack.p99 < 1s }",
        }],
    },
    Statement {
        quote: "a size or a distribution that can draw less is a diagnostic naming the smallest size it can honour",
        cases: &[
            Check {
                refused: "@T workload { messages = 10  payload = json(size: uniform(10B, 4KiB)) }",
                code: "kb::value",
                accepted: "@T workload { messages = 10  payload = json(size: uniform(100B, 4KiB)) }",
            },
            Check {
                refused: "@T workload { messages = 10  payload = json(size: 64B) }",
                code: "kb::value",
                accepted: "@T workload { messages = 10  payload = random(size: 64B) }",
            },
        ],
    },
];
