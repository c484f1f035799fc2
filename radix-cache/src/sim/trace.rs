//! Mooncake traces (FAST'25): JSON lines of `timestamp`, `input_length`,
//! `output_length` and `hash_ids`, each hash id a 512-token prefix block.
//!
//! The reader takes bytes (the caller reads and decompresses the file) and
//! checks every line: a malformed one is a [`TraceError`] with its line
//! number. Token ids are synthesized from the block ids on demand
//! ([`Prompt::Blocks`]): block `h` stands for tokens `h * 512 + j`.

use std::fmt;

use serde::Deserialize;

use super::workload::{Prompt, SimRequest, Workload};
use crate::Namespace;

/// Tokens per hash block in the Mooncake traces.
pub const MOONCAKE_BLOCK: u32 = 512;

/// A malformed trace line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    line: usize,
    message: String,
}

impl TraceError {
    /// The 1-based line number.
    pub fn line(&self) -> usize {
        self.line
    }

    /// What is wrong with it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceError {}

/// Limits against hostile traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceLimits {
    /// The longest prompt accepted, in tokens.
    pub max_input_length: usize,
    /// The most requests accepted.
    pub max_requests: usize,
}

impl Default for TraceLimits {
    fn default() -> TraceLimits {
        TraceLimits { max_input_length: 1 << 21, max_requests: 1 << 22 }
    }
}

/// One trace line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TraceRequest {
    /// Arrival time in milliseconds.
    pub timestamp: u64,
    /// Prompt tokens.
    pub input_length: usize,
    /// Generated tokens.
    pub output_length: usize,
    /// One id per 512-token block of the prompt.
    pub hash_ids: Vec<u64>,
}

/// Parses a Mooncake trace; blank lines are skipped. Requests come back in
/// timestamp order (stable for equal timestamps).
pub fn parse_mooncake(bytes: &[u8], limits: &TraceLimits) -> Result<Vec<TraceRequest>, TraceError> {
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let err = |message: String| TraceError { line: line_no, message };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let r: TraceRequest = serde_json::from_slice(line).map_err(|e| err(e.to_string()))?;
        if r.input_length > limits.max_input_length {
            return Err(err(format!(
                "input_length {} exceeds the limit of {}",
                r.input_length, limits.max_input_length
            )));
        }
        let blocks = r.input_length.div_ceil(MOONCAKE_BLOCK as usize);
        if r.hash_ids.len() != blocks {
            return Err(err(format!(
                "{} hash_ids for input_length {} (expected {blocks}, one per 512 tokens)",
                r.hash_ids.len(),
                r.input_length
            )));
        }
        let max_id = u64::from(u32::MAX / MOONCAKE_BLOCK);
        if let Some(&id) = r.hash_ids.iter().find(|&&id| id >= max_id) {
            return Err(err(format!("hash id {id} is too large (limit {max_id})")));
        }
        if out.len() == limits.max_requests {
            return Err(err(format!("more than {} requests", limits.max_requests)));
        }
        out.push(r);
    }
    out.sort_by_key(|r| r.timestamp);
    Ok(out)
}

/// The trace as a workload: prompts as blocks, outputs left empty (the
/// trace has no output token ids, so there is nothing to reuse).
pub fn mooncake_workload(name: &str, trace: &[TraceRequest]) -> Workload {
    let requests = trace
        .iter()
        .map(|r| SimRequest {
            namespace: Namespace::NONE,
            prompt: Prompt::Blocks {
                // `parse_mooncake` checked that every id fits.
                ids: r.hash_ids.iter().map(|&h| h as u32).collect(),
                block: MOONCAKE_BLOCK,
                len: r.input_length,
            },
            output: Vec::new(),
            after: None,
            priority: 0,
        })
        .collect();
    Workload { name: name.to_owned(), requests }
}

/// The infinite-capacity bound of a trace processed in order, from the
/// block ids alone: the prompt tokens lying in leading blocks already seen
/// in an earlier request. Returns `(hit tokens, prompt tokens)`.
pub fn block_bound(trace: &[TraceRequest]) -> (u64, u64) {
    let mut seen = rustc_hash::FxHashSet::default();
    let (mut hits, mut total) = (0u64, 0u64);
    let block = MOONCAKE_BLOCK as usize;
    for r in trace {
        total += r.input_length as u64;
        for (j, id) in r.hash_ids.iter().enumerate() {
            if !seen.contains(id) {
                break;
            }
            hits += (r.input_length - j * block).min(block) as u64;
        }
        seen.extend(r.hash_ids.iter().copied());
    }
    (hits, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reports_line_numbers() {
        let ok = b"{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1, 2]}\n\n\
                   {\"timestamp\": 1, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [1]}\n";
        let t = parse_mooncake(ok, &TraceLimits::default()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].timestamp, 1);
        assert_eq!(block_bound(&t), (512, 610));
        let bad = b"{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1, 2]}\n\
                    {\"timestamp\": 6, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1]}\n";
        let e = parse_mooncake(bad, &TraceLimits::default()).unwrap_err();
        assert_eq!(e.line(), 2);
        assert!(e.message().contains("expected 2"), "{e}");
        let e = parse_mooncake(b"\n\n{\"timestamp\": 5,", &TraceLimits::default()).unwrap_err();
        assert_eq!(e.line(), 3);
        let e = parse_mooncake(b"[1, 2]", &TraceLimits::default()).unwrap_err();
        assert_eq!(e.line(), 1);
        let limits = TraceLimits { max_input_length: 100, ..TraceLimits::default() };
        assert_eq!(parse_mooncake(ok, &limits).unwrap_err().line(), 1);
    }
}
