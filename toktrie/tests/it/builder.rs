//! The builder: errors for bad vocabularies, and the edge cases it accepts
//! (duplicates, empty tokens, holes, several EOS ids, 0xFF bytes).

use toktrie::{BuildError, MAX_TOKEN_LEN, TokTrie, TokTrieBuilder, TokenId, TokenKind, TokenSet};

use crate::dfa::Dfa;

fn id(i: u32) -> TokenId {
    TokenId(i)
}

#[test]
fn bad_vocabularies_are_errors() {
    let err = |b: TokTrieBuilder| b.build().unwrap_err();
    assert_eq!(
        err(TokTrieBuilder::new().vocab_size(2).token(id(2), b"a")),
        BuildError::IdOutOfRange { id: id(2), vocab_size: 2 }
    );
    assert_eq!(
        err(TokTrieBuilder::new().token(id(0), b"a").token(id(0), b"b")),
        BuildError::DuplicateId { id: id(0) }
    );
    assert_eq!(
        err(TokTrieBuilder::new().token(id(0), b"a").special(id(0), "<s>")),
        BuildError::DuplicateId { id: id(0) }
    );
    assert!(matches!(
        err(TokTrieBuilder::new().token(id(0), &vec![b'x'; MAX_TOKEN_LEN + 1])),
        BuildError::TokenTooLong { .. }
    ));
    assert!(matches!(
        err(TokTrieBuilder::new().vocab_size(usize::MAX)),
        BuildError::VocabTooLarge { .. }
    ));
    assert!(matches!(
        err(TokTrieBuilder::new().special(id(0), "<s>").special(id(1), "<s>")),
        BuildError::DuplicateSpecialName { .. }
    ));
    assert_eq!(
        err(TokTrieBuilder::new().special(id(3), "")),
        BuildError::EmptySpecialName { id: id(3) }
    );
    assert_eq!(
        err(TokTrieBuilder::new().vocab_size(5).token(id(0), b"a").eos(id(4))),
        BuildError::EosNotInVocab { id: id(4) }
    );
    assert_eq!(
        err(TokTrieBuilder::new().token(id(0), b"a").eos(id(9))),
        BuildError::EosNotInVocab { id: id(9) }
    );
    assert!(matches!(
        err(TokTrieBuilder::new().token(id(0), b"a").eos_name("</s>")),
        BuildError::UnknownEosName { .. }
    ));
    // Errors say which token.
    let msg = err(TokTrieBuilder::new().token(id(7), b"a").token(id(7), b"a")).to_string();
    assert!(msg.contains('7'), "{msg}");
}

#[test]
fn edge_cases_are_handled() {
    let long = vec![b'x'; MAX_TOKEN_LEN];
    let trie = TokTrieBuilder::new()
        .vocab_size(10)
        .token(id(0), b"ab")
        .token(id(1), b"ab") // duplicate bytes
        .token(id(2), b"") // empty token
        .token(id(3), &[0xFF]) // 0xFF is an ordinary byte too
        .token(id(4), &long)
        .special(id(5), "<|endoftext|>")
        .special(id(6), "<|eot_id|>")
        .eos_name("<|eot_id|>")
        .eos(id(5))
        .token(id(8), b"a")
        .build()
        .unwrap();
    assert_eq!(trie.vocab_size(), 10);
    assert_eq!(trie.kind(id(7)), TokenKind::Hole);
    assert_eq!(trie.kind(id(9)), TokenKind::Hole);
    assert_eq!(trie.kind(id(99)), TokenKind::Hole);
    assert_eq!(trie.eos_tokens(), &[id(5), id(6)]);
    assert_eq!(trie.token_id(b"ab"), Some(id(0)));
    assert_eq!(trie.same_bytes(id(1)), vec![id(0), id(1)]);
    assert_eq!(trie.token_id(b""), None);
    assert_eq!(trie.token_id(&[0xFF]), Some(id(3)));
    assert_eq!(trie.token_id(&long), Some(id(4)));
    assert_eq!(trie.max_token_len(), MAX_TOKEN_LEN);
    // The marker form of a special is not ordinary text.
    let marker = trie.special_marker(id(5)).unwrap();
    assert_eq!(trie.token_id(&marker), None);
    assert_eq!(trie.special_by_marker(&marker), Some(id(5)));
    assert_eq!(trie.decode(&[id(8), id(5), id(3), id(7)]), b"a\xFF");

    // Accept-everything allows every non-empty ordinary token, both
    // duplicates, the specials it is asked about, and nothing else.
    let mut dfa = Dfa::from_fn(1, |_, _| Some(0));
    dfa.specials = vec![id(6)];
    let mut mask = TokenSet::full(70);
    trie.compute_mask(&mut dfa.recognizer(), &mut mask);
    let got: Vec<u32> = mask.iter().map(|t| t.0).collect();
    assert_eq!(got, [0, 1, 3, 4, 6, 8]);
    assert_eq!(mask, dfa.brute_force(&trie, 70));

    // A mask shorter than the vocabulary grows.
    let mut short = TokenSet::new(2);
    trie.compute_mask(&mut dfa.recognizer(), &mut short);
    assert_eq!(short.len(), 10);
}

#[test]
fn empty_vocabularies_work() {
    for trie in
        [TokTrie::from_token_bytes::<&[u8]>(&[]).unwrap(), TokTrieBuilder::new().build().unwrap()]
    {
        assert_eq!(trie.vocab_size(), 0);
        assert_eq!(trie.num_nodes(), 1);
        let mut mask = TokenSet::new(0);
        let dfa = Dfa::from_fn(1, |_, _| Some(0));
        trie.compute_mask(&mut dfa.recognizer(), &mut mask);
        assert!(mask.is_empty());
        assert_eq!(trie.greedy_tokenize(b""), Ok(vec![]));
        assert_eq!(trie.greedy_tokenize(b"a").unwrap_err().offset, 0);
    }
}

#[test]
fn a_dyn_recognizer_walks_too() {
    let trie = TokTrie::from_token_bytes(&["1", "12", "a"]).unwrap();
    let dfa = Dfa::from_fn(1, |_, b| b.is_ascii_digit().then_some(0));
    let mut r = dfa.recognizer();
    let dyn_r: &mut dyn toktrie::Recognizer = &mut r;
    let mut mask = TokenSet::new(3);
    trie.compute_mask(dyn_r, &mut mask);
    assert_eq!(mask.iter().map(|t| t.0).collect::<Vec<_>>(), [0, 1]);
}
