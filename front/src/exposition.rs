//! The one writer of the Prometheus text exposition format (version 0.0.4) that every `/metrics`
//! renderer of the workspace uses: [`family`] writes a family's `# HELP` (when it has one) and
//! `# TYPE` lines, [`sample`] one sample line with its labels, escaped as the format requires.
//! Renderers call them in order (a family's header, then its samples) on a shared `String`.
//! [`single`], [`counter`], [`by_label`] and [`histogram`] write the common shapes of a family
//! from those two.
//!
//! ```
//! use front::exposition::{Kind, family, sample};
//!
//! let mut out = String::new();
//! family(&mut out, "requests_total", Kind::Counter, Some("Requests served."));
//! sample(&mut out, "requests_total", &[("path", "/a\"b")], 3);
//! assert_eq!(
//!     out,
//!     "# HELP requests_total Requests served.\n# TYPE requests_total counter\n\
//!      requests_total{path=\"/a\\\"b\"} 3\n"
//! );
//! ```

use std::fmt::{Display, Write};

/// The type of a metric family (its `# TYPE` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    /// The word of the `# TYPE` line.
    pub const fn label(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Writes the header of family `name`: `# HELP name help` when `help` is given (backslashes and
/// line feeds escaped), then `# TYPE name kind`.
pub fn family(out: &mut String, name: &str, kind: Kind, help: Option<&str>) {
    if let Some(help) = help {
        out.push_str("# HELP ");
        out.push_str(name);
        out.push(' ');
        for c in help.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out.push_str("# TYPE ");
    out.push_str(name);
    out.push(' ');
    out.push_str(kind.label());
    out.push('\n');
}

/// Writes one sample line: `name{label="value",...} value`, without braces when `labels` is
/// empty. Label values are escaped (backslash, double quote, line feed).
pub fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl Display) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (position, (label, text)) in labels.iter().enumerate() {
            if position > 0 {
                out.push(',');
            }
            out.push_str(label);
            out.push_str("=\"");
            for c in text.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A family of one unlabelled sample: its header, then `name value`.
pub fn single(out: &mut String, name: &str, kind: Kind, help: Option<&str>, value: impl Display) {
    family(out, name, kind, help);
    sample(out, name, &[], value);
}

/// A counter family of one unlabelled sample.
pub fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    single(out, name, Kind::Counter, Some(help), value);
}

/// A counter family with one label: a sample per `(label value, count)`.
pub fn by_label<'a>(
    out: &mut String,
    name: &str,
    help: &str,
    label: &str,
    samples: impl IntoIterator<Item = (&'a str, u64)>,
) {
    family(out, name, Kind::Counter, Some(help));
    for (value, count) in samples {
        sample(out, name, &[(label, value)], count);
    }
}

/// Writes the samples of one histogram series (its family header written before): a cumulative
/// `name_bucket` per bound (microseconds, written as seconds) and `+Inf`, then `name_sum` and
/// `name_count`, each with `labels` (and `le` for buckets). `counts` are per bucket (not
/// cumulative), one per bound plus the overflow bucket last.
pub fn histogram(
    out: &mut String,
    name: &str,
    labels: &[(&str, &str)],
    (bounds_us, counts): (&[u64], &[u64]),
    sum_us: u64,
) {
    let bucket = format!("{name}_bucket");
    let with_le = |le: &str, out: &mut String, cumulative: u64| {
        let mut all: Vec<(&str, &str)> = labels.to_vec();
        all.push(("le", le));
        sample(out, &bucket, &all, cumulative);
    };
    let mut cumulative = 0;
    for (bound, count) in bounds_us.iter().zip(counts) {
        cumulative += count;
        with_le(&(*bound as f64 / 1e6).to_string(), out, cumulative);
    }
    cumulative += counts.get(bounds_us.len()).copied().unwrap_or(0);
    with_le("+Inf", out, cumulative);
    sample(out, &format!("{name}_sum"), labels, sum_us as f64 / 1e6);
    sample(out, &format!("{name}_count"), labels, cumulative);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_help_and_type_lines() {
        let mut out = String::new();
        family(
            &mut out,
            "a_total",
            Kind::Counter,
            Some("Things.\nMore \\ text."),
        );
        family(&mut out, "b", Kind::Gauge, None);
        family(&mut out, "c_seconds", Kind::Histogram, None);
        assert_eq!(
            out,
            "# HELP a_total Things.\\nMore \\\\ text.\n# TYPE a_total counter\n\
             # TYPE b gauge\n# TYPE c_seconds histogram\n"
        );
    }

    #[test]
    fn escapes_label_values() {
        let mut out = String::new();
        sample(
            &mut out,
            "x_total",
            &[("path", "C:\\dir"), ("quote", "say \"hi\""), ("nl", "a\nb")],
            7,
        );
        assert_eq!(
            out,
            "x_total{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\"} 7\n"
        );
    }

    #[test]
    fn writes_unlabelled_and_float_samples() {
        let mut out = String::new();
        single(&mut out, "up", Kind::Gauge, None, 1);
        sample(&mut out, "latency_seconds_sum", &[("stage", "x")], 0.25);
        sample(&mut out, "latency_seconds_bucket", &[("le", "+Inf")], 4u64);
        assert_eq!(
            out,
            "# TYPE up gauge\nup 1\nlatency_seconds_sum{stage=\"x\"} 0.25\n\
             latency_seconds_bucket{le=\"+Inf\"} 4\n"
        );
    }
}
