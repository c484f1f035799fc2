//! Precomputed token masks for unconstrained lexer contexts.
//!
//! Large masks are the slow ones: inside a JSON string almost every token is
//! allowed, and the trie walk visits most of the vocabulary's nodes. The
//! slicer splits the vocabulary into *slices* defined by regexes. When the
//! lexer state a mask starts from provably continues with every word of a
//! slice's regex, every token of the slice is allowed: its precomputed mask
//! is OR-ed in and its sub-trie is not walked. Otherwise the slice's sub-trie
//! is walked as usual. The remaining tokens (the leftover slice: tokens no
//! regex matches, special tokens) are always walked.
//!
//! # Example
//! ```
//! use structgen_slicer::{Slicer, SlicerConfig};
//! use toktrie::{TokTrie, TokenId};
//!
//! let trie = TokTrie::from_token_bytes(&["a", "ab", "abc", "\"", " ", "\u{e9}"]).unwrap();
//! let slicer = Slicer::new(&trie, &SlicerConfig::json()).unwrap();
//! // The whitespace slice, then the three JSON-string slices.
//! assert_eq!(slicer.slices().len(), 4);
//! assert!(slicer.slices()[0].mask().contains(TokenId(4)));
//! assert_eq!(slicer.slices()[1].mask().count(), 4); // a, ab, abc, é
//! assert!(slicer.leftover_mask().contains(TokenId(3))); // the quote
//! ```
//! A [`Slicer`] is built once per tokenizer and shared (`Arc`) by every
//! matcher of it: `structgen::Matcher::with_slicer(Some(arc))`.
//!
//! # Slices
//! [`SlicerConfig::json`] (the default) has llguidance's four slices: JSON
//! whitespace `[\x20\x0A\x0D\x09]+`, then the string bodies
//! `[^"\\\x00-\x1F\x7F]{1,10}`, `{1,30}` and `+`. A token belongs to the first
//! slice whose regex matches all of its bytes, so the slices are disjoint
//! and nested definitions act as a containment tree: under `maxLength` 20
//! the first string slice is proven and answered from its mask, while the
//! tokens of 11 to 30 characters (second slice) and longer (third) are
//! walked. [`SliceSpec`] lets other grammars define their own.
//!
//! # Algorithm
//! See `DESIGN.md`. The question "does the lexer state continue with every
//! word of the slice?" is `lexer::Lexer::state_contains_prefixes`: derivre's
//! prefix-containment check of the slice's regex in the derivative of a live
//! greedy lexeme (object keys other than the known names are written
//! `"C*" & ¬("n1"|…)` by the JSON Schema compiler, a shape it reads), the
//! same check on the parts of concatenations and alternatives (strings with
//! an unanchored `pattern`, `C* "lit" C* "`), and for other intersections a
//! budgeted exploration of derivative pairs; bounded by
//! [`SlicerConfig::fuel`], cached per (lexer state, slice). It is a sound
//! under-approximation: "not proven" walks. A slice that covers others
//! ([`Slice::covers`]: `+` covers `{1,30}` and `{1,10}`) is asked first and
//! settles them. When no slice is proven the whole trie is walked once.
//!
//! # Complexity and memory
//! Building: O(V · L) derivative look-ups to classify `V` tokens of at most
//! `L` bytes, plus one [`TokTrie::subset`] per slice (O(V) each). A mask:
//! per slice one cached containment answer (a hash look-up) and either an
//! OR of `V / 64` words or the walk of that slice's sub-trie. Memory: per
//! slice a sub-trie (8 bytes a node, about twice its tokens, plus per-id
//! tables of `9 · V` bytes) and a mask of `V / 8` bytes;
//! [`Slicer::memory_bytes`] reports it (about 9 MB for Llama-3's 128k
//! tokens with the default slices).
//!
//! Masks are `TokenSet`s of `u64` words: the OR of a slice mask is a word
//! loop the compiler vectorizes, and the walk's per-node store is a shift
//! and an `or` (see `toktrie::TokenSet`).
//!
//! # Errors and panics
//! [`Slicer::new`] returns [`SlicerError`] for a regex that does not parse
//! (naming the slice) or a vocabulary the sub-tries cannot hold. Nothing
//! panics on any input.
//!
//! # Measured (Llama-3, MaskBench dev)
//! `cargo xtask bench maskbench`, the full dev split (7,874 schemas, 1.67M
//! mask steps computed by every engine, one process, 2-core machine at
//! load ~1): ours with the slicer against llguidance 1.9.1 with its default
//! slices, per-mask mean 0.53×, p50 0.42×, p99 0.49×, max 0.89× (15.9 vs
//! 17.8 ms: both in one schema whose string states are intersections, where
//! the lexer's learned witnesses now spare derivre's emptiness searches;
//! lexer crate manual); against llguidance without slices: mean 0.08×,
//! p99 0.15×. A slice answered 33% of the masks computed through the
//! slicer. Slicer build (`structgen maskbench --tokenizer …` prints it):
//! Llama-3 46–70 ms and 9.1 MB, o200k 94 ms and 14.1 MB. Smaller samples
//! mislead in both directions (`DESIGN.md`, "Noise").
//!
//! Going further than llguidance (`DESIGN.md`, "Measurements"): object keys
//! other than the known names, written `"C*" & ¬("n1"|…)` by the JSON
//! Schema compiler, are proven by derivre's check in µs (before: a budgeted
//! exploration of derivative pairs, tens of ms at a new key state, which
//! put the mean at 0.92× and the p99 at 1.29× on every 8th schema; now 0.51×
//! and 0.15×); strings with an unanchored `pattern` are proven by the parts
//! of their concatenation; walking the whole trie when nothing is proven
//! halved the masks of grammars where no slice applies (kept).
//!
//! # Boundaries
//! Depends on `toktrie` (sub-tries, token sets) and `lexer` (probes). No
//! features.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use lexer::{ProbeError, ProbeRegex};
use toktrie::{BuildError, TokTrie, TokenId, TokenKind, TokenSet};

/// One slice: a name for messages and the regex its tokens match.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SliceSpec {
    /// A human-readable name (`"json-string-10"`).
    pub name: String,
    /// The slice's language (`regex` crate syntax, anchored at both ends;
    /// no look-around).
    pub regex: String,
}

impl SliceSpec {
    /// A slice named by its regex.
    pub fn new(regex: &str) -> SliceSpec {
        SliceSpec { name: format!("/{regex}/"), regex: regex.to_string() }
    }
}

/// Which slices to build and how hard to try proving them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlicerConfig {
    /// The slices, in priority order: a token goes to the first that matches it.
    pub slices: Vec<SliceSpec>,
    /// Fuel for one containment check (derivre relevance-search steps per
    /// live lexeme); a check that runs out counts as "not proven".
    pub fuel: u64,
}

/// JSON whitespace runs.
pub const JSON_WHITESPACE: &str = r"[\x20\x0A\x0D\x09]+";
/// Characters of a JSON string that need no escape.
pub const JSON_STRING_CHAR: &str = r#"[^"\\\x00-\x1F\x7F]"#;

impl SlicerConfig {
    /// JSON whitespace, then the JSON string bodies of up to 10, up to 30
    /// and any number of characters (llguidance's default slices).
    pub fn json() -> SlicerConfig {
        let c = JSON_STRING_CHAR;
        SlicerConfig {
            slices: vec![
                SliceSpec { name: "json-whitespace".into(), regex: JSON_WHITESPACE.into() },
                SliceSpec { name: "json-string-10".into(), regex: format!("{c}{{1,10}}") },
                SliceSpec { name: "json-string-30".into(), regex: format!("{c}{{1,30}}") },
                SliceSpec { name: "json-string".into(), regex: format!("{c}+") },
            ],
            fuel: 100_000,
        }
    }

    /// Custom slices with the default fuel.
    pub fn with_slices(slices: Vec<SliceSpec>) -> SlicerConfig {
        SlicerConfig { slices, ..SlicerConfig::json() }
    }
}

impl Default for SlicerConfig {
    fn default() -> SlicerConfig {
        SlicerConfig::json()
    }
}

/// Why a [`Slicer`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlicerError {
    /// A slice's regex does not parse or uses look-around.
    Regex {
        /// The slice's index in [`SlicerConfig::slices`].
        slice: usize,
        /// The slice's name.
        name: String,
        /// What is wrong with the regex.
        source: ProbeError,
    },
    /// A sub-trie could not be built.
    Trie(BuildError),
}

impl std::fmt::Display for SlicerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SlicerError::Regex { slice, name, source } => {
                write!(f, "slice {slice} ({name}): {source}")
            }
            SlicerError::Trie(e) => write!(f, "building a slice's sub-trie: {e}"),
        }
    }
}

impl std::error::Error for SlicerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SlicerError::Regex { source, .. } => Some(source),
            SlicerError::Trie(e) => Some(e),
        }
    }
}

/// One slice of a vocabulary: its regex, the tokens it owns as a sub-trie
/// and as a mask.
///
/// Invariant: `mask` is exactly the set of ordinary tokens of `trie`, and
/// every one of them matches `probe`.
#[derive(Clone, Debug)]
pub struct Slice {
    spec: SliceSpec,
    probe: ProbeRegex,
    trie: TokTrie,
    mask: TokenSet,
    /// Bit `k` (for `k < 64`, `k` not this slice) is set when every word of
    /// slice `k`'s regex is a word of this slice's: proving this slice
    /// proves slice `k`.
    covers: u64,
}

impl Slice {
    /// The slice's definition.
    pub fn spec(&self) -> &SliceSpec {
        &self.spec
    }

    /// The parsed regex (for `lexer::Lexer::add_probe`).
    pub fn probe(&self) -> &ProbeRegex {
        &self.probe
    }

    /// The sub-trie of the slice's tokens (same ids as the full trie).
    pub fn trie(&self) -> &TokTrie {
        &self.trie
    }

    /// The slice's tokens.
    pub fn mask(&self) -> &TokenSet {
        &self.mask
    }

    /// The slices (bit `k` for slice `k < 64`) whose regexes match only
    /// words this slice's regex matches: when this slice is proven, so are
    /// they, without asking the lexer.
    pub fn covers(&self) -> u64 {
        self.covers
    }
}

/// The slices of one vocabulary, built once and shared by its matchers.
#[derive(Clone, Debug)]
pub struct Slicer {
    slices: Vec<Slice>,
    leftover: TokTrie,
    leftover_mask: TokenSet,
    fuel: u64,
    vocab_size: usize,
    num_nodes: usize,
    build_time: Duration,
}

impl Slicer {
    /// Splits the vocabulary of `trie` by `config`'s slices.
    ///
    /// # Errors
    /// A slice regex that does not parse ([`SlicerError::Regex`], naming the
    /// slice), or a sub-trie the builder refuses.
    pub fn new(trie: &TokTrie, config: &SlicerConfig) -> Result<Slicer, SlicerError> {
        let start = Instant::now();
        let v = trie.vocab_size();
        let mut probes = Vec::with_capacity(config.slices.len());
        for (i, spec) in config.slices.iter().enumerate() {
            let probe = ProbeRegex::new(&spec.regex).map_err(|source| SlicerError::Regex {
                slice: i,
                name: spec.name.clone(),
                source,
            })?;
            probes.push(probe);
        }
        let mut matchers: Vec<_> = probes.iter().map(ProbeRegex::matcher).collect();
        let mut masks = vec![TokenSet::new(v); probes.len()];
        let mut leftover_mask = TokenSet::full(v);
        for id in (0..v as u32).map(TokenId) {
            if trie.kind(id) != TokenKind::Ordinary {
                continue;
            }
            let Some(bytes) = trie.token_bytes(id).filter(|b| !b.is_empty()) else { continue };
            if let Some(i) = matchers.iter_mut().position(|m| m.is_match(bytes)) {
                masks[i].insert(id);
                leftover_mask.remove(id);
            }
        }
        let mut covers = vec![0u64; probes.len()];
        for (i, c) in covers.iter_mut().enumerate().take(64) {
            for k in (0..probes.len().min(64)).filter(|&k| k != i) {
                if probes[k].is_subset_of(&probes[i], config.fuel) == Some(true) {
                    *c |= 1 << k;
                }
            }
        }
        let mut slices = Vec::with_capacity(probes.len());
        for (((spec, probe), mask), covers) in
            config.slices.iter().zip(probes).zip(masks).zip(covers)
        {
            let sub = trie.subset(&mask).map_err(SlicerError::Trie)?;
            slices.push(Slice { spec: spec.clone(), probe, trie: sub, mask, covers });
        }
        let leftover = trie.subset(&leftover_mask).map_err(SlicerError::Trie)?;
        // Only the ordinary tokens the leftover trie can reach (not holes).
        let mut reachable = TokenSet::new(v);
        for id in (0..v as u32).map(TokenId) {
            if leftover_mask.contains(id) && trie.kind(id) != TokenKind::Hole {
                reachable.insert(id);
            }
        }
        Ok(Slicer {
            slices,
            leftover,
            leftover_mask: reachable,
            fuel: config.fuel,
            vocab_size: v,
            num_nodes: trie.num_nodes(),
            build_time: start.elapsed(),
        })
    }

    /// The slices, in priority order.
    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// The sub-trie of the tokens no slice owns, with every special token.
    pub fn leftover(&self) -> &TokTrie {
        &self.leftover
    }

    /// The tokens no slice owns (ordinary and special; no holes).
    pub fn leftover_mask(&self) -> &TokenSet {
        &self.leftover_mask
    }

    /// Fuel for one containment check (see [`SlicerConfig::fuel`]).
    pub fn fuel(&self) -> u64 {
        self.fuel
    }

    /// Whether this slicer was built from a trie like `trie` (same
    /// vocabulary size and node count): the check a matcher makes before
    /// using it.
    pub fn fits(&self, trie: &TokTrie) -> bool {
        self.vocab_size == trie.vocab_size() && self.num_nodes == trie.num_nodes()
    }

    /// How long [`Slicer::new`] took.
    pub fn build_time(&self) -> Duration {
        self.build_time
    }

    /// Approximate heap bytes of the sub-tries and masks: nodes, per-id
    /// tables (kind, byte offset) and token bytes of each sub-trie, and one
    /// bit per id per mask.
    pub fn memory_bytes(&self) -> usize {
        let trie_bytes = |t: &TokTrie| {
            let mut token_bytes = 0;
            for id in (0..t.vocab_size() as u32).map(TokenId) {
                token_bytes += t.token_bytes(id).map_or(0, <[u8]>::len);
            }
            t.num_nodes() * TokTrie::node_size_bytes()
                + (t.vocab_size() + 1) * std::mem::size_of::<usize>()
                + t.vocab_size() * std::mem::size_of::<TokenKind>()
                + token_bytes
        };
        let mask_bytes = (self.vocab_size / 64 + 1) * 8;
        self.slices.iter().map(|s| trie_bytes(&s.trie) + mask_bytes).sum::<usize>()
            + trie_bytes(&self.leftover)
            + mask_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<Slicer>();
        assert_send_sync::<SlicerError>();
    }

    fn trie() -> TokTrie {
        toktrie::TokTrieBuilder::new()
            .token(TokenId(0), b"abc")
            .token(TokenId(1), b"\"")
            .token(TokenId(2), b"  ")
            .token(TokenId(3), "\u{e9}t\u{e9}".as_bytes())
            .token(TokenId(4), &[0xC3])
            .token(TokenId(5), b"a".repeat(15).as_slice())
            .special(TokenId(6), "<eos>")
            .eos(TokenId(6))
            .build()
            .unwrap()
    }

    #[test]
    fn each_token_goes_to_the_first_matching_slice() {
        let t = trie();
        let s = Slicer::new(&t, &SlicerConfig::json()).unwrap();
        let members: Vec<Vec<u32>> =
            s.slices().iter().map(|x| x.mask().iter().map(|t| t.0).collect()).collect();
        assert_eq!(members, [vec![2], vec![0, 3], vec![5], vec![]]);
        // The quote, the partial UTF-8 byte and the special token are left over.
        let left: Vec<u32> = s.leftover_mask().iter().map(|t| t.0).collect();
        assert_eq!(left, [1, 4, 6]);
        assert_eq!(s.leftover().eos_tokens(), &[TokenId(6)]);
        assert_eq!(s.slices()[1].trie().token_id(b"abc"), Some(TokenId(0)));
        assert_eq!(s.slices()[1].trie().token_id(b"\""), None);
        assert!(s.fits(&t));
        // `{1,10}` and `{1,30}` words are words of `+`; whitespace is apart.
        let covers: Vec<u64> = s.slices().iter().map(Slice::covers).collect();
        assert_eq!(covers, [0, 0, 0b10, 0b110]);
        assert!(s.memory_bytes() > 0);
    }

    #[test]
    fn a_bad_regex_names_its_slice() {
        let config = SlicerConfig::with_slices(vec![SliceSpec::new("a+"), SliceSpec::new("[b-")]);
        let e = Slicer::new(&trie(), &config).unwrap_err();
        assert!(matches!(&e, SlicerError::Regex { slice: 1, name, .. } if name == "/[b-/"));
        assert!(e.to_string().starts_with("slice 1 (/[b-/): invalid probe regex"), "{e}");
        let config = SlicerConfig::with_slices(vec![SliceSpec::new("^a")]);
        assert!(Slicer::new(&trie(), &config).is_err());
    }

    #[test]
    fn no_slices_leaves_everything_over() {
        let t = trie();
        let s = Slicer::new(&t, &SlicerConfig::with_slices(Vec::new())).unwrap();
        assert_eq!(s.leftover_mask().count(), 7);
        assert_eq!(s.leftover().num_nodes(), t.num_nodes());
    }
}
