//! Durations in the plan and result data, written as seconds (a float).

pub(super) mod duration_secs {
    use std::time::Duration;
    pub(crate) fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

pub(super) mod duration_opt {
    use std::time::Duration;
    pub(crate) fn serialize<S: serde::Serializer>(
        d: &Option<Duration>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}
