//! Replaying a document with a stand-in sampler, to count what forced
//! tokens save: the harness of `structgen maskbench --forced` and of the
//! `coalesce` benchmark suite.

use std::time::Instant;

use structgen::{Matcher, MatcherError};
use toktrie::TokenId;

/// What [`replay`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplayStats {
    /// Tokens of the document (its canonical tokenization).
    pub tokens: usize,
    /// Tokens appended as forced tokens.
    pub forced_tokens: usize,
    /// Forced sequences that were not a prefix of the remaining canonical
    /// tokens (must be 0).
    pub non_canonical: usize,
    /// Model calls with coalescing: steps where nothing (canonical) was forced.
    pub model_calls: usize,
    /// Model calls without coalescing: one per token.
    pub model_calls_plain: usize,
    /// Forced-token computations.
    pub forced_steps: usize,
    /// Total time of the forced-token computations, in microseconds.
    pub forced_us: f64,
}

/// Sums the counts of several replays (a corpus total).
impl std::ops::AddAssign for ReplayStats {
    fn add_assign(&mut self, s: ReplayStats) {
        self.tokens += s.tokens;
        self.forced_tokens += s.forced_tokens;
        self.non_canonical += s.non_canonical;
        self.model_calls += s.model_calls;
        self.model_calls_plain += s.model_calls_plain;
        self.forced_steps += s.forced_steps;
        self.forced_us += s.forced_us;
    }
}

/// Replays a document given as its canonical tokens with a stand-in
/// sampler: at each step the forced tokens are appended if there are any
/// (a non-canonical event is counted when they are not a prefix of the
/// remaining tokens, and the replay goes on with the document's token),
/// otherwise one "model call" appends the next token.
///
/// # Errors
/// A document token the grammar rejects, or a limit exceeded.
pub fn replay(m: &mut Matcher, canonical: &[TokenId]) -> Result<ReplayStats, MatcherError> {
    let mut s = ReplayStats {
        tokens: canonical.len(),
        model_calls_plain: canonical.len(),
        ..ReplayStats::default()
    };
    let mut i = 0;
    while i < canonical.len() {
        let t0 = Instant::now();
        let f = m.forced_tokens()?;
        s.forced_us += t0.elapsed().as_secs_f64() * 1e6;
        s.forced_steps += 1;
        if !f.tokens.is_empty() {
            if canonical[i..].starts_with(&f.tokens) {
                m.consume_tokens(&f.tokens)?;
                i += f.tokens.len();
                s.forced_tokens += f.tokens.len();
                continue;
            }
            s.non_canonical += 1;
        }
        m.consume_token(canonical[i])?;
        s.model_calls += 1;
        i += 1;
    }
    Ok(s)
}
