//! Lexemes as regular expressions on `derivre`, with a cached, flat transition table.
//!
//! A lexer state is the set of lexemes that are still possible after the bytes
//! seen since the last lexeme boundary, each paired with its regex derivative.
//! The transition on a byte takes the derivative of every live lexeme and drops
//! the dead ones; states and transitions are cached in a flat table indexed by
//! (state, byte class), so the trie walk is mostly table look-ups and the
//! derivative engine runs only on a cache miss.
//!
//! # Example
//! ```
//! use structgen_lexer::{LexemeSet, LexemeSpec, Lexer, LexerLimits, LexerSpec};
//!
//! let mut spec = LexerSpec::new();
//! let int = spec.add(LexemeSpec::regex("[0-9]+"));
//! let kw = spec.add(LexemeSpec::literal("if"));
//! let mut lexer = Lexer::new(&spec, LexerLimits::default()).unwrap();
//!
//! // The parser allows both lexemes here.
//! let mut allowed = LexemeSet::default();
//! allowed.insert(int);
//! allowed.insert(kw);
//! let start = lexer.start_state(&allowed);
//! let s = lexer.next_bytes(start, b"42");
//! let acc = lexer.accepting(s).unwrap();
//! assert_eq!(lexer.accept_set(acc), &[int]);
//! assert!(lexer.next(start, b'x').is_dead());
//! ```
//!
//! # What the lexer decides, and what it leaves to the parser
//! The lexer answers, for a state and a byte, the next state and which
//! lexemes match ([`Lexer::accepting`]); it never decides where a lexeme
//! ends. The parser (the `earley` crate) applies the matching rules:
//! a greedy lexeme ends when the next byte kills the state while it accepts
//! (maximal munch, no backtracking); a lazy lexeme ends at the first byte
//! where it matches ([`Lexer::is_lazy_end`]). The empty string never matches
//! inside the lexer: nullable lexemes are reported by [`Lexer::is_nullable`]
//! and made optional by the parser's grammar builder.
//!
//! # Hidden stop text
//! A lexeme built with [`LexemeSpec::with_stop`] matches its regex followed
//! by the stop text, lazily; the stop is a derivre look-ahead, so in the
//! state where the lexeme ends [`Lexer::hidden_len`] tells how many of the
//! last bytes are stop text (the parser hides them). [`Lexer::forces_bytes`]
//! and [`Lexer::limit_state`] serve the parser's handling of that text and
//! of token limits ([`LexemeSpec::max_tokens`], which the lexer only keeps).
//!
//! # Algorithm
//! All lexemes live in one hash-consed `derivre` expression set with one
//! derivative cache. A state is a sorted list of (lexeme, derivative) pairs,
//! interned; [`Lexer::start_state`] builds the state of the lexemes a parser
//! row allows (cached by the allowed set). Bytes are grouped into classes no
//! expression tells apart, so the table has `states × (classes + 1)`
//! entries (`u32` each; the extra column names the lexemes matching in the
//! state). A miss takes one derivative per live lexeme, and a derivative
//! that derivre does not know to be non-empty by its structure (one under
//! an intersection or a complement) needs a proof: first the few short
//! *witnesses* its lexeme has learned (a derivative along one of them is
//! non-empty by structure; inside a bounded JSON string, `a` after a space,
//! `\x80` inside a UTF-8 character), then derivre's relevance search,
//! bounded by fuel. A lexeme learns a witness when the search was needed
//! and the next transition was cheap to prove (that byte, followed by the
//! witness that proved it, proves the states like the searched one), and
//! when the search runs out of fuel, by a bounded look for one (at most
//! 128 derivatives over one byte per class).
//!
//! Building parses each distinct pattern string once for all lexemes (the
//! set is hash-consed, so the expressions are exactly those of parsing every
//! occurrence) and computes the byte classes from the distinct byte tests
//! only: the byte sets, and the single bytes of bytes and byte strings.
//!
//! # Probes
//! [`Lexer::add_probe`] and [`Lexer::state_contains_prefixes`] answer the
//! slicer's question: does every word of a regex ([`ProbeRegex`]) continue
//! the lexeme in progress without ending it? A sound under-approximation on
//! derivre's prefix-containment check, bounded by fuel and cached per
//! (state, probe); lazy lexemes make the answer "not proven".
//!
//! # Construction
//! [`Lexer::new`] builds the lexemes in a copy of a builder where common
//! pattern strings are parsed already: [`Preparsed::common`] ([`PREPARSED`]:
//! JSON whitespace, numbers, `(?s:.*)`...) or a front end's own set
//! ([`LexerSpec::set_preparsed`]; `structgen-jsonschema` keeps one per
//! `format`), built once per process. The set changes what is parsed
//! again, never the language. For many one-off questions outside a lexer
//! (a schema compiler's emptiness checks), a [`Scratch`] keeps every
//! pattern string it has parsed across the questions.
//!
//! # Complexity and memory
//! A cached transition is O(1). A miss costs O(k · d) with `k` live lexemes
//! and `d` the cost of one derivative (amortized by derivre's cache).
//! Memory: `4 · S · (C + 1)` bytes of table for `S` states and `C` byte classes,
//! plus the expression set. Both are bounded by [`LexerLimits`].
//!
//! # Errors and panics
//! Building returns [`LexerError`] for an invalid regex or an exceeded
//! limit, naming the lexeme when one is at fault ([`LexerError::lexeme`]).
//! Before any derivative is taken, each lexeme's derivative *width* is
//! estimated from its syntax (`width.rs`): nested counted repetitions of
//! bodies that match the empty string multiply (`((a*){100}){100}` makes
//! derivatives of ~10,000 terms that derivre cannot merge, 7 s for one mask
//! after 300 bytes), and a lexeme wider than
//! [`LexerLimits::max_repeat_width`] is refused; `a{1,100000}` and `(a*)*`
//! have width 1. Front-ends that know where a regex came from compute the
//! same estimate with [`repeat_width`] to place the error (a JSON Schema
//! `pattern` at its pointer). On the hot path a limit exceeded makes the transition dead and
//! records a sticky error ([`Lexer::error`]) that callers must check (a
//! lexeme whose emptiness check at construction exhausts its own fuel and
//! the shared [`LexerLimits::build_fuel`] is an error of [`Lexer::new`]), with
//! one exception: an emptiness check that runs out of fuel, its own
//! ([`LexerLimits::relevance_fuel`]) or what is left of its step's
//! ([`LexerLimits::step_fuel`], from one [`Lexer::begin_step`] to the next),
//! drops that lexeme's derivative from the state (the byte is refused for
//! that lexeme, the others go on) and is counted in [`Lexer::fuel_refusals`].
//! The mask is then a subset of the exact one, never a superset: no token
//! leads into an empty language, one hard derivative does not stop the
//! whole parse, and a step's cost stays bounded. The step's fuel pays for
//! every derivre call of its misses (derivatives, witness proofs, searches);
//! once it is spent, derivatives that need a proof are refused at once.
//!
//! Learned witnesses, measured on the MaskBench dev split (Llama-3): in the
//! 50-word pattern under `maxLength` 500 (Github_hard---o62060), 42,537 of
//! 42,686 proofs needed no search (learning alone); its mask mean 131 →
//! 108 µs, p99 5.6 → 4.1 ms (`structgen maskbench`). Over the split, fuel
//! refusals 1,301 in 9 schemas → 391 in 2, and the two valid instances of a
//! 100-word count under 5,000 characters (o21053) that fuel used to refuse
//! are accepted (llguidance rejects them), at 13 ms for its slowest mask;
//! with the slicer, against llguidance with its slicer (`cargo xtask bench
//! maskbench`), mask max 1.09× → 0.89×, mean 0.60× → 0.53×, p99 0.52× →
//! 0.49×. Measured and not kept: discovery before the search (the slowest
//! masks of schemas whose searches are cheap went from 5–10 to 15–25 ms),
//! learning without discovery (o21053: searches out of fuel on every new
//! state, derivre's expression set near two million nodes, masks up to
//! 280 ms), and an 8-byte search for a word after the full search fails
//! (slowest mask 525 ms: it proves states but teaches nothing). A refusal
//! is cached with its transition, so what a mask refuses can depend
//! on the steps before it (derivre's caches make check costs history-dependent
//! anyway). The lexer does not panic on any input; accessors taking a
//! [`LexemeId`] or [`AcceptSetId`] from another lexer panic on out-of-range
//! ids.
//!
//! # Boundaries
//! Depends on `derivre` only, built with its `ahash` feature (its caches
//! hash with aHash, not SipHash; llguidance builds it the same way):
//! measured with `structgen maskbench` on the MaskBench dev split
//! (Llama-3), mask mean 16.2 → 14.7 µs, p99 205 → 177 µs, time to first
//! mask 0.93 → 0.86 ms. The workspace also turns on its `compress`
//! feature, which only derivre's `Regex` reads (the schema compiler's
//! checks); the lexer keeps byte classes of its own. Knows nothing about
//! Earley parsing or tokens.
//! No features.
#![forbid(unsafe_code)]

mod byteclass;
mod error;
mod leaves;
mod lexer;
mod spec;
mod width;

pub use derivre::RegexAst;
pub use error::{LexerError, LexerErrorKind};
pub use leaves::{PREPARSED, Preparsed, Scratch, build_regex, pattern_strings};
pub use lexer::probe::{ProbeError, ProbeId, ProbeMatcher, ProbeRegex};
pub use lexer::{AcceptSetId, Lexer, StateId};
pub use spec::{LexemeId, LexemeSet, LexemeSpec, LexerLimits, LexerSpec};
pub use width::repeat_width;

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<Lexer>();
        assert_send_sync::<LexerSpec>();
        assert_send_sync::<LexerError>();
    }
}
