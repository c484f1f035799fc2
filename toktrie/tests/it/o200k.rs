//! o200k_base (the embedded tiktoken file of the `bpe` crate): the walk with
//! real DFAs equals the per-token brute force.

use base64::Engine;
use toktrie::{TokTrie, TokTrieBuilder, TokenId, TokenSet};

use crate::dfa::Dfa;

/// The rank file, read at compile time from the `bpe` crate's data folder.
const O200K: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../bpe/data/o200k_base.tiktoken"));

/// o200k's ordinary tokens plus its two special tokens.
fn o200k() -> TokTrie {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut tokens = Vec::new();
    for line in O200K.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let text = std::str::from_utf8(line).unwrap();
        let (bytes, rank) = text.split_once(' ').unwrap();
        tokens.push((rank.parse::<u32>().unwrap(), b64.decode(bytes).unwrap()));
    }
    assert_eq!(tokens.len(), 199_998);
    TokTrieBuilder::new()
        .tokens(tokens.iter().map(|(id, b)| (*id, b.as_slice())))
        .special(TokenId(199_999), "<|endoftext|>")
        .special(TokenId(200_018), "<|endofprompt|>")
        .eos_name("<|endoftext|>")
        .build()
        .unwrap()
}

fn digits() -> Dfa {
    Dfa::from_fn(1, |_, b| b.is_ascii_digit().then_some(0))
}

/// `[a-z ]{0,20}`: the state counts the bytes so far.
fn short_words() -> Dfa {
    Dfa::from_fn(21, |s, b| (s < 20 && (b.is_ascii_lowercase() || b == b' ')).then_some(s + 1))
}

/// The rest of a JSON string: `[^"\\\x00-\x1f]*"`.
fn json_string() -> Dfa {
    Dfa::from_fn(2, |s, b| match (s, b) {
        (0, b'"') => Some(1),
        (0, b'\\' | 0x00..=0x1f) => None,
        (0, _) => Some(0),
        _ => None,
    })
}

#[test]
fn o200k_walks_equal_brute_force() {
    let trie = o200k();
    assert_eq!(trie.vocab_size(), 200_019);
    assert_eq!(trie.eos_tokens(), &[TokenId(199_999)]);
    assert!(trie.num_nodes() > trie.vocab_size() && trie.num_nodes() < 4 * trie.vocab_size());
    let mut everything = Dfa::from_fn(1, |_, _| Some(0));
    everything.specials = vec![TokenId(199_999)];
    let padded = 200_064;
    for (name, dfa) in [
        ("everything", everything),
        ("digits", digits()),
        ("words", short_words()),
        ("json", json_string()),
    ] {
        let mut mask = TokenSet::new(padded);
        let mut r = dfa.recognizer();
        trie.compute_mask(&mut r, &mut mask);
        let want = dfa.brute_force(&trie, padded);
        assert_eq!(mask.count(), want.count(), "{name}");
        assert_eq!(mask, want, "{name}");
        assert!(mask.count() > 0, "{name}");
        assert_eq!((r.stack.len(), r.pushes), (1, r.pops), "{name}");
    }
}

#[test]
fn o200k_lookups() {
    let trie = o200k();
    let text = "Hello, world! 12345 «ünïcödé»";
    let ids = trie.greedy_tokenize(text.as_bytes()).unwrap();
    assert_eq!(trie.decode(&ids), text.as_bytes());
    let hello = trie.token_id(b"Hello").unwrap();
    assert!(trie.prefix_tokens(b"Hello, world").contains(&hello));
    assert!(trie.has_extension(b"Hel"));
    let mut set = TokenSet::new(0);
    trie.tokens_with_prefix(b"Hello", &mut set);
    assert!(set.contains(hello));
    assert!(set.iter().all(|t| trie.token_bytes(t).unwrap().starts_with(b"Hello")));
    assert_eq!(trie.special_by_name("<|endofprompt|>"), Some(TokenId(200_018)));
}
