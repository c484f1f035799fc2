//! `toktrie` against llguidance's `toktrie` 1.9.1 (`peer_toktrie`): the same
//! vocabularies and the same random DFAs give the same masks.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::{TokTrieBuilder, TokenId};

const DEAD: u32 = u32::MAX;

/// A random DFA: each of `states` states moves on each byte to a random
/// state with probability `p`, else rejects.
fn random_dfa(rng: &mut SmallRng, states: u32, p: f64) -> Vec<u32> {
    (0..states as usize * 256)
        .map(|_| if rng.random_bool(p) { rng.random_range(0..states) } else { DEAD })
        .collect()
}

/// The DFA with a stack of states, for both crates' `Recognizer` traits.
struct Walker<'a> {
    table: &'a [u32],
    stack: Vec<u32>,
}

impl Walker<'_> {
    fn push(&mut self, byte: u8) -> bool {
        let state = *self.stack.last().unwrap();
        let next = self.table[state as usize * 256 + byte as usize];
        if next == DEAD {
            return false;
        }
        self.stack.push(next);
        true
    }
    fn pop(&mut self, n: usize) {
        assert!(n < self.stack.len(), "popped more than pushed");
        self.stack.truncate(self.stack.len() - n);
    }
}

impl toktrie::Recognizer for Walker<'_> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.push(byte)
    }
    fn pop_bytes(&mut self, n: usize) {
        self.pop(n)
    }
}

impl peer_toktrie::Recognizer for Walker<'_> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.push(byte)
    }
    fn pop_bytes(&mut self, n: usize) {
        self.pop(n)
    }
    fn collapse(&mut self) {
        let top = *self.stack.last().unwrap();
        self.stack.clear();
        self.stack.push(top);
    }
    fn trie_finished(&mut self) {}
}

#[test]
fn masks_equal_llguidance_toktrie_on_o200k_and_cl100k() {
    let mut rng = SmallRng::seed_from_u64(11);
    for tokenizer in [bpe::Tokenizer::o200k_base(), bpe::Tokenizer::cl100k_base()] {
        let n = tokenizer.vocab_size();
        // Ordinary tokens only: the peer keeps specials behind a marker
        // byte, we keep them out of the trie.
        let words: Vec<Vec<u8>> = (0..n as u32)
            .map(|id| match tokenizer.is_special(id) {
                true => Vec::new(),
                false => tokenizer.token_bytes(id).unwrap_or(&[]).to_vec(),
            })
            .collect();
        let ours = TokTrieBuilder::new()
            .vocab_size(n)
            .tokens(words.iter().enumerate().map(|(i, w)| (i as u32, w.as_slice())))
            .build()
            .unwrap();
        let info = peer_toktrie::TokRxInfo::new(n as u32, 0);
        let peer = peer_toktrie::TokTrie::from(&info, &words);
        assert_eq!(ours.num_nodes(), peer.root().subtree_size());
        for (states, p) in [(1, 0.9), (1, 0.3), (3, 0.6), (5, 0.8), (8, 0.95), (2, 0.05)] {
            let table = random_dfa(&mut rng, states, p);
            let mut mask = ours.token_set();
            let mut r = Walker { table: &table, stack: vec![0] };
            ours.compute_mask(&mut r, &mut mask);
            assert_eq!(r.stack.len(), 1);
            let mut peer_mask = peer.alloc_token_set();
            let mut r = Walker { table: &table, stack: vec![0] };
            peer.add_bias(&mut r, &mut peer_mask, &[]);
            let theirs: Vec<u32> = peer_mask.to_list();
            let got: Vec<u32> = mask.iter().map(|t| t.0).collect();
            assert_eq!(got, theirs, "vocabulary of {n}, DFA with {states} states, p = {p}");
            assert!(got.iter().all(|&id| !tokenizer.is_special(id)));
            // The byte-wise check, for the record: every allowed token's
            // bytes run through the DFA.
            for &id in got.iter().take(200) {
                let mut r = Walker { table: &table, stack: vec![0] };
                let bytes = ours.token_bytes(TokenId(id)).unwrap();
                assert!(bytes.iter().all(|&b| r.push(b)));
            }
        }
    }
}
