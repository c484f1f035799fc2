//! Mooncake traces (FAST'25): JSON lines of `timestamp`, `input_length`,
//! `output_length` and `hash_ids`, each hash id a 512-token prefix block.
//!
//! The reader takes bytes (the caller reads and decompresses the file) and
//! checks every line: a malformed one, or one that takes the trace past a
//! [`TraceLimits`] limit, is a [`TraceError`] with its line number. Token ids are synthesized from the block ids on demand
//! ([`Prompt::Blocks`]): block `h` stands for tokens `h * 512 + j`.

use std::collections::HashSet;
use std::fmt;

use radix_cache::Namespace;
use serde::Deserialize;

use super::workload::{Prompt, SimRequest, Workload};

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

/// Limits against hostile traces: `TraceLimits::default()`, then the
/// `with_*` setters.
///
/// The defaults admit both Mooncake traces (the conversation trace holds
/// 12,031 requests and 144.8M prompt tokens, its longest prompt 126,195
/// tokens) with room to spare, and stop a trace whose simulation would need
/// gigabytes: a simulated token costs 8 bytes in the cache (token and KV
/// slot) and 4 more while its request waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceLimits {
    /// The longest prompt accepted, in tokens (default 2^21).
    pub max_input_length: usize,
    /// The most requests accepted (default 2^22).
    pub max_requests: usize,
    /// The most prompt tokens over the whole trace (default 2^28).
    pub max_total_tokens: u64,
}

impl Default for TraceLimits {
    fn default() -> TraceLimits {
        TraceLimits { max_input_length: 1 << 21, max_requests: 1 << 22, max_total_tokens: 1 << 28 }
    }
}

impl TraceLimits {
    /// Sets [`max_input_length`](Self::max_input_length).
    pub fn with_max_input_length(mut self, tokens: usize) -> TraceLimits {
        self.max_input_length = tokens;
        self
    }

    /// Sets [`max_requests`](Self::max_requests).
    pub fn with_max_requests(mut self, requests: usize) -> TraceLimits {
        self.max_requests = requests;
        self
    }

    /// Sets [`max_total_tokens`](Self::max_total_tokens).
    pub fn with_max_total_tokens(mut self, tokens: u64) -> TraceLimits {
        self.max_total_tokens = tokens;
        self
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
    let mut total = 0u64;
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = i + 1;
        let err = |message: String| TraceError { line: line_no, message };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let r: TraceRequest = serde_json::from_slice(line).map_err(|e| err(e.to_string()))?;
        if r.input_length > limits.max_input_length {
            return Err(err(format!(
                "input_length {} exceeds the limit max_input_length = {}",
                r.input_length, limits.max_input_length
            )));
        }
        total = total.saturating_add(r.input_length as u64);
        if total > limits.max_total_tokens {
            return Err(err(format!(
                "the trace's prompts reach {total} tokens here, over the limit \
                 max_total_tokens = {}",
                limits.max_total_tokens
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
            return Err(err(format!(
                "more requests than the limit max_requests = {}",
                limits.max_requests
            )));
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
    let mut seen = HashSet::new();
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
        let limits = TraceLimits::default().with_max_input_length(100);
        assert_eq!(parse_mooncake(ok, &limits).unwrap_err().line(), 1);
        let limits = TraceLimits::default().with_max_total_tokens(605);
        let e = parse_mooncake(ok, &limits).unwrap_err();
        assert_eq!(e.line(), 3);
        assert!(e.message().contains("max_total_tokens = 605"), "{e}");
    }
}
