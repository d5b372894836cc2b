//! Lowering one cell: the base settings with the cell's step overrides laid over them, resolved
//! to a [`RunSpec`] (cluster, topic and its name, client properties, workload).

use std::time::Duration;

use super::axis::CapacityBlock;
use super::axis::{Axis, Picks};
use super::capacity::CapacityDraft;
use super::unsupported::{Feature, Uses};
use super::{Checker, Sections, Setting};
use crate::diagnostic::{Diagnostic, Kind};
use crate::model::{Cell, Coord, KeySpec, PayloadSpec, Props, RunSpec, Scalar, Side, TopicSpec};
use crate::source::Span;
use crate::syntax::ValueKind;

/// Where a scenario that names no cluster connects: `KAFKA_BOOTSTRAP`, else a broker on this
/// machine (what `scripts/kafka-local` starts).
const LOCAL_BOOTSTRAP: &str = "127.0.0.1:9092";

impl Checker<'_> {
    /// The cell that picks value `combination[i]` of axis `i`, or `None` when it does not check.
    pub(super) fn cell(
        &mut self,
        axes: &[Axis],
        combination: &[usize],
        base: &Sections,
        name_span: Span,
    ) -> Option<Cell> {
        let (has_consumer, base_faults) = (base.has_consumer, base.faults);
        let base_capacity = base.capacity.as_ref();
        let picks = Picks {
            chosen: axes
                .iter()
                .zip(combination)
                .map(|(a, &i)| (a, &a.values[i]))
                .collect(),
        };
        let settings = overlay(&base.base, &picks);
        // A share group reads the run in place of librdkafka consumers: everything a reader
        // measures (end-to-end latency, delivery) applies to it too.
        let share_on = base.share_span.or_else(|| {
            let s = settings.iter().find(|s| s.section == "share");
            s.map(|s| s.key.span)
        });
        let consumer_section = base.consumer_span.or_else(|| {
            let s = settings.iter().find(|s| s.section == "consumer");
            s.map(|s| s.key.span)
        });
        let consumer =
            has_consumer || share_on.is_some() || settings.iter().any(|s| s.section == "consumer");
        // A step's timeline replaces the scenario's (the last step axis that has one).
        let faults = picks
            .chosen
            .iter()
            .rev()
            .find_map(|(_, v)| v.faults.as_deref())
            .or(base_faults)
            .unwrap_or_default();
        // A step's `capacity { }` replaces the scenario's (the last step axis that has one).
        let capacity = picks
            .chosen
            .iter()
            .rev()
            .find_map(|(_, v)| v.capacity.as_ref())
            .or(base_capacity);
        let readers = Readers {
            consumer_on: consumer,
            share_on,
            consumer_section,
        };
        let spec = self.lower(&picks, &settings, faults, capacity, readers, name_span)?;
        let coords = picks
            .chosen
            .iter()
            .map(|(a, v)| Coord {
                dim: a.name.clone(),
                value: v.scalar.clone(),
                text: v.text.clone(),
            })
            .collect();
        let mut cell = Cell { coords, spec };
        let client_at = (settings.iter())
            .find(|s| s.section == "producer" && s.key.node == "client")
            .map(|s| s.value.span);
        self.placed(&cell, client_at);
        // The SLO's conditions whose `when` admits this cell.
        if let Some(search) = &cell.spec.capacity {
            let slo = search
                .slo
                .iter()
                .filter(|a| a.when.iter().all(|c| c.holds(&cell)))
                .cloned()
                .collect();
            if let Some(s) = &mut cell.spec.capacity {
                s.slo = slo;
            }
        }
        Some(cell)
    }

    fn lower(
        &mut self,
        ctx: &Picks,
        settings: &[Setting],
        faults: &[crate::syntax::Fault],
        capacity: Option<&CapacityBlock>,
        readers: Readers,
        name_span: Span,
    ) -> Option<RunSpec> {
        let consumer_on = readers.consumer_on;
        let errors_before = self.diags.len();
        let mut bootstrap: Option<String> = None;
        let mut registry: Option<String> = None;
        let mut client = Props::default();
        let mut producer = Props::default();
        let mut consumer = Props::default();
        let mut topic = TopicSpec {
            name: String::new(),
            name_span: None,
            partitions: 1,
            replication: 1,
            configs: Props::default(),
            ignored_configs: Props::default(),
            existing: false,
        };
        let mut topic_named = false;
        let mut w = super::workload::WorkloadDraft::default();
        let mut search = CapacityDraft::default();
        let mut lost_after = crate::model::DEFAULT_LOST_AFTER;
        let mut share = super::share::ShareDraft::default();
        let mut seed = None;
        let clients = self.clients(settings, ctx);

        for e in settings {
            let key = e.key.node.as_str();
            if matches!(e.value.kind, ValueKind::List(_)) {
                self.list_outside_matrix(e);
                continue;
            }
            match e.section.as_str() {
                "cluster" if key == "bootstrap" || key == "bootstrap.servers" => {
                    match self.scalar(&e.value, ctx) {
                        Some(Scalar::Str(s)) | Some(Scalar::Word(s)) => {
                            if let Some(why) = super::bootstrap::problem(&s) {
                                self.err(
                                    Diagnostic::new(Kind::Value, e.value.span, why)
                                        .label("not a bootstrap list")
                                        .help("e.g. \"broker1:9092,broker2:9092\""),
                                );
                            }
                            bootstrap = Some(s)
                        }
                        Some(other) => self.err(
                            Diagnostic::new(
                                Kind::Type,
                                e.value.span,
                                format!(
                                    "bootstrap is a string of host:port, not {}",
                                    other.kind_name()
                                ),
                            )
                            .label("expected \"host:port\""),
                        ),
                        None => {}
                    }
                }
                "cluster" if key == "schema_registry" => {
                    registry = self.schema_registry(e, ctx);
                }
                "cluster" if key == "lost_after" => {
                    if let Some(d) = self.duration(&e.value, ctx, "lost_after") {
                        if d < Duration::from_secs(1) {
                            self.err(
                                Diagnostic::new(
                                    Kind::Value,
                                    e.value.span,
                                    "lost_after is how long no broker may answer before the run ends; under a second would end it at any hiccup",
                                )
                                .label("at least 1s")
                                .help("e.g. `lost_after = 60s` (the default); a paused or restarting broker is measured unavailability until then"),
                            );
                        } else {
                            lost_after = d;
                        }
                    }
                }
                "cluster"
                    if key.replace(['.', '-'], "_").contains("schema_registry")
                        || key == "registry" =>
                {
                    self.misnamed_registry(e)
                }
                "cluster" if key == "client" => self.client_misplaced(e),
                "cluster" => self.prop(&mut client, e, ctx),
                // Read by `clients` before the loop.
                "producer" | "consumer" if key == "client" => {}
                "producer" => {
                    self.side_prop(&mut producer, e, ctx, &clients.producer, Side::Producer)
                }
                "consumer" if crate::model::CONSUMER_GROUP_CONFIGS.contains(&key) => {
                    self.group_config(&mut consumer, e, ctx)
                }
                "consumer" => {
                    self.side_prop(&mut consumer, e, ctx, &clients.consumer, Side::Consumer)
                }
                "workload" if key == "seed" => seed = self.seed(e, ctx),
                "share" => self.share_key(&mut share, e, ctx),
                "workload" if key == "ack" || key == "processing" => {
                    self.share_workload_key(&mut share, e, ctx)
                }
                "topic" => self.topic_setting(&mut topic, &mut topic_named, e, ctx),
                "topic.configs" => self.topic_config(&mut topic, e, ctx),
                "workload" => self.workload_key(&mut w, e, ctx),
                "capacity" => self.capacity_key(&mut search, e, ctx),
                "workload.headers" => {
                    if let Some(v) = self.scalar(&e.value, ctx) {
                        let text = match v {
                            Scalar::Str(s) | Scalar::Word(s) => s,
                            _ => self.sources.text(e.value.span).to_string(),
                        };
                        w.headers.push((key.to_string(), text));
                    }
                }
                _ => {}
            }
        }

        self.finish_topic(&mut topic);
        if !topic_named {
            self.err(
                Diagnostic::new(Kind::Missing, name_span, "the scenario declares no topic")
                    .label("in this scenario")
                    .help("add `topic \"name\" { partitions = 3 }`; use `{var}` in the name for a fresh topic per cell"),
            );
        }
        self.backlog_topic(&w, &topic);
        self.compaction_fits(
            &w.compaction,
            &super::compaction::CompactionContext {
                topic: &topic,
                key: w.key.as_ref(),
                topics: w.topics.map_or(1, |(n, _)| n),
                transactions: w.txn.span().is_some(),
            },
        );
        self.workload_transaction(&w, &producer);
        if consumer_on {
            self.group_protocol(&consumer, w.consumers.is_some());
        }
        self.topics_fit(&topic, w.topics);
        let search = self.finish_capacity(search, capacity, settings);
        if !matches!(search, Some(None)) {
            // Each probe's length is the search's (even when the search did not check: its
            // mistakes are reported, "no length" would be a false follow-up).
            w.stop_given = true;
        }
        let share = self.finish_share(share, readers.share_on, readers.consumer_section, &w);
        let mut uses = Uses::default();
        uses.add(Feature::Transactions, w.txn.span());
        self.cluster_reaches_workers(&client, &clients, consumer_on);
        let mut workload = self.finish_workload(w, consumer_on, name_span)?;
        workload.seed = seed;
        let written = |section: &str, key: &str| {
            let s = settings
                .iter()
                .find(|s| s.section == section && s.key.node == key);
            s.map(|s| s.key.span)
        };
        if matches!(workload.payload, PayloadSpec::Schema(_)) {
            uses.add(Feature::SchemaPayload, written("workload", "payload"));
        }
        if matches!(workload.key, KeySpec::Schema(_)) {
            uses.add(Feature::SchemaPayload, written("workload", "key"));
        }
        if workload.compaction.is_some() {
            uses.add(Feature::CompactionCheck, written("workload", "compaction"));
        }
        if workload.in_flight_until_consumed {
            uses.add(
                Feature::InFlightUntilConsumed,
                written("workload", "in_flight_until"),
            );
        }
        uses.add(Feature::LostAfter, written("cluster", "lost_after"));
        if consumer_on && readers.share_on.is_none() {
            uses.add(Feature::Consumer, clients.consumer.span);
        }
        for s in settings {
            let side = matches!(s.section.as_str(), "cluster" | "producer" | "consumer");
            let secure = ["security.", "sasl.", "ssl."]
                .iter()
                .any(|p| s.key.node.starts_with(p));
            if side && secure {
                uses.add(Feature::Security, Some(s.key.span));
            }
        }
        self.not_yet(&uses, &clients);
        if let Some(r) = registry {
            super::schema::use_registry(&mut workload, &r);
        }
        let search = search?;
        let run = super::faults::RunShape {
            workload: &workload,
            topic: &topic,
        };
        let faults = self.faults(faults, ctx, &run);
        if self.diags.len() > errors_before {
            return None;
        }
        let bootstrap = bootstrap.unwrap_or_else(|| {
            std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| LOCAL_BOOTSTRAP.into())
        });
        Some(RunSpec {
            bootstrap,
            client,
            topic,
            producer,
            consumer: consumer_on.then_some(consumer),
            workload,
            faults: faults.unwrap_or_default(),
            capacity: search,
            share,
            lost_after,
            producer_client: clients.producer.kind.unwrap_or_default(),
            consumer_client: clients.consumer.kind.unwrap_or_default(),
            producer_version: clients.producer.version,
            consumer_version: clients.consumer.version,
        })
    }
}

/// Who reads a cell's records: librdkafka consumers or a share group (which also turns the
/// reader's measurements on), and where each was declared.
pub(super) struct Readers {
    consumer_on: bool,
    share_on: Option<Span>,
    consumer_section: Option<Span>,
}

/// The base settings with each picked step's overrides laid over them: an override replaces
/// the setting of the same section and key, or is added.
fn overlay(base: &[Setting], picks: &Picks) -> Vec<Setting> {
    let mut settings = base.to_vec();
    for (_, v) in &picks.chosen {
        for o in &v.overrides {
            if let Some(slot) = settings
                .iter_mut()
                .find(|s| s.section == o.section && s.key.node == o.key.node)
            {
                *slot = o.clone();
            } else {
                settings.push(o.clone());
            }
        }
    }
    settings
}
