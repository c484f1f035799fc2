//! Property tests: random small vocabularies and random DFAs; every fast path
//! against a per-token brute-force oracle.

use std::collections::BTreeSet;

use proptest::prelude::*;
use toktrie::{TokTrie, TokTrieBuilder, TokenId, TokenKind, TokenSet};

use crate::dfa::Dfa;

/// A few bytes, 0x00 and 0xFF included, so that paths collide often.
pub(crate) const ALPHABET: &[u8] = &[b'a', b'b', b'c', 0x00, 0x80, 0xFF];

#[derive(Clone, Debug)]
pub(crate) enum Entry {
    Hole,
    Ordinary(Vec<u8>),
    Special { eos: bool },
}

pub(crate) fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        1 => Just(Entry::Hole),
        8 => prop::collection::vec(prop::sample::select(ALPHABET), 0..6).prop_map(Entry::Ordinary),
        1 => any::<bool>().prop_map(|eos| Entry::Special { eos }),
    ]
}

pub(crate) fn build(entries: &[Entry]) -> TokTrie {
    let mut b = TokTrieBuilder::new().vocab_size(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let id = TokenId(i as u32);
        match e {
            Entry::Hole => {}
            Entry::Ordinary(bytes) => b = b.token(id, bytes),
            Entry::Special { eos } => {
                b = b.special(id, &format!("<|s{i}|>"));
                if *eos {
                    b = b.eos(id);
                }
            }
        }
    }
    b.build().unwrap()
}

/// A random DFA over [`ALPHABET`] with up to 5 states.
fn dfa(vocab: usize) -> impl Strategy<Value = Dfa> {
    (1u32..6).prop_flat_map(move |states| {
        let cells = states as usize * ALPHABET.len();
        (
            prop::collection::vec(prop::option::weighted(0.7, 0..states), cells),
            prop::collection::vec(any::<bool>(), vocab),
        )
            .prop_map(move |(moves, specials)| {
                let mut d = Dfa::from_fn(states, |s, b| {
                    let k = ALPHABET.iter().position(|&a| a == b)?;
                    moves[s as usize * ALPHABET.len() + k]
                });
                d.specials = specials
                    .iter()
                    .enumerate()
                    .filter(|p| *p.1)
                    .map(|p| TokenId(p.0 as u32))
                    .collect();
                d
            })
    })
}

fn vocab_and_dfa() -> impl Strategy<Value = (Vec<Entry>, Dfa, usize)> {
    prop::collection::vec(entry(), 0..40).prop_flat_map(|entries| {
        let n = entries.len();
        (Just(entries), dfa(n), 0usize..70)
    })
}

fn ordinary(trie: &TokTrie) -> Vec<(TokenId, &[u8])> {
    (0..trie.vocab_size() as u32)
        .filter_map(|i| Some((TokenId(i), trie.token_bytes(TokenId(i))?)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn walk_equals_brute_force((entries, dfa, pad) in vocab_and_dfa()) {
        let trie = build(&entries);
        let len = trie.vocab_size() + pad;
        let mut mask = TokenSet::full(len);
        let mut r = dfa.recognizer();
        trie.compute_mask(&mut r, &mut mask);
        prop_assert_eq!(&mask, &dfa.brute_force(&trie, len));
        prop_assert_eq!(r.stack.len(), 1);
        prop_assert_eq!(r.pushes, r.pops);
        // Never more pushes than nodes.
        prop_assert!(r.pushes < trie.num_nodes());
    }

    #[test]
    fn state_walk_equals_brute_force((entries, dfa, pad) in vocab_and_dfa()) {
        let trie = build(&entries);
        let len = trie.vocab_size() + pad;
        let mut mask = TokenSet::full(len);
        let mut r = dfa.state_recognizer(0);
        trie.compute_mask_by_state(&mut r, &mut mask);
        prop_assert_eq!(&mask, &dfa.brute_force(&trie, len));
        // The same nodes as the push/pop walk, each stepped once.
        let mut pushes = dfa.recognizer();
        trie.compute_mask(&mut pushes, &mut TokenSet::new(0));
        prop_assert_eq!(r.accepted, pushes.pushes);
        prop_assert_eq!(r.finished, 1);
        prop_assert!(r.steps < trie.num_nodes());
    }

    #[test]
    fn state_sub_trie_walk_equals_brute_force((entries, dfa, _pad) in vocab_and_dfa()) {
        let trie = build(&entries);
        let mut prefixes: BTreeSet<Vec<u8>> = BTreeSet::new();
        for (_, bytes) in ordinary(&trie) {
            for k in 0..=bytes.len() {
                prefixes.insert(bytes[..k].to_vec());
            }
        }
        for prefix in prefixes {
            let mut r = dfa.recognizer();
            if !r.push_all(&prefix) {
                continue;
            }
            let mut mask = trie.token_set();
            let mut s = dfa.state_recognizer(*r.stack.last().unwrap());
            trie.add_extensions_to_mask_by_state(&mut s, &mut mask, &prefix);
            let mut want = trie.token_set();
            for (id, bytes) in ordinary(&trie) {
                if bytes.len() > prefix.len() && bytes.starts_with(&prefix) && dfa.accepts_all(bytes) {
                    want.insert(id);
                }
            }
            prop_assert_eq!(mask, want, "prefix {:?}", prefix);
        }
    }

    #[test]
    fn sub_trie_walk_equals_brute_force((entries, dfa, _pad) in vocab_and_dfa()) {
        let trie = build(&entries);
        let mut prefixes: BTreeSet<Vec<u8>> = BTreeSet::new();
        for (_, bytes) in ordinary(&trie) {
            for k in 0..=bytes.len() {
                prefixes.insert(bytes[..k].to_vec());
            }
        }
        prefixes.insert(b"zz".to_vec());
        for prefix in prefixes {
            let mut r = dfa.recognizer();
            if !r.push_all(&prefix) {
                continue;
            }
            let mut mask = trie.token_set();
            trie.add_extensions_to_mask(&mut r, &mut mask, &prefix);
            prop_assert_eq!(r.stack.len(), prefix.len() + 1);
            let mut want = trie.token_set();
            for (id, bytes) in ordinary(&trie) {
                if bytes.len() > prefix.len() && bytes.starts_with(&prefix) && dfa.accepts_all(bytes) {
                    want.insert(id);
                }
            }
            prop_assert_eq!(mask, want, "prefix {:?}", prefix);
        }
    }

    #[test]
    fn subset_walk_is_the_intersection((entries, dfa, _pad) in vocab_and_dfa(), keep_bits in any::<u64>()) {
        let trie = build(&entries);
        let mut keep = trie.token_set();
        for i in 0..trie.vocab_size().min(64) {
            if keep_bits >> i & 1 == 1 {
                keep.insert(TokenId(i as u32));
            }
        }
        let sub = trie.subset(&keep).unwrap();
        let mut sub_mask = TokenSet::new(0);
        sub.compute_mask(&mut dfa.recognizer(), &mut sub_mask);
        let mut want = dfa.brute_force(&trie, 0);
        want.intersect_with(&keep);
        prop_assert_eq!(sub_mask, want);
        for eos in sub.eos_tokens() {
            prop_assert!(keep.contains(*eos));
        }
    }

    #[test]
    fn lookups_equal_brute_force(entries in prop::collection::vec(entry(), 0..40),
                                 probe in prop::collection::vec(prop::sample::select(ALPHABET), 0..8)) {
        let trie = build(&entries);
        let tokens = ordinary(&trie);
        let non_empty = || tokens.iter().filter(|t| !t.1.is_empty());
        // token_id: the smallest id with exactly these bytes.
        let want = non_empty().find(|t| t.1 == probe.as_slice()).map(|t| t.0);
        prop_assert_eq!(trie.token_id(&probe), want);
        // prefix_tokens: shortest first, duplicates by id.
        let mut want: Vec<(usize, TokenId)> =
            non_empty().filter(|t| probe.starts_with(t.1)).map(|t| (t.1.len(), t.0)).collect();
        want.sort();
        let got: Vec<(usize, TokenId)> =
            trie.prefix_tokens(&probe).into_iter().map(|id| (trie.token_bytes(id).unwrap().len(), id)).collect();
        prop_assert_eq!(got, want);
        // tokens_with_prefix.
        let mut got = TokenSet::new(0);
        trie.tokens_with_prefix(&probe, &mut got);
        let mut want = trie.token_set();
        for t in non_empty().filter(|t| t.1.starts_with(&probe)) {
            want.insert(t.0);
        }
        prop_assert_eq!(got, want);
        // has_extension.
        let want = non_empty().any(|t| t.1.len() > probe.len() && t.1.starts_with(&probe));
        prop_assert_eq!(trie.has_extension(&probe), want);
        // greedy_tokenize: the longest token at each step, or the first
        // offset where none matches.
        let mut pos = 0;
        let mut want = Vec::new();
        let expected = loop {
            if pos == probe.len() {
                break Ok(want);
            }
            match non_empty().filter(|t| probe[pos..].starts_with(t.1)).max_by_key(|t| (t.1.len(), std::cmp::Reverse(t.0))) {
                None => break Err(pos),
                Some(t) => {
                    want.push(t.0);
                    pos += t.1.len();
                }
            }
        };
        prop_assert_eq!(trie.greedy_tokenize(&probe).map_err(|e| e.offset), expected);
    }

    #[test]
    fn kinds_and_specials_round_trip(entries in prop::collection::vec(entry(), 0..40)) {
        let trie = build(&entries);
        for (i, e) in entries.iter().enumerate() {
            let id = TokenId(i as u32);
            match e {
                Entry::Hole => prop_assert_eq!(trie.kind(id), TokenKind::Hole),
                Entry::Ordinary(b) => prop_assert_eq!(trie.token_bytes(id), Some(b.as_slice())),
                Entry::Special { eos } => {
                    let name = format!("<|s{i}|>");
                    prop_assert_eq!(trie.special_name(id), Some(name.as_str()));
                    prop_assert_eq!(trie.special_by_name(&name), Some(id));
                    let marker = trie.special_marker(id).unwrap();
                    prop_assert_eq!(trie.special_by_marker(&marker), Some(id));
                    prop_assert_eq!(trie.eos_tokens().contains(&id), *eos);
                    prop_assert_eq!(trie.token_bytes(id), None);
                }
            }
        }
    }

    #[test]
    fn token_set_equals_a_btree_set(len in 0usize..300,
                                    a in prop::collection::vec(0u32..320, 0..60),
                                    b in prop::collection::vec(0u32..320, 0..60)) {
        let model = |v: &[u32]| -> BTreeSet<u32> { v.iter().copied().filter(|&i| (i as usize) < len).collect() };
        let set = |v: &[u32]| {
            let mut s = TokenSet::new(len);
            for &i in v {
                prop_assert_eq!(s.insert(TokenId(i)), (i as usize) < len);
            }
            Ok(s)
        };
        let (sa, sb) = (set(&a)?, set(&b)?);
        let (ma, mb) = (model(&a), model(&b));
        let items = |s: &TokenSet| s.iter().map(|t| t.0).collect::<Vec<_>>();
        prop_assert_eq!(items(&sa), ma.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(sa.count(), ma.len());
        prop_assert_eq!(sa.is_empty(), ma.is_empty());
        let mut u = sa.clone();
        u.union_with(&sb);
        prop_assert_eq!(items(&u), ma.union(&mb).copied().collect::<Vec<_>>());
        let mut i = sa.clone();
        i.intersect_with(&sb);
        prop_assert_eq!(items(&i), ma.intersection(&mb).copied().collect::<Vec<_>>());
        let mut d = sa.clone();
        d.subtract(&sb);
        prop_assert_eq!(items(&d), ma.difference(&mb).copied().collect::<Vec<_>>());
        prop_assert_eq!(sa.is_subset(&sb), ma.is_subset(&mb));
        let mut n = sa.clone();
        n.negate();
        prop_assert_eq!(n.count(), len - ma.len());
        for x in 0..330u32 {
            prop_assert_eq!(sa.contains(TokenId(x)), ma.contains(&x));
        }
        let mut r = sa.clone();
        r.remove(TokenId(a.first().copied().unwrap_or(0)));
        prop_assert!(!r.contains(TokenId(a.first().copied().unwrap_or(0))));
        // Logits: padded past the set, shorter than the set.
        for logits_len in [0, len / 2, len, len + 100] {
            let mut logits = vec![1.0f32; logits_len];
            sa.apply_to_logits(&mut logits);
            for (k, l) in logits.iter().enumerate() {
                prop_assert_eq!(*l == 1.0, ma.contains(&(k as u32)), "logit {}", k);
            }
        }
    }
}
