//! What a file given to the import is, before its fields are judged: a workload generator's
//! template, or a driver file in the workload's place (or the other way round). Each is named
//! as such, first, instead of the missing fields that follow from it.

use super::omb::{Driver, Workload, DRIVER, WORKLOAD};
use super::yaml::{key_span, Read};
use crate::diagnostic::{Diagnostic, Diagnostics, Kind};
use crate::source::Sources;

/// The driver file's own fields, which no workload has (`name` is both's).
const DRIVER_ONLY: &[&str] = &[
    "driverClass",
    "replicationFactor",
    "reset",
    "topicConfig",
    "commonConfig",
    "producerConfig",
    "consumerConfig",
];

/// OMB's workload generator reads a template of lists (`nameFormat`, `topics: [1]`) and writes
/// one workload per combination; the lists' type errors would only hide what the file is.
pub(super) fn not_a_template(read: Read<Workload>) -> Result<Read<Workload>, Diagnostics> {
    let Some(e) = read.extras.iter().find(|e| e.name == "nameFormat") else {
        return Ok(read);
    };
    Err(Diagnostic::new(
        Kind::Value,
        e.span,
        "this is a template for OMB's workload generator (`nameFormat`, lists of values), not a workload",
    )
    .label("a workload set template")
    .help("OMB's WorkloadGenerationTool (tool/) writes one workload file per combination of the lists: import those; or write the lists as a kafkabench `matrix`")
    .into())
}

/// A driver file given as the workload: it has a driver's fields and none a workload needs.
pub(super) fn not_a_driver_file(
    read: Read<Workload>,
    sources: &Sources,
) -> Result<Read<Workload>, Diagnostics> {
    let driver_fields: Vec<&str> = read
        .extras
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| DRIVER_ONLY.contains(n))
        .collect();
    let workload_fields = WORKLOAD.required.iter().any(|f| given(sources, &read, f));
    let Some(first) = driver_fields.first().filter(|_| !workload_fields) else {
        return Ok(read);
    };
    let file = sources.get(read.file);
    let span = key_span(read.file, &file.text, first);
    Err(wrong_slot_driver(span, &driver_fields, &file.path.display().to_string()).into())
}

fn wrong_slot_driver(span: crate::source::Span, fields: &[&str], path: &str) -> Diagnostic {
    Diagnostic::new(
        Kind::Value,
        span,
        format!("this is an OMB driver file ({}), not a workload", shown(fields)),
    )
    .label("a driver's field")
    .help(format!(
        "give the workload file first and this one with `--driver`: `kafkabench import omb WORKLOAD.yaml --driver {path}`"
    ))
}

/// A workload file given as `--driver`: it has a workload's required fields and none of a
/// driver's.
pub(super) fn not_a_workload_file(
    read: Read<Driver>,
    sources: &Sources,
) -> Result<Read<Driver>, Diagnostics> {
    let workload_fields: Vec<&str> = read
        .extras
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| WORKLOAD.required.contains(n))
        .collect();
    let driver_fields = DRIVER
        .names
        .iter()
        .filter(|f| **f != "name")
        .any(|f| given(sources, &read, f));
    let Some(first) = workload_fields.first().filter(|_| !driver_fields) else {
        return Ok(read);
    };
    let file = sources.get(read.file);
    let path = file.path.display();
    Err(Diagnostic::new(
        Kind::Value,
        key_span(read.file, &file.text, first),
        format!(
            "this is an OMB workload file ({}), not a driver",
            shown(&workload_fields)
        ),
    )
    .label("a workload's field")
    .help(format!(
        "give it first, and a driver file (driver-kafka/*.yaml) with `--driver`: `kafkabench import omb {path} --driver DRIVER.yaml`"
    ))
    .into())
}

/// A file that is not YAML (an Ansible template of another system's driver, `{% for %}` lines
/// and all) is named by its `driverClass` line first, when it has one: what the file is says
/// more than where the YAML breaks. In the driver's place, another system's driver; in the
/// workload's, any driver file.
pub(super) fn unreadable(diags: Diagnostics, sources: &Sources, as_driver: bool) -> Diagnostics {
    let Some(file) = diags
        .items
        .iter()
        .find(|d| d.kind == Kind::Syntax)
        .and_then(|d| d.span)
        .map(|s| s.file)
    else {
        return diags;
    };
    let source = sources.get(file);
    if let Some(d) = helm_template(file, &source.text) {
        return d.into();
    }
    let mut offset = 0;
    for line in source.text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("driverClass:") {
            let name = rest.trim().trim_matches(['"', '\'']);
            let at = offset + line.find(name).unwrap_or(0);
            let span = crate::source::Span::new(file, at, at + name.len());
            if !as_driver {
                return wrong_slot_driver(
                    span,
                    &["driverClass"],
                    &source.path.display().to_string(),
                )
                .into();
            }
            if let super::fork::Class::Other(system) = super::fork::class(name) {
                return super::driver::other_system(name, system, span).into();
            }
            break;
        }
        offset += line.len();
    }
    diags
}

/// A Helm chart's template (Redpanda's `deployment/kubernetes/helm`): a Kubernetes object, its
/// values `{{ .Values.… }}` that only `helm template` fills, with a driver file inside it.
fn helm_template(file: crate::source::FileId, text: &str) -> Option<Diagnostic> {
    let kind = text.lines().find_map(|l| l.strip_prefix("kind:"))?.trim();
    let helm = text.contains("{{ .Values.") || text.contains("{{ .Release.");
    let at = text.find("driverClass:").filter(|_| helm)?;
    let at = at + text[at..].find('{').unwrap_or(0);
    let end = at + text[at..].find('\n').unwrap_or(text.len() - at);
    Some(
        Diagnostic::new(
            Kind::Value,
            crate::source::Span::new(file, at, end),
            format!("this is a Helm chart template (a Kubernetes {kind} holding a driver file), not an OMB file: its `{{{{ .Values.… }}}}` are filled by `helm template`"),
        )
        .label("a Helm value")
        .help("render the chart (`helm template …`) and give the driver file it holds (the ConfigMap's `driver.yaml`) with `--driver`"),
    )
}

/// Whether the file sets `field` itself (right or wrong), not a name near it.
fn given<T>(sources: &Sources, read: &Read<T>, field: &str) -> bool {
    super::yaml::has_field(&sources.get(read.file).text, field)
}

/// `a`, `a` and `b`, or `a`, `b`, … : the fields that tell what the file is.
fn shown(fields: &[&str]) -> String {
    match fields {
        [one] => format!("`{one}`"),
        [a, b] => format!("`{a}`, `{b}`"),
        [a, b, ..] => format!("`{a}`, `{b}`, …"),
        [] => String::new(),
    }
}
