//! `toktrie` against the peers: llguidance's `toktrie` 1.9.1 (`peer_toktrie`)
//! gives the same masks for the same vocabularies and random DFAs; and every
//! shared `tokenizer.json` loads (through `bpe` and the umbrella's
//! `toktrie_from_tokenizer`) into a trie whose token bytes decode, through
//! Hugging Face `tokenizers`' own decoder, to the same text.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::{TokTrieBuilder, TokenId, TokenKind};

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

/// Ids checked per tokenizer, beyond the first 300 and every special.
const SAMPLE: usize = 3000;

#[test]
fn every_shared_tokenizer_loads_and_its_token_bytes_round_trip() {
    let Some(dir) = compare::shared::data_dir_or_skip("tokenizer.json vocabulary tries") else {
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(dir.join("tokenizers"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tokenizer.json.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tokenizer.json files in shared/data/tokenizers");
    for file in files {
        let json = compare::shared::read(&format!("tokenizers/{file}")).unwrap();
        let ours = std::sync::Arc::new(
            bpe::Tokenizer::from_tokenizer_json(&json)
                .unwrap_or_else(|e| panic!("{file}: bpe cannot load it: {e}")),
        );
        let vocab = structgen::Vocabulary::builder()
            .tokenizer(ours.clone())
            .slicer(None)
            .build()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let trie = vocab.trie();
        let hf = tokenizers::Tokenizer::from_bytes(&json).unwrap();
        assert_eq!(trie.vocab_size(), hf.get_vocab_size(true), "{file}: vocabulary size");
        assert!(!trie.eos_tokens().is_empty(), "{file}: no end-of-sequence token");

        // An anchor token in front keeps SentencePiece decoders from
        // stripping the leading space of the token under test. Of the ids
        // spelling `a`, take the last: SentencePiece's byte-fallback
        // `<0x61>` comes first, and the decoder would fuse it with a
        // following byte token.
        let a = trie.token_id(b"a").unwrap_or_else(|| panic!("{file}: no token `a`"));
        let anchor = *trie.same_bytes(a).last().unwrap();
        let mut rng = SmallRng::seed_from_u64(3);
        let n = trie.vocab_size() as u32;
        let mut ids: Vec<u32> = (0..n.min(300)).collect();
        ids.extend((0..SAMPLE).map(|_| rng.random_range(0..n)));
        ids.extend(trie.specials().map(|(id, _)| id.0));
        let mut checked = 0;
        for id in ids {
            match trie.kind(TokenId(id)) {
                TokenKind::Ordinary => {
                    let bytes = trie.token_bytes(TokenId(id)).unwrap();
                    let mut want = trie.token_bytes(anchor).unwrap().to_vec();
                    want.extend_from_slice(bytes);
                    let got = hf.decode(&[anchor.0, id], false).unwrap();
                    assert_eq!(got, String::from_utf8_lossy(&want), "{file}: token {id}");
                    assert!(trie.same_bytes(TokenId(id)).contains(&TokenId(id)));
                }
                TokenKind::Special => {
                    let got = hf.decode(&[id], false).unwrap();
                    assert_eq!(Some(got.as_str()), trie.special_name(TokenId(id)), "{file}: {id}");
                }
                _ => assert!(hf.id_to_token(id).is_none(), "{file}: id {id} is a hole for us"),
            }
            checked += 1;
        }
        eprintln!(
            "{file}: {} ids, {} nodes, {checked} ids checked",
            trie.vocab_size(),
            trie.num_nodes()
        );
    }
}
