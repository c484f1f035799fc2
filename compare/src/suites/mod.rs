//! The benchmark suites, one module each, and their registry.

use anyhow::Result;

mod batch;
mod bpe;
mod bpe_hf;
mod coalesce;
mod jsonsuite;
mod mask;
mod maskbench;
mod radix;
mod structural;
mod toktrie;
mod ttfm;

/// The suites' table (`compare/suites.tsv`): name, corpora read, what it
/// measures; `cargo xtask bench list` reads the same file without building
/// this binary.
const TABLE: &str = include_str!("../../suites.tsv");

/// A named suite and the function that runs it with its extra arguments.
pub(crate) struct Suite {
    pub(crate) name: &'static str,
    pub(crate) run: fn(&[String]) -> Result<()>,
}

/// Every suite `cargo xtask bench` knows (in `suites.tsv` order).
pub(crate) const SUITES: &[Suite] = &[
    Suite { name: "toktrie", run: toktrie::run },
    Suite { name: "bpe", run: self::bpe::run },
    Suite { name: "mask", run: mask::run },
    Suite { name: "maskbench", run: maskbench::run },
    Suite { name: "batch", run: batch::run },
    Suite { name: "jsonsuite", run: jsonsuite::run },
    Suite { name: "coalesce", run: coalesce::run },
    Suite { name: "ttfm", run: ttfm::run },
    Suite { name: "structural", run: structural::run },
    Suite { name: "radix", run: radix::run },
];

/// The rows of [`TABLE`]: (name, reads, about).
fn rows() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    TABLE.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).filter_map(|l| {
        let mut f = l.split('\t');
        Some((f.next()?, f.next()?, f.next()?))
    })
}

/// What suite `name` reads from the shared corpora.
pub(crate) fn reads(name: &str) -> &'static str {
    rows().find(|r| r.0 == name).map_or("", |r| r.1)
}

/// The suites with a line each, for usage messages.
pub(crate) fn listing() -> String {
    let mut out = String::from("suites:\n");
    for (name, reads, about) in rows() {
        out.push_str(&format!("  {name:<10} {about}\n  {:<10} reads: {reads}\n", ""));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_and_the_suites_agree() {
        let names: Vec<&str> = super::rows().map(|r| r.0).collect();
        let suites: Vec<&str> = super::SUITES.iter().map(|s| s.name).collect();
        assert_eq!(names, suites);
    }
}
