//! Importing other tools' benchmark definitions as scenario text: today OpenMessaging
//! Benchmark's workload and Kafka driver YAML (`kafkabench import omb`).
//!
//! The importer writes a `.kbs` and nothing else: OMB fields are read into typed structs
//! (`omb`), every problem of both files reported at once as diagnostics pointing into them
//! (`yaml`); the workload and the driver are mapped (`workload`, `capacity` for OMB's search of
//! the highest rate, `driver`, `java` for client properties) and written (`kbs`), each OMB
//! meaning kafkabench cannot express said in a comment where it applies. Client properties and
//! topic configs are carried over only when the checker accepts them, so the scenario checks
//! clean. The forks of OMB that speak the Kafka protocol are read too (`fork`): their driver
//! classes, and their fields mapped or carried as comments, each of the latter with a warning.

mod capacity;
mod driver;
mod fork;
mod groups;
mod java;
mod kbs;
mod lacks;
mod omb;
mod payload;
mod shell;
mod slots;
mod workload;
mod yaml;

use std::path::Path;

use crate::diagnostic::Diagnostics;
use crate::source::{Sources, Span};

use kbs::{Block, Item};

/// The files of one `kafkabench import omb`.
#[derive(Clone, Copy, Debug)]
pub struct OmbFiles<'a> {
    pub workload: &'a Path,
    pub driver: Option<&'a Path>,
    /// The folder the scenario will be written to: a payload file is named relative to it,
    /// as the scenario's `file()` reads it.
    pub out_dir: &'a Path,
}

/// An imported scenario, and what the import could only carry as comments.
#[derive(Clone, Debug)]
pub struct Imported {
    pub text: String,
    /// One line each, `FILE:LINE: what`: a field with no kafkabench equivalent, a number cut to
    /// kafkabench's bound, a template's placeholders.
    pub warnings: Vec<String>,
}

/// An OMB workload (and optionally its Kafka driver file) as scenario text; the files are added
/// to `sources`, so the diagnostics of a failed import can be rendered with their lines.
pub fn omb(files: OmbFiles, sources: &mut Sources) -> Result<Imported, Diagnostics> {
    let mut diags = Diagnostics::default();
    let w = yaml::read::<omb::Workload>(files.workload, sources, &omb::WORKLOAD);
    let d = files
        .driver
        .map(|p| yaml::read::<omb::Driver>(p, sources, &omb::DRIVER));
    // What the file is comes first: a template, a driver file, a fork's groups.
    let w = w
        .and_then(slots::not_a_template)
        .and_then(|r| slots::not_a_driver_file(r, sources))
        .and_then(|r| groups::topic_groups(r, sources));
    let d = d.map(|d| d.and_then(|r| slots::not_a_workload_file(r, sources)));
    let work = match w {
        Ok((read, mut notes)) => {
            diags.items.extend(read.problems.items);
            let (filled, filled_warnings) = shell::said(&read.filled, sources, read.file);
            notes.extend(filled);
            let input = workload::Input {
                workload: &read.value,
                file: read.file,
                path: files.workload,
                out_dir: files.out_dir,
                bad: &read.bad,
                extras: &read.extras,
                notes: &notes,
            };
            workload::map(&input, sources)
                .map(|mut w| {
                    w.warnings.splice(0..0, filled_warnings);
                    w
                })
                .map_err(|e| diags.items.extend(e.items))
                .ok()
        }
        Err(e) => {
            diags
                .items
                .extend(slots::unreadable(e, sources, false).items);
            None
        }
    };
    let drv = match d {
        None => Some(None),
        Some(Ok(mut read)) => {
            diags.items.append(&mut read.problems.items);
            driver::map(&read, sources)
                .map_err(|e| diags.items.extend(e.items))
                .ok()
                .map(Some)
        }
        Some(Err(e)) => {
            diags
                .items
                .extend(slots::unreadable(e, sources, true).items);
            None
        }
    };
    match (work, drv) {
        (Some(w), Some(d)) if diags.is_empty() => {
            let mut warnings = w.warnings.clone();
            warnings.extend(d.iter().flat_map(|d| d.warnings.iter().cloned()));
            Ok(Imported {
                text: assemble(files, w, d),
                warnings,
            })
        }
        _ => Err(diags.finish()),
    }
}

/// A warning as printed: where (the file as given, and the line), then what.
fn warning(sources: &Sources, span: Span, what: &str) -> String {
    let f = sources.get(span.file);
    let (line, _) = f.line_col(span.start);
    format!("{}:{line}: {what}", f.path.display())
}

fn assemble(files: OmbFiles, w: workload::Parts, d: Option<driver::Parts>) -> String {
    let mut header = vec![
        "Imported from OpenMessaging Benchmark by `kafkabench import omb`.".to_string(),
        format!("workload: {}", shown_name(files.workload)),
    ];
    let mut top = Block::new("");
    top.set(
        "description",
        kbs::string(&format!("OMB workload \"{}\"", w.name)),
        None,
    );
    let mut blocks = Vec::new();
    let topic_name = d
        .as_ref()
        .and_then(|d| d.topic_name.clone())
        .unwrap_or(w.topic_name);
    let mut topic = Block::new(format!("topic {}", kbs::string(&topic_name)));
    for n in &w.topic_notes {
        topic.note(n.clone());
    }
    topic.set(
        "partitions",
        w.partitions.to_string(),
        Some("partitionsPerTopic".into()),
    );
    let mut work = w.workload;
    let (cluster, producer, mut consumer) = match d {
        Some(d) => {
            header.extend(d.header);
            topic.items.extend(d.topic);
            work.items.extend(d.workload);
            (d.cluster, d.producer, d.consumer)
        }
        None => {
            header.push(
                "no driver file (--driver): replication, topic configs and client properties are kafkabench's defaults".into(),
            );
            (Vec::new(), Vec::new(), Vec::new())
        }
    };
    blocks.extend(driver::block("cluster", cluster));
    blocks.push(topic);
    let mut producer = producer;
    if files.driver.is_some() {
        producer.insert(
            0,
            Item::Note(
                "what the driver leaves unset takes librdkafka's defaults, not the Java client's (e.g. batch.size: 16384 in Java, 1000000 in librdkafka)".into(),
            ),
        );
    }
    blocks.extend(driver::block("producer", producer));
    match w.consumer {
        Some(notes) => {
            let mut items: Vec<Item> = notes.into_iter().map(Item::Note).collect();
            items.append(&mut consumer);
            blocks.push(Block {
                head: "consumer".into(),
                items,
            });
        }
        None if !consumer.is_empty() => {
            work.note("the driver's consumerConfig is not used: there is no consumer");
        }
        None => {}
    }
    blocks.push(work);
    blocks.extend(w.capacity);
    kbs::render(&header, &w.name, &top, &blocks)
}

/// A path as the header names it: its file name, so the text does not depend on where it ran.
fn shown_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
