//! Byte-level vocabularies without a token for some bytes (SmolLM2 lacks
//! 21): every encoder against a naive Hugging Face-style encoder written
//! here, on small synthetic vocabularies that lack a letter, control
//! characters, a whitespace byte and bytes never in UTF-8.
//!
//! The naive encoder follows Hugging Face `tokenizers`' BPE model (its
//! `merge_word`): a piece's characters that are not in the vocabulary
//! become the unknown token when one is named (consecutive ones fused with
//! `fuse_unk`) and are dropped otherwise, so their neighbours may merge;
//! then the lowest-ranked merge fires, leftmost first. (The real file is
//! checked against `tokenizers` itself in `compare/tests/it/gguf.rs`.)

use std::collections::HashMap;

use bpe::{AppendingEncoder, Boundary, IntervalEncoding, PrependableEncoder, Tokenizer};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

/// The bytes the synthetic vocabularies have no token for: control
/// characters, a letter (so gaps fall inside words), vertical tab (a
/// whitespace byte) and bytes that never occur in UTF-8 or only in rare
/// 4-byte sequences.
const MISSING: [u8; 7] = [0x04, 0x0B, 0x1D, b'q', 0xC0, 0xF1, 0xFF];

/// GPT-2's byte-to-character table, written out independently of `bpe`.
fn byte_char(b: u8) -> char {
    let printable =
        (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    if printable {
        return char::from(b);
    }
    let rank = (0..b)
        .filter(|&c| {
            !((b'!'..=b'~').contains(&c)
                || (0xA1..=0xAC).contains(&c)
                || (0xAE..=0xFF).contains(&c))
        })
        .count() as u32;
    char::from_u32(256 + rank).unwrap()
}

fn spell(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| byte_char(b)).collect()
}

/// A synthetic vocabulary: the single bytes but [`MISSING`], then tokens
/// made by merging random pairs of tokens over a small alphabet (creation
/// order is the merge order, with some neighbours swapped so that some
/// merge orders are not monotone), and a few tokens holding missing bytes
/// (unreachable by merges).
struct Vocab {
    /// Token bytes by id.
    tokens: Vec<Vec<u8>>,
    /// `(left, right)` ids in priority order.
    merges: Vec<(u32, u32)>,
    unk: Option<u32>,
    fuse_unk: bool,
    ignore_merges: bool,
}

impl Vocab {
    fn new(seed: u64, unk: bool, fuse_unk: bool, ignore_merges: bool) -> Vocab {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut tokens: Vec<Vec<u8>> =
            (0..=255u8).filter(|b| !MISSING.contains(b)).map(|b| vec![b]).collect();
        let alphabet: Vec<u32> = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| b"abce !\n\xC3\xA9".contains(&t[0]))
            .map(|(i, _)| i as u32)
            .collect();
        let mut pool = alphabet.clone();
        let mut merges = Vec::new();
        let mut seen: HashMap<Vec<u8>, u32> =
            tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        while merges.len() < 160 {
            let l = pool[rng.random_range(0..pool.len())];
            let r = pool[rng.random_range(0..pool.len())];
            let mut joined = tokens[l as usize].clone();
            joined.extend_from_slice(&tokens[r as usize]);
            if joined.len() > 8 || seen.contains_key(&joined) {
                continue;
            }
            let id = tokens.len() as u32;
            seen.insert(joined.clone(), id);
            tokens.push(joined);
            pool.push(id);
            merges.push((l, r));
        }
        for i in 1..merges.len() {
            if rng.random_range(0..8) == 0 {
                merges.swap(i - 1, i);
            }
        }
        for t in [&b"aq"[..], b"q!", b"\x04\x04", b"ab\x1d"] {
            tokens.push(t.to_vec());
        }
        let unk = unk.then(|| {
            tokens.push(b"<unk>".to_vec());
            tokens.len() as u32 - 1
        });
        Vocab { tokens, merges, unk, fuse_unk, ignore_merges }
    }

    fn tokenizer_json(&self) -> String {
        let vocab: serde_json::Map<String, serde_json::Value> = self
            .tokens
            .iter()
            .enumerate()
            .map(|(id, t)| {
                // The unknown token is spelled as is (its characters are
                // in the byte alphabet, as SmolLM2's `<|endoftext|>`).
                let name = if Some(id as u32) == self.unk {
                    String::from_utf8(t.clone()).unwrap()
                } else {
                    spell(t)
                };
                (name, json!(id))
            })
            .collect();
        let merges: Vec<String> = self
            .merges
            .iter()
            .map(|&(l, r)| {
                format!("{} {}", spell(&self.tokens[l as usize]), spell(&self.tokens[r as usize]))
            })
            .collect();
        let mut model = json!({
            "type": "BPE",
            "vocab": vocab,
            "merges": merges,
            "fuse_unk": self.fuse_unk,
            "ignore_merges": self.ignore_merges,
        });
        if let Some(unk) = self.unk {
            model["unk_token"] =
                json!(String::from_utf8(self.tokens[unk as usize].clone()).unwrap());
        }
        json!({
            "model": model,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        })
        .to_string()
    }

    /// Hugging Face's BPE of one piece, naively.
    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        let id_of = |b: &[u8]| self.tokens.iter().position(|t| t == b).map(|i| i as u32);
        if self.ignore_merges
            && let Some(id) = id_of(piece)
        {
            out.push(id);
            return;
        }
        let mut parts: Vec<u32> = Vec::new();
        let mut pending_unk = false;
        for &b in piece {
            if let Some(id) = id_of(&[b]) {
                pending_unk = false;
                parts.push(id);
            } else if let Some(unk) = self.unk {
                if !(self.fuse_unk && pending_unk) {
                    parts.push(unk);
                }
                pending_unk = true;
            }
        }
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    let rank = self.merges.iter().position(|&m| m == (parts[i], parts[i + 1]))?;
                    Some((rank, i))
                })
                .min();
            let Some((rank, i)) = best else { break };
            let (l, r) = self.merges[rank];
            let mut joined = self.tokens[l as usize].clone();
            joined.extend_from_slice(&self.tokens[r as usize]);
            parts[i] = id_of(&joined).unwrap();
            parts.remove(i + 1);
        }
        out.extend(parts);
    }

    fn encode(&self, tok: &Tokenizer, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for piece in tok.pieces_of(text) {
            self.encode_piece(piece.as_bytes(), &mut out);
        }
        out
    }
}

struct Case {
    vocab: Vocab,
    tok: Tokenizer,
}

fn cases() -> &'static [Case] {
    static C: std::sync::OnceLock<Vec<Case>> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let configs = [
            (false, false, false),
            (false, false, true),
            (true, false, false),
            (true, true, false),
        ];
        configs
            .iter()
            .enumerate()
            .map(|(seed, &(unk, fuse, ignore))| {
                let vocab = Vocab::new(seed as u64, unk, fuse, ignore);
                let tok = Tokenizer::from_tokenizer_json(vocab.tokenizer_json().as_bytes())
                    .expect("a vocabulary without some byte tokens loads");
                Case { vocab, tok }
            })
            .collect()
    })
}

fn text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        8 => prop::sample::select(vec![
            "a", "b", "c", "e", "ab", "q", "aqb", "qq", " ", "  ", "\n", "!", "!!", "é", "\u{4}",
            "\u{b}", "\u{1d}", "\u{4}\u{4}", "ab\u{1d}", "\u{c0}", "\u{3c0}", "\u{71000}", "0",
            " q", "'s", "x",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
        1 => (prop::sample::select(vec!["a", "aq", " ", "\u{b}", "!\u{4}", "q"]), 10usize..60)
            .prop_map(|(c, n)| c.repeat(n)),
    ];
    prop::collection::vec(atom, 0..40).prop_map(|v| v.concat())
}

fn present(text: &str) -> Vec<u8> {
    text.bytes().filter(|b| !MISSING.contains(b)).collect()
}

fn char_floor(t: &str, mut i: usize) -> usize {
    i = i.min(t.len());
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn encoders_equal_the_naive_hf_encoder(t in text()) {
        for case in cases() {
            let (tok, v) = (&case.tok, &case.vocab);
            let want = v.encode(tok, &t);
            prop_assert_eq!(&tok.encode(&t), &want, "{:?}", t);
            prop_assert_eq!(&tok.encode_reference(&t), &want);
            prop_assert_eq!(&tok.encode_continuation(&t), &want);
            prop_assert_eq!(&tok.encode_bytes(t.as_bytes()), &want);
            prop_assert_eq!(tok.count(&t), want.len());
            if v.unk.is_none() && !v.ignore_merges {
                // Missing bytes are dropped, nothing else.
                prop_assert_eq!(tok.decode(&want).unwrap(), present(&t));
            }
        }
    }

    #[test]
    fn restarting_encoders_equal_one_shot(t in text(), cuts in prop::collection::vec(0usize..2000, 1..8), n in 0usize..20) {
        for case in cases() {
            let tok = &case.tok;
            let iv = IntervalEncoding::new(tok, &t);
            for w in cuts.windows(2) {
                let (a, b) = (char_floor(&t, w[0].min(w[1])), char_floor(&t, w[0].max(w[1])));
                prop_assert_eq!(iv.count(a..b), tok.count(&t[a..b]), "{}..{} of {:?}", a, b, t);
            }
            // The text cut into segments, appended in order and prepended
            // in reverse.
            let mut at: Vec<usize> = cuts.iter().map(|&c| char_floor(&t, c)).collect();
            at.push(0);
            at.push(t.len());
            at.sort_unstable();
            at.dedup();
            let mut app = AppendingEncoder::new(tok);
            for w in at.windows(2) {
                app.push(&t[w[0]..w[1]]);
                prop_assert_eq!(app.tokens().collect::<Vec<_>>(), tok.encode(&t[..w[1]]));
                prop_assert_eq!(app.count(), tok.count(&t[..w[1]]));
            }
            let mut pre = PrependableEncoder::new(tok);
            for w in at.windows(2).rev() {
                pre.push_front(&t[w[0]..w[1]]);
                prop_assert_eq!(pre.tokens().collect::<Vec<_>>(), tok.encode(&t[w[0]..]));
            }
            let cut = tok.split_at_tokens(&t, n);
            let longest = (0..=t.len())
                .rev()
                .filter(|&i| t.is_char_boundary(i))
                .find(|&i| tok.count(&t[..i]) <= n)
                .unwrap_or(0);
            prop_assert_eq!(cut, longest, "{:?} at {} tokens", t, n);
            let chunks = tok.chunks(&t, n.max(1), Boundary::Char);
            let mut end = 0;
            for c in &chunks {
                prop_assert_eq!(c.range.start, end);
                prop_assert_eq!(c.tokens, tok.count(&t[c.range.clone()]));
                end = c.range.end;
            }
            prop_assert_eq!(end, t.len());
        }
    }
}

#[test]
fn neighbours_of_a_dropped_byte_merge_and_an_unknown_token_blocks_them() {
    for case in cases() {
        let (tok, v) = (&case.tok, &case.vocab);
        assert!(tok.has_linear_encoder(), "the backtracking encoder takes such vocabularies");
        // A merge of two single letters: `l q r` is one piece (letters).
        let (l, r) = *v
            .merges
            .iter()
            .find(|&&(l, r)| {
                let (l, r) = (&v.tokens[l as usize], &v.tokens[r as usize]);
                l.len() == 1
                    && r.len() == 1
                    && l[0].is_ascii_lowercase()
                    && r[0].is_ascii_lowercase()
            })
            .expect("the vocabulary merges two letters");
        let text: String = [v.tokens[l as usize][0], b'q', v.tokens[r as usize][0]]
            .iter()
            .map(|&b| b as char)
            .collect();
        assert_eq!(tok.pieces_of(&text).len(), 1);
        let ids = tok.encode(&text);
        match v.unk {
            None => {
                let joined = [v.tokens[l as usize].clone(), v.tokens[r as usize].clone()].concat();
                assert_eq!(tok.decode(&ids).unwrap(), joined, "{text:?}");
                assert_eq!(ids.len(), 1, "{text:?} merges across the dropped byte");
            }
            Some(unk) => assert_eq!(ids, [l, unk, r], "{text:?}"),
        }
        // Only missing bytes: nothing, or unknown tokens.
        let ids = tok.encode("\u{4}\u{4}\u{1d}");
        match v.unk {
            None => assert!(ids.is_empty()),
            Some(unk) if v.fuse_unk => assert_eq!(ids, [unk]),
            Some(unk) => assert_eq!(ids, [unk; 3]),
        }
    }
}

#[test]
fn tokens_holding_missing_bytes_only_come_from_whole_pieces() {
    for case in cases() {
        let (tok, v) = (&case.tok, &case.vocab);
        let id = v.tokens.iter().position(|t| t == b"aq").unwrap() as u32;
        let ids = tok.encode("aq");
        assert_eq!(ids == [id], v.ignore_merges, "{ids:?}");
        assert!(!tok.encode("aqaqaq aq").contains(&id) || v.ignore_merges);
    }
}
