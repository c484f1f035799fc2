//! Alone-runs: the merges of BPE on one token's own bytes, in firing order,
//! for Hugging Face vocabularies whose merge priorities are not monotone
//! (Llama-3, Llama-2, Mistral).
//!
//! The backtracking encoder needs to know whether two valid tokens `a`, `b`
//! are *compatible* (BPE of `bytes(a) ++ bytes(b)` is `[a, b]`). Until a
//! merge crosses the boundary, each side evolves exactly as BPE of its own
//! bytes (its *alone-run*), and the two runs interleave by their next
//! priorities (the lower goes first; on a tie the left one, which is
//! leftmost). The only pair across the boundary is (rightmost part of the
//! left side, leftmost part of the right side); it fires at the first joint
//! state where its priority is below the left side's next merge and at most
//! the right side's (a tie with the right side's merge goes to the cross
//! pair, which is further left). [`simulate`] replays exactly that: a step
//! per merge of the two runs, a rule lookup whenever a boundary part
//! changes. See `DESIGN.md`, "Non-monotone merge orders".
//!
//! When both runs fire their merges in increasing priority (*sorted* runs:
//! every token of a monotone vocabulary, and most tokens of the others),
//! the backtracking encoder's walk down the two spines gives the same answer
//! with fewer lookups; [`simulate`] is used only when either run is not
//! sorted.

use rustc_hash::FxHashMap;

use crate::model::{Model, NO_TOKEN, Symbols, lowest_rule};
use crate::vocab::Tokens;

/// One merge of an alone-run: its priority, the token it creates, and
/// whether it involves the leftmost or rightmost part.
///
/// Bit layout of `bits`: bits 0-23 the created token (ids fit 24 bits,
/// `vocab::MAX_ID`), bit 24 [`LEFT_END`], bit 25 [`RIGHT_END`]. The first
/// entry of every token's run is a header instead: `prio` holds the first
/// initial part and `bits` the last one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    pub(crate) prio: u32,
    pub(crate) bits: u32,
}

/// The merge's left part is the leftmost part: the result becomes the new
/// leftmost part.
pub(crate) const LEFT_END: u32 = 1 << 24;
/// The merge's right part is the rightmost part.
pub(crate) const RIGHT_END: u32 = 1 << 25;
const ID_MASK: u32 = (1 << 24) - 1;

/// What BPE of one token's own bytes gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alone {
    /// The token is an initial symbol (a byte, or a character for
    /// SentencePiece-style vocabularies).
    Base,
    /// BPE gives the token back; its last merge is `(left, right)` with
    /// priority `prio`, and `sorted` tells whether the run's priorities
    /// never decrease.
    Valid { left: u32, right: u32, prio: u32, sorted: bool },
    /// BPE gives something else: the token never occurs in an encoding.
    Invalid,
}

/// Reusable buffers of [`alone_run`].
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    parts: Vec<u32>,
    rules: Vec<Option<(u32, u32)>>,
}

/// Runs BPE on token `t`'s initial parts, appending the header and the
/// merges to `steps` (left untouched when the token is not valid).
///
/// Initial parts: the bytes (byte symbols) or the characters
/// (SentencePiece-style), each of which must be an ordinary token in the
/// byte map; a byte or character without a token (it would be dropped or
/// spelled with byte-fallback or unknown tokens) makes `t` invalid.
pub(crate) fn alone_run(
    model: &Model,
    tokens: &Tokens,
    table: &FxHashMap<u64, (u32, u32)>,
    t: u32,
    scratch: &mut Scratch,
    steps: &mut Vec<Step>,
) -> Alone {
    let bytes = tokens.bytes(t);
    let parts = &mut scratch.parts;
    parts.clear();
    match &model.symbols {
        Symbols::Bytes(ids) => {
            for &b in bytes {
                match ids[b as usize] {
                    // A byte without a token never forms part of a token.
                    NO_TOKEN => return Alone::Invalid,
                    id => parts.push(id),
                }
            }
        }
        Symbols::Chars { .. } => {
            let mut i = 0;
            while i < bytes.len() {
                let len = crate::model::utf8_len(bytes[i]).min(bytes.len() - i);
                match model.map.get(tokens, &bytes[i..i + len]) {
                    Some(id) => parts.push(id),
                    None => return Alone::Invalid,
                }
                i += len;
            }
        }
    }
    match parts.len() {
        0 => return Alone::Invalid,
        1 => {
            return if parts[0] == t {
                steps.push(Step { prio: t, bits: t });
                Alone::Base
            } else {
                Alone::Invalid
            };
        }
        _ => {}
    }
    let base = steps.len();
    steps.push(Step { prio: parts[0], bits: parts[parts.len() - 1] });
    let rule = |l: u32, r: u32| table.get(&(u64::from(l) << 32 | u64::from(r))).copied();
    let rules = &mut scratch.rules;
    rules.clear();
    rules.extend(parts.windows(2).map(|w| rule(w[0], w[1])));
    let mut last = (0, 0, 0);
    let mut sorted = true;
    let mut prev = 0;
    // The lowest priority, leftmost on ties, until no rule applies.
    while let Some((i, prio, res)) = lowest_rule(rules) {
        sorted &= prio >= prev;
        prev = prio;
        let mut bits = res & ID_MASK;
        if i == 0 {
            bits |= LEFT_END;
        }
        if i + 2 == parts.len() {
            bits |= RIGHT_END;
        }
        steps.push(Step { prio, bits });
        last = (parts[i], parts[i + 1], prio);
        parts[i] = res;
        parts.remove(i + 1);
        rules.remove(i);
        if i < rules.len() {
            rules[i] = rule(parts[i], parts[i + 1]);
        }
        if i > 0 {
            rules[i - 1] = rule(parts[i - 1], parts[i]);
        }
    }
    if parts.len() == 1 && parts[0] == t {
        Alone::Valid { left: last.0, right: last.1, prio: last.2, sorted }
    } else {
        steps.truncate(base);
        Alone::Invalid
    }
}

/// Whether BPE of `bytes(a) ++ bytes(b)` is `[a, b]`, given the two tokens'
/// runs (header first): replays the interleaving of the two runs and
/// answers false as soon as the pair across the boundary would fire.
#[inline]
pub(crate) fn simulate(table: &FxHashMap<u64, (u32, u32)>, ra: &[Step], rb: &[Step]) -> bool {
    const INF: u32 = u32::MAX;
    let rule = |x: u32, y: u32| {
        table.get(&(u64::from(x) << 32 | u64::from(y))).map_or(INF, |&(prio, _)| prio)
    };
    // The rightmost initial part of `a` and the leftmost of `b`.
    let (mut x, mut y) = (ra[0].bits, rb[0].prio);
    let (ra, rb) = (&ra[1..], &rb[1..]);
    let mut q = rule(x, y);
    let (mut i, mut j) = (0, 0);
    loop {
        let hl = ra.get(i).map_or(INF, |s| s.prio);
        let hr = rb.get(j).map_or(INF, |s| s.prio);
        // The cross pair is the lowest present pair: it fires (a finite
        // `q` always beats exhausted sides, which is the pair `(a, b)`).
        if q < hl && q <= hr {
            return false;
        }
        if hl == INF && hr == INF {
            return true;
        }
        if hl <= hr {
            let s = ra[i].bits;
            i += 1;
            if s & RIGHT_END != 0 {
                x = s & ID_MASK;
                q = rule(x, y);
            }
        } else {
            let s = rb[j].bits;
            j += 1;
            if s & LEFT_END != 0 {
                y = s & ID_MASK;
                q = rule(x, y);
            }
        }
    }
}
