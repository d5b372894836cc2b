//! The one integration-test binary: every tests/*.rs is a module of it, so librdkafka and
//! OpenSSL are linked (with thin LTO) once, not once per file. The shared helpers live once, in
//! tests/common/. What a file starts (a cluster, a broker) is started once per process and
//! stopped when the process exits; scripts/test runs this binary in three lanes (three
//! processes, each file's tests in one of them), and names the files that cannot share the
//! broker with a neighbour.

mod common;

mod assert;
mod broker_configs;
mod by_broker;
mod by_partition;
mod capacity;
mod capacity_report;
mod cli;
mod cli_plan;
mod cli_suite;
mod clients;
mod clients_run;
mod clients_stages;
mod compaction;
mod compare;
mod consumer_controls;
mod delivery;
mod diagnostics;
mod fault_language;
mod fault_timeline;
mod fault_windows;
mod faults;
mod fmt;
mod grammar;
mod grammar_habits;
mod group_protocol;
mod groups;
mod habits;
mod history;
mod html;
mod import_omb;
mod import_omb_truth;
mod k8s;
mod layers;
mod lowering;
mod merge;
mod metrics;
mod progress;
mod reference_refusals;
mod result_file;
mod result_fixtures;
mod robustness;
mod run;
mod scenarios;
mod schema;
mod secrets;
mod security;
mod shards;
mod share;
mod sizes;
mod slips;
mod textmate;
mod tiered;
mod topics;
mod transactions;
mod trials;
mod values;
