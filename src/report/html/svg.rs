//! SVG primitives for the report's plots: escaped text, lines and rectangles, and the scales
//! (linear, logarithmic, "nines") that map data onto a plot area with their tick labels.
//! Hand-written rather than a plotting crate: text stays real `<text>` (searchable, no font
//! files needed at build or render time) and the output is small and deterministic.

use std::fmt::Write as _;

/// Escapes text for HTML and SVG content and attribute values: labels come from user files.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One SVG document being written; coordinates are in its own pixel units (viewBox).
pub(super) struct Svg {
    buf: String,
}

/// How text sits on its anchor point.
#[derive(Clone, Copy)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

impl Svg {
    /// `label` is the accessible name (and what a search of the DOM finds).
    pub(super) fn new(width: f64, height: f64, label: &str) -> Svg {
        let mut buf = String::new();
        let _ = write!(
            buf,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#,
            esc(label)
        );
        let _ = write!(
            buf,
            r##"<rect width="{width}" height="{height}" fill="#ffffff"/>"##
        );
        Svg { buf }
    }

    pub(super) fn line(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        stroke: &str,
        width: f64,
    ) {
        let _ = write!(
            self.buf,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }

    /// A polyline; `dash` draws it dashed (targets and other reference lines).
    pub(super) fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, dash: bool) {
        if points.is_empty() {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let dash = if dash {
            r#" stroke-dasharray="7 4""#
        } else {
            ""
        };
        let _ = write!(
            self.buf,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{width}" stroke-linejoin="round"{dash}/>"#,
            pts.join(" ")
        );
    }

    pub(super) fn circle(&mut self, (x, y): (f64, f64), r: f64, fill: &str) {
        let _ = write!(
            self.buf,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}"/>"#
        );
    }

    /// A data point: filled, or a ring in `color` when hollow; `class` names it for a reader
    /// of the markup, `tip` becomes its hover text.
    pub(super) fn marker(
        &mut self,
        (x, y): (f64, f64),
        r: f64,
        color: &str,
        filled: bool,
        class: &str,
        tip: &str,
    ) {
        let fill = if filled { color } else { "#ffffff" };
        let _ = write!(
            self.buf,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}" stroke="{color}" stroke-width="1.8" class="{}"><title>{}</title></circle>"#,
            esc(class),
            esc(tip)
        );
    }

    /// A rectangle; `tip` becomes its hover text.
    pub(super) fn rect(
        &mut self,
        (x, y): (f64, f64),
        (w, h): (f64, f64),
        fill: &str,
        tip: Option<&str>,
    ) {
        let _ = write!(
            self.buf,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}">"#,
            w.max(0.0),
            h.max(0.0)
        );
        if let Some(t) = tip {
            let _ = write!(self.buf, "<title>{}</title>", esc(t));
        }
        self.buf.push_str("</rect>");
    }

    pub(super) fn text(
        &mut self,
        (x, y): (f64, f64),
        s: &str,
        size: f64,
        anchor: Anchor,
        class: &str,
    ) {
        let _ = write!(
            self.buf,
            r##"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{}" class="{class}" fill="#1f2328">{}</text>"##,
            anchor.name(),
            esc(s)
        );
    }

    /// Text turned a quarter anticlockwise about its anchor (a y axis label).
    pub(super) fn text_up(&mut self, (x, y): (f64, f64), s: &str, size: f64, class: &str) {
        let _ = write!(
            self.buf,
            r##"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="middle" transform="rotate(-90 {x:.1} {y:.1})" class="{class}" fill="#1f2328">{}</text>"##,
            esc(s)
        );
    }

    pub(super) fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Linear,
    Log,
    /// Quantiles q on 1/(1-q), logarithmic: every "nine" gets the same width.
    Nines,
}

/// A data range mapped onto a pixel range.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale {
    pub kind: Kind,
    pub lo: f64,
    pub hi: f64,
    pub px_lo: f64,
    pub px_hi: f64,
}

/// Up to this many decades a log axis ticks 1, 2 and 5 of each; beyond, only the decades.
const LOG_FINE_DECADES: f64 = 2.5;

/// The deepest quantile the nines axis shows: 99.999 %.
pub(super) const NINES_MAX: f64 = 5.0;

/// A quantile's position on the nines axis: log10(1/(1-q)), capped at `NINES_MAX`.
pub(super) fn nines(q: f64) -> f64 {
    if q >= 1.0 {
        NINES_MAX
    } else {
        (1.0 / (1.0 - q)).log10().min(NINES_MAX)
    }
}

impl Scale {
    /// A scale over `[min, max]` of the data, widened to round tick values; `pad` leaves
    /// some room beyond the data (a value axis; a time axis ends where the data ends).
    pub(super) fn fit(kind: Kind, min: f64, max: f64, px: (f64, f64), pad: bool) -> Scale {
        let room = if pad { 1.08 } else { 1.0 };
        let (lo, hi) = match kind {
            Kind::Nines => (0.0, NINES_MAX),
            Kind::Log => {
                let min = if min > 0.0 { min } else { max.max(1e-3) / 10.0 };
                let max = max.max(min);
                let (min, max) = (min / room, max * room);
                let lo = nice_log_floor(min);
                let mut hi = nice_log_ceil(max);
                if hi <= lo {
                    hi = nice_log_ceil(lo * 1.5);
                }
                if (hi / lo).log10() > LOG_FINE_DECADES {
                    // Only decades are ticked: end on decades, so both ends have a label.
                    let (lo_exp, hi_exp) =
                        ((lo.log10() + 1e-9).floor(), (hi.log10() - 1e-9).ceil());
                    (10f64.powf(lo_exp), 10f64.powf(hi_exp))
                } else {
                    (lo, hi)
                }
            }
            Kind::Linear => {
                let lo = min.min(0.0);
                let hi = if max > lo { max * room } else { lo + 1.0 };
                let step = nice_step((hi - lo) / 5.0);
                (lo, (hi / step).ceil() * step)
            }
        };
        Scale {
            kind,
            lo,
            hi,
            px_lo: px.0,
            px_hi: px.1,
        }
    }

    fn unit(&self, v: f64) -> f64 {
        match self.kind {
            Kind::Linear | Kind::Nines => (v - self.lo) / (self.hi - self.lo),
            Kind::Log => {
                let v = v.max(self.lo * 1e-3);
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        }
    }

    /// The pixel of a data value (values outside the range land outside it).
    pub(super) fn px(&self, v: f64) -> f64 {
        self.px_lo + self.unit(v) * (self.px_hi - self.px_lo)
    }

    /// Tick values with their labels.
    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        match self.kind {
            Kind::Nines => [
                (0.5, "50 %"),
                (0.9, "90 %"),
                (0.99, "99 %"),
                (0.999, "99.9 %"),
                (0.9999, "99.99 %"),
                (0.99999, "99.999 %"),
            ]
            .iter()
            .map(|(q, l)| (nines(*q), l.to_string()))
            .collect(),
            Kind::Log => {
                let decades = (self.hi / self.lo).log10();
                let mults: &[f64] = if decades <= LOG_FINE_DECADES {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let mut out = Vec::new();
                let mut p = 10f64.powf(self.lo.log10().floor());
                while p <= self.hi * 1.0001 {
                    for m in mults {
                        let v = p * m;
                        if v >= self.lo * 0.9999 && v <= self.hi * 1.0001 {
                            out.push((v, number(v)));
                        }
                    }
                    p *= 10.0;
                }
                out
            }
            Kind::Linear => {
                let step = nice_step((self.hi - self.lo) / 5.0);
                let mut out = Vec::new();
                let mut i = (self.lo / step).ceil() as i64;
                while (i as f64) * step <= self.hi + step * 1e-6 {
                    let v = i as f64 * step;
                    out.push((v, number(v)));
                    i += 1;
                }
                out
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw * 0.9999)
        .unwrap_or(10.0 * p)
}

/// The largest 1, 2 or 5 times a power of ten at most `v`.
fn nice_log_floor(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0]
        .iter()
        .map(|m| m * p)
        .find(|x| *x <= v * 1.0001)
        .unwrap_or(p)
}

/// The smallest 1, 2 or 5 times a power of ten at least `v`.
fn nice_log_ceil(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|x| *x >= v * 0.9999)
        .unwrap_or(10.0 * p)
}

/// A tick or bar value, short: 0.05, 2, 1.5k, 20k, 1.2M.
pub(super) fn number(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if x.abs() >= 100.0 || x == x.trunc() {
        0
    } else if x.abs() >= 1.0 {
        2
    } else {
        // Enough decimals for two significant digits of a small value.
        (-(x.abs().log10().floor()) as usize + 1).min(9)
    };
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    s + suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_of_a_label_is_escaped() {
        assert_eq!(
            esc(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
    }

    #[test]
    fn the_nines_axis_gives_each_nine_the_same_width() {
        let s = Scale::fit(Kind::Nines, 0.0, 0.0, (0.0, 500.0), true);
        let px: Vec<f64> = [0.9, 0.99, 0.999, 0.9999]
            .iter()
            .map(|q| s.px(nines(*q)))
            .collect();
        assert!((px[1] - px[0] - 100.0).abs() < 1e-6);
        assert!((px[3] - px[2] - 100.0).abs() < 1e-3);
        let labels: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(
            labels,
            ["50 %", "90 %", "99 %", "99.9 %", "99.99 %", "99.999 %"]
        );
    }

    #[test]
    fn a_log_scale_widens_to_round_values_and_ticks_them() {
        let s = Scale::fit(Kind::Log, 0.34, 7.2, (0.0, 100.0), true);
        assert_eq!((s.lo, s.hi), (0.2, 10.0));
        let labels: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.2", "0.5", "1", "2", "5", "10"]);
    }

    #[test]
    fn a_log_scale_over_many_decades_ticks_only_the_decades() {
        let s = Scale::fit(Kind::Log, 0.01, 2000.0, (0.0, 100.0), false);
        let labels: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1000", "10k"]);
    }

    #[test]
    fn a_linear_scale_starts_at_zero_with_round_steps() {
        let s = Scale::fit(Kind::Linear, 0.0, 1930.0, (0.0, 100.0), true);
        let labels: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels.first().map(String::as_str), Some("0"));
        assert!(s.hi >= 1930.0 && s.hi <= 2500.0, "{}", s.hi);
        assert!(labels.contains(&"1000".to_string()), "{labels:?}");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(2.0), "2");
        assert_eq!(number(15_000.0), "15k");
        assert_eq!(number(1_200_000.0), "1.2M");
        assert_eq!(number(1.25), "1.25");
    }
}
