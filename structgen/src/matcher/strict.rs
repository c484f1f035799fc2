//! What a matcher does when the lexer refuses a derivative for lack of
//! fuel, and the check of a grammar's token ids against the vocabulary.
//!
//! A refusal (see [`lexer::Lexer::fuel_refusals`]) makes a mask a subset
//! of the exact one: tokens the grammar allows may be missing, never the
//! reverse. By default that smaller mask is returned and counted
//! ([`Matcher::fuel_refusals`]); with [`Matcher::with_refusals_as_errors`]
//! the step that refused fails with [`MatcherError::FuelRefused`] instead,
//! so a caller that must not lose valid text learns it at once.

use earley::{ParseError, SpecialToken};
use toktrie::TokTrie;

use super::{Matcher, MatcherError};
use crate::Grammar;

impl Matcher {
    /// This matcher, failing with [`MatcherError::FuelRefused`] (sticky,
    /// like every matcher error) on the first mask or token during which
    /// the lexer refused a derivative for lack of fuel, instead of
    /// answering with a mask smaller than the exact one. Off by default.
    ///
    /// A matcher computes its first mask when it is created: if that mask
    /// (or anything since) was refused, the matcher is stopped in this
    /// error at once.
    pub fn with_refusals_as_errors(mut self, on: bool) -> Matcher {
        self.refusals_as_errors = on;
        if on && self.error.is_none() {
            // Everything so far counts as one step that began with none.
            if let Some(e) = self.refusal_error(0) {
                self.error = Some(e);
            }
        }
        self
    }

    /// Whether fuel refusals are errors (see
    /// [`with_refusals_as_errors`](Matcher::with_refusals_as_errors)).
    pub fn refusals_as_errors(&self) -> bool {
        self.refusals_as_errors
    }

    /// After a step that began with `before` refusals: the error to fail
    /// with, when refusals are errors and the step refused.
    pub(super) fn refusal_error(&self, before: u64) -> Option<MatcherError> {
        let now = self.fuel_refusals();
        (self.refusals_as_errors && now > before).then(|| MatcherError::FuelRefused {
            refusals: now - before,
            offset: self.parser.num_bytes(),
        })
    }
}

/// Token ids the grammar names (`<[99999999]>`) that the vocabulary does
/// not have: the first one, as [`ParseError::UnknownSpecialToken`] naming
/// it. Ranges that run to the top of the id space come from `<[*]>` and
/// `<[^…]>` and mean "every other token", so they are not checked.
pub(super) fn check_token_ids(grammar: &Grammar, trie: &TokTrie) -> Result<(), MatcherError> {
    let size = trie.vocab_size() as u64;
    for special in grammar.earley().special_tokens() {
        if let SpecialToken::Ids(ranges) = special {
            for &(a, b) in ranges {
                if b != u32::MAX && u64::from(b) >= size {
                    let ids = if a == b { a.to_string() } else { format!("{a}-{b}") };
                    let name = format!("<[{ids}]> (the vocabulary has {size} tokens)");
                    return Err(ParseError::UnknownSpecialToken { name }.into());
                }
            }
        }
    }
    Ok(())
}
