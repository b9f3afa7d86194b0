//! The Prometheus text lines of the archive's metric families: `# HELP` and `# TYPE` for each
//! family, then its samples. The archive does not depend on `front` (which holds the appliance's
//! writer, `front::exposition`), so it keeps this small one; help texts here have no backslash or
//! line feed to escape, and label values are the archive's own reason names.

use std::fmt::{Display, Write};

/// `# HELP name help` and `# TYPE name kind` (`kind`: "counter" or "gauge").
pub fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A family of one unlabelled sample.
pub fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl Display) {
    header(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn help_then_type_then_sample() {
        let mut out = String::new();
        super::single(&mut out, "a_total", "counter", "Things.", 3);
        assert_eq!(
            out,
            "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n"
        );
    }
}
