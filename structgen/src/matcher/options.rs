//! The [`Matcher`]'s side of the lexeme options that act per token:
//! hidden stop text (Lark `stop=...`), reported as a [`Backtrack`], and
//! token limits (Lark `max_tokens=N`), counted per lexeme here because the
//! parser sees bytes, not tokens. (`stop=""`, the end-of-sequence token
//! ending a lexeme, is a parser question the matcher asks in
//! `compute_mask` and `try_step`.)
//!
//! Semantics, measured against llguidance 1.9.1 (see `earley/DESIGN.md`,
//! "Lexeme options"):
//! - After a token whose last bytes complete a `stop=` text (and the text
//!   that follows the rule does not start with it), the lexeme ends before
//!   the stop text: the next mask starts after the rule, and
//!   [`Matcher::backtrack`] says how many tokens (covering the hidden
//!   bytes) the caller should take back, as llguidance's `consume_token`
//!   does with backtracking enabled. A token going past the stop text is
//!   not allowed.
//! - A lexeme spanning `max_tokens` tokens (every token holding one of its
//!   bytes counts) ends after that token when its text matches. Where
//!   llguidance then ends it even when the text does not match (accepting
//!   text outside the grammar), the matcher leaves such tokens out of the
//!   mask: the lexeme must match by its last token.
//!
//! Cost: nothing for grammars without these options. With `max_tokens=`,
//! masks are not reused between equal parser positions (the count differs),
//! and a mask computed one token before a limit (or in a grammar with
//! `max_tokens=1`) replays each allowed token, O(total bytes of the allowed
//! tokens) on top of the walk. Memory: 24 bytes per consumed token.

use earley::MaxTokensOutcome;
use toktrie::TokenId;

use super::Step;
use crate::{Matcher, MatcherError};

/// What the caller should take back after the last consumed token, so that
/// the model does not see hidden stop text (`stop=`): the last `tokens`
/// tokens, which hold the `hidden` bytes of the stop text and before them
/// `visible` bytes of the rule's text that the caller must keep (re-encode
/// and feed again). All zero when nothing is hidden.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backtrack {
    /// Tokens to take back, from the last one.
    pub tokens: usize,
    /// Bytes of hidden stop text at the end of those tokens.
    pub hidden: usize,
    /// Bytes of those tokens before the hidden text, still part of the output.
    pub visible: usize,
}

/// Per-matcher state of the lexeme options.
#[derive(Clone, Debug, Default)]
pub(crate) struct LexemeOptions {
    /// Some lexeme has `max_tokens`.
    limited: bool,
    /// The smallest `max_tokens` of any lexeme.
    min_limit: u32,
    /// Per consumed ordinary token. Invariant: entry `i` describes step
    /// `i`, and there are at most as many entries as steps (rollback
    /// truncates them); steps without an entry (special tokens, healing
    /// steps) read as a lexeme boundary.
    per_token: Vec<TokenEntry>,
    backtrack: Backtrack,
}

/// What the options remember of one consumed token.
#[derive(Clone, Copy, Debug, Default)]
struct TokenEntry {
    /// The token, `None` for a step that was not an ordinary token.
    token: Option<TokenId>,
    /// The row of the lexeme in progress after the token (`None` at a
    /// lexeme boundary).
    row: Option<u32>,
    /// How many tokens that lexeme spans.
    count: u32,
}

impl LexemeOptions {
    pub(crate) fn new(lexer: &lexer::Lexer) -> LexemeOptions {
        let limits = (0..lexer.num_lexemes() as u32)
            .filter_map(|i| lexer.max_tokens(lexer::LexemeId(i)))
            .min();
        LexemeOptions {
            limited: limits.is_some(),
            min_limit: limits.unwrap_or(u32::MAX),
            ..LexemeOptions::default()
        }
    }

    /// Whether masks depend on token counts (so equal parser positions
    /// may have different masks).
    pub(crate) fn limited(&self) -> bool {
        self.limited
    }

    /// The lexeme in progress before step `n`: its row and token count.
    fn before(&self, n: usize) -> (Option<u32>, u32) {
        let e = n.checked_sub(1).and_then(|i| self.per_token.get(i)).copied().unwrap_or_default();
        (e.row, e.count)
    }
}

impl Matcher {
    /// What the caller should take back after the last token consumed (or
    /// validated) because it ended with hidden stop text; all zero
    /// otherwise, and after a rollback.
    pub fn backtrack(&self) -> Backtrack {
        self.options.backtrack
    }

    /// After the bytes of ordinary token `token` were pushed: unseals
    /// hidden stop text (recording the [`Backtrack`]) and applies
    /// `max_tokens`. `Ok(false)` when a lexeme at its token limit cannot
    /// end here: the token is not allowed (the caller pops its bytes).
    pub(super) fn finish_token_bytes(&mut self, token: TokenId) -> Result<bool, MatcherError> {
        let n = self.steps.len();
        self.options.per_token.truncate(n);
        let len = self.trie.token_bytes(token).map_or(0, <[u8]>::len);
        let need = self.parser.sealed_hidden();
        self.options.backtrack = Backtrack::default();
        if need > 0 {
            let tail = self.tail_bytes(token, need);
            let hidden = self.parser.take_hidden(&tail);
            if hidden > 0 {
                self.options.backtrack = self.cover(len, hidden);
            }
        }
        let mut entry = TokenEntry { token: Some(token), row: None, count: 0 };
        if let Some(row) = self.parser.lexeme_row().filter(|_| self.options.limited) {
            let count = match self.options.before(n) {
                (Some(r), c) if r == row => c + 1,
                _ => 1,
            };
            if self.parser.last_byte_continued_lexeme()
                && self.parser.apply_max_tokens(count)? == MaxTokensOutcome::CannotEnd
            {
                return Ok(false);
            }
            if let Some(r) = self.parser.lexeme_row() {
                entry.row = Some(r);
                entry.count = count;
            }
        }
        self.options.per_token.resize(n, TokenEntry::default());
        self.options.per_token.push(entry);
        Ok(true)
    }

    /// The last bytes of the text ending with `token`: at least `need`
    /// when the tokens before it are known.
    fn tail_bytes(&self, token: TokenId, need: usize) -> Vec<u8> {
        let mut parts: Vec<&[u8]> = vec![self.trie.token_bytes(token).unwrap_or(&[])];
        let mut have = parts[0].len();
        for e in self.options.per_token.iter().rev() {
            if have >= need {
                break;
            }
            let Some(b) = e.token.and_then(|t| self.trie.token_bytes(t)) else { break };
            have += b.len();
            parts.push(b);
        }
        parts.iter().rev().flat_map(|p| p.iter().copied()).collect()
    }

    /// The tokens from the last (of `len` bytes) back that cover `hidden`
    /// bytes, as llguidance counts them.
    fn cover(&self, len: usize, hidden: usize) -> Backtrack {
        let mut covered = len;
        let mut tokens = 1;
        for step in self.steps.iter().rev() {
            if covered >= hidden {
                break;
            }
            covered += match *step {
                Step::Bytes(k) => k,
                Step::Special => 1,
                Step::Stop => 0,
            };
            tokens += 1;
        }
        Backtrack { tokens, hidden, visible: covered.saturating_sub(hidden) }
    }

    /// Forgets the backtrack and the counts of the tokens taken back.
    pub(super) fn options_rolled_back(&mut self) {
        self.options.backtrack = Backtrack::default();
        self.options.per_token.truncate(self.steps.len());
    }

    /// Removes from the mask the tokens after which a lexeme at its token
    /// limit could not end (see the module documentation). Runs only when
    /// such a token can exist: a lexeme in progress one token from its
    /// limit, or a grammar with `max_tokens=1`.
    pub(super) fn filter_token_limits(&mut self) -> Result<(), MatcherError> {
        if !self.options.limited {
            return Ok(());
        }
        let n = self.steps.len();
        let (row, count) = match self.parser.lexeme_row() {
            Some(row) => match self.options.before(n) {
                (Some(r), c) if r == row => (Some(row), c),
                _ => (Some(row), 0),
            },
            None => (None, 0),
        };
        let near = {
            let (state, lexer) = self.parser.lexer_state_mut();
            row.is_some()
                && lexer
                    .live_lexemes(state)
                    .any(|l| lexer.max_tokens(l).is_some_and(|m| m <= count + 1))
        };
        if !near && self.options.min_limit > 1 {
            return Ok(());
        }
        let candidates: Vec<TokenId> =
            self.mask.iter().filter(|&t| self.trie.token_bytes(t).is_some()).collect();
        for t in candidates {
            if !self.fits_token_limits(t, row, count)? {
                self.mask.remove(t);
            }
        }
        Ok(())
    }

    /// Whether token `t` (allowed by its bytes) leaves no lexeme at its
    /// limit unable to end; `row` and `count` describe the lexeme in
    /// progress before it.
    fn fits_token_limits(
        &mut self,
        t: TokenId,
        row: Option<u32>,
        count: u32,
    ) -> Result<bool, MatcherError> {
        let bytes = self.trie.token_bytes(t).unwrap_or(&[]);
        let mut pushed = 0;
        let mut fits = true;
        for &b in bytes {
            if !self.parser.try_consume_byte(b)? {
                fits = false;
                break;
            }
            pushed += 1;
        }
        if fits
            && self.parser.last_byte_continued_lexeme()
            && let Some(now) = self.parser.lexeme_row()
        {
            let c = if Some(now) == row { count + 1 } else { 1 };
            fits = self.parser.max_tokens_outcome(c) != MaxTokensOutcome::CannotEnd;
        }
        self.parser.pop_bytes(pushed);
        Ok(fits)
    }
}
