//! `structgen maskbench --forced`: replays each valid instance with a
//! stand-in sampler ([`structgen_cli::replay`]) and tallies forced tokens,
//! non-canonical forced sequences and model calls.

use anyhow::Result;
use serde_json::{Value, json};
use structgen::{Grammar, Matcher, Vocabulary};
use structgen_cli::replay::{ReplayStats, replay};
use toktrie::TokenId;

/// The sums over every replayed instance.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    documents: usize,
    rejected: usize,
    total: ReplayStats,
}

impl Tally {
    /// Replays one valid instance (its canonical `tokens`) under `grammar`.
    pub(crate) fn replay(
        &mut self,
        vocab: &Vocabulary,
        grammar: &Grammar,
        tokens: &[u32],
    ) -> Result<()> {
        let mut m = Matcher::new(vocab, grammar)?;
        let ids: Vec<TokenId> = tokens.iter().map(|&t| TokenId(t)).collect();
        match replay(&mut m, &ids) {
            Ok(s) => {
                self.documents += 1;
                self.total += s;
            }
            Err(_) => self.rejected += 1,
        }
        Ok(())
    }

    /// Adds the tally's keys to the summary object.
    pub(crate) fn add_to(&self, summary: &mut Value) {
        let t = &self.total;
        let per = |x: f64, n: usize| if n == 0 { 0.0 } else { x / n as f64 };
        summary["tokens"] = json!(t.tokens);
        summary["forced_tokens"] = json!(t.forced_tokens);
        summary["non_canonical"] = json!(t.non_canonical);
        summary["model_calls"] = json!(t.model_calls);
        summary["model_calls_without_coalescing"] = json!(t.model_calls_plain);
        summary["forced"] = json!({
            "documents": self.documents,
            "replay_rejected": self.rejected,
            "forced_share": per(t.forced_tokens as f64, t.tokens),
            "model_calls_saved_per_document":
                per((t.model_calls_plain - t.model_calls) as f64, self.documents),
            "forced_us_per_step": per(t.forced_us, t.forced_steps),
        });
    }
}
