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

/// A named suite and the function that runs it with its extra arguments.
pub(crate) struct Suite {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) run: fn(&[String]) -> Result<()>,
}

/// Every suite `cargo xtask bench` knows.
pub(crate) const SUITES: &[Suite] = &[
    Suite { name: "toktrie", about: "trie mask walk vs llguidance's toktrie", run: toktrie::run },
    Suite {
        name: "bpe",
        about: "BPE vs bpe-openai, tiktoken-rs (o200k); vs HF tokenizers (`hf`)",
        run: self::bpe::run,
    },
    Suite { name: "mask", about: "grammar masks vs llguidance", run: mask::run },
    Suite { name: "maskbench", about: "MaskBench JSON Schemas vs llguidance", run: maskbench::run },
    Suite {
        name: "batch",
        about: "batch bitmask fill on threads, matcher creation, compile cache vs llguidance",
        run: batch::run,
    },
    Suite {
        name: "jsonsuite",
        about: "JSON-Schema-Test-Suite vs llguidance, side by side",
        run: jsonsuite::run,
    },
    Suite { name: "coalesce", about: "forced tokens vs llguidance", run: coalesce::run },
    Suite { name: "ttfm", about: "MaskBench time to first mask by phase", run: ttfm::run },
    Suite {
        name: "structural",
        about: "structural tags (free text, tool calls) vs llguidance",
        run: structural::run,
    },
    Suite { name: "radix", about: "radix prefix cache vs a hash-of-blocks cache", run: radix::run },
];

/// The suites with a line each, for usage messages.
pub(crate) fn listing() -> String {
    let mut out = String::from("suites:\n");
    for s in SUITES {
        out.push_str(&format!("  {:<10} {}\n", s.name, s.about));
    }
    out
}
