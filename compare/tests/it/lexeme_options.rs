//! Differential tests of the Lark lexeme options `stop=` (hidden stop text,
//! and `stop=""`: the EOS token ends the lexeme) and `max_tokens=N`
//! against llguidance 1.9.1: masks token for token at every step of an
//! input and of seeded random walks (o200k, and Llama-3 when
//! `../shared/data` is present), and the backtrack llguidance reports
//! with backtracking enabled. The documented difference (llguidance ends
//! a lexeme at its token limit even when its text does not match) has its
//! own test showing which side is right.

use structgen::Backtrack;
use toktrie::TokenId;

use crate::mask::{
    Vocab, check, check_steps, encode, peer_matcher, random_walk, vocab, vocabularies,
};

fn lark(src: &str) -> (earley::Grammar, llguidance::api::TopLevelGrammar) {
    let ours = grammar::lark::compile(src, &grammar::Config::default())
        .unwrap_or_else(|e| panic!("{src}: {e}"));
    (ours, llguidance::api::TopLevelGrammar::from_lark(src.to_string()))
}

/// Grammars with `stop=` and a valid input for each (tokenized so that no
/// token goes past a stop text, which neither engine allows).
const STOP_CASES: &[(&str, &str)] = &[
    ("start: a \"X\"\na[stop=\"\\n\"]: /[a-z ]*/", "hello world\nX"),
    // A stop that the text after the rule starts with: lexed again, no
    // backtracking, and a token may go on past it.
    ("start: a \"\\n\\nok\"\na[stop=\"\\n\"]: /[a-z ]*/", "hello world\n\nok"),
    ("start: a \"X\"\na[stop=/[;!]/]: /[a-z ]*/", "hi there!X"),
    ("start: a \" ok\"\na[stop=END]: /[a-z ]*/\nEND: \"</e>\"", "hi there</e> ok"),
    ("start: a b\na[stop=\"\\n\"]: /[a-z ]*/\nb[stop=\".\"]: /[0-9]+/", "some words\n123."),
    ("start: (a \" \")+\na[stop=\";\"]: /[a-z]+/", "ab; cd; "),
    ("start: a \" end\"\na[stop=\"--\"]: /[^-]*/", "hello world-- end"),
    ("start: x\nx: \"(\" a \")\" | a\na[stop=\"\\n\"]: /[a-z]+/", "(inner\n)"),
    // A stop lexeme beside a greedy one matching the same text.
    ("start: a \"X\" | B \"Y\"\na[stop=\";\"]: /[a-z]*/\nB: /[a-z]+;[a-z]*/", "abc;X"),
    ("start: a \"X\" | B \"Y\"\na[stop=\";\"]: /[a-z]*/\nB: /[a-z]+[;:][a-z]*/", "abc:dY"),
    // A one-word stop regex and a stop terminal that what follows starts with.
    ("start: a \"--ok\"\na[stop=/--/]: /[a-z ]*/", "hello--ok"),
    // With `%ignore` around it.
    ("start: \"(\" a \")\"\na[stop=\";\"]: /[a-z]+/\n%ignore \" \"", "( abc; )"),
];

#[test]
fn stop_masks_equal_llguidance() {
    for v in vocabularies() {
        for (i, &(src, input)) in STOP_CASES.iter().enumerate() {
            let (ours, peer) = lark(src);
            check(&v, src, peer, &ours, &encode(&v, input));
            let (_, peer) = lark(src);
            random_walk(&v, src, peer, &ours, 500 + i as u64, 12);
        }
    }
}

/// llguidance's token environment over o200k with canonical tokenization
/// (its backtracking requires forced tokens, which require it).
struct CanonEnv {
    trie: peer_toktrie::TokTrie,
    tokenizer: bpe::Tokenizer,
}

impl peer_toktrie::TokenizerEnv for CanonEnv {
    fn tok_trie(&self) -> &peer_toktrie::TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        self.tokenizer.encode(&String::from_utf8_lossy(s))
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

/// llguidance's `TokenParser` with backtracking on.
fn backtracking_peer(v: &Vocab, src: &str) -> llguidance::TokenParser {
    let env = CanonEnv { trie: v.peer.tok_trie().clone(), tokenizer: bpe::Tokenizer::o200k_base() };
    let caps = peer_toktrie::InferenceCapabilities {
        ff_tokens: true,
        backtrack: true,
        ..Default::default()
    };
    let env: peer_toktrie::TokEnv = std::sync::Arc::new(env);
    let mut factory = llguidance::ParserFactory::new(&env, caps, &[]).unwrap();
    factory.quiet();
    let grammar = llguidance::api::TopLevelGrammar::from_lark(src.to_string());
    let mut p = factory.create_parser(grammar).unwrap();
    p.start_without_prompt();
    p
}

/// At every token, the number of tokens to take back equals the one
/// llguidance's `consume_token` returns with backtracking enabled, and the
/// next masks agree (after llguidance's backtrack, its text is ours).
#[test]
fn stop_backtrack_equals_llguidance() {
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    let cases = [
        (STOP_CASES[0].0, vec!["hello", " world", "\n", "X"], vec![0, 0, 1, 0]),
        (STOP_CASES[1].0, vec!["hello", " world", "\n\n", "ok"], vec![0, 0, 0, 0]),
        (STOP_CASES[3].0, vec!["hi", " there", "</", "e", ">", " ok"], vec![0, 0, 0, 0, 3, 0]),
        (STOP_CASES[4].0, vec!["some", " words", "\n", "123", "."], vec![0, 0, 1, 0, 1]),
    ];
    let id = |s: &str| {
        TokenId(
            (0..v.tokenizer.vocab_size() as u32)
                .find(|&i| v.tokenizer.token_bytes(i) == Some(s.as_bytes()))
                .unwrap_or_else(|| panic!("no token {s:?}")),
        )
    };
    for (src, tokens, want) in cases {
        let (ours, _) = lark(src);
        let mut mine = crate::mask::matcher(&v, &ours);
        let mut theirs = backtracking_peer(&v, src);
        for (step, (tok, want)) in tokens.iter().zip(want).enumerate() {
            let t = id(tok);
            assert!(mine.compute_mask().unwrap().contains(t), "{src}: {tok:?} at {step}");
            mine.consume_token(t).unwrap();
            let peer_bt = theirs.consume_token(t.0).unwrap();
            let bt = mine.backtrack();
            assert_eq!((bt.tokens, peer_bt), (want, want), "{src}: step {step} ({tok:?}): {bt:?}");
            if want > 0 {
                assert_eq!(bt.hidden + bt.visible, tokens[step + 1 - want..=step].concat().len());
            }
        }
        assert!(mine.is_accepting(), "{src}");
        assert!(theirs.is_accepting(), "{src}");
    }
    // A stop over two tokens: both are taken back, the letters of the
    // first stay visible.
    let (ours, _) = lark("start: a \"X\"\na[stop=\"ng--\"]: /[a-z ]*/");
    let mut m = crate::mask::matcher(&v, &ours);
    m.consume_tokens(&[id("hello"), id(" sing"), id("--")]).unwrap();
    assert_eq!(m.backtrack(), Backtrack { tokens: 2, hidden: 4, visible: 3 });
    m.rollback(1);
    assert_eq!(m.backtrack(), Backtrack::default());
}

/// `stop=""`: EOS is allowed where the lexeme matches and ends it; the
/// grammar then goes on.
#[test]
fn eos_stop_masks_equal_llguidance() {
    for v in vocabularies() {
        let eos = v.trie.eos_tokens()[0];
        for (src, text, after, complete) in [
            ("start: a \"X\"\na[stop=\"\"]: /[a-z ]*/", "hello world", "X", true),
            ("start: a\na[stop=\"\"]: /[a-z ]*/", "hello world", "", true),
            ("start: a b\na[stop=\"\"]: /[a-z ]+/\nb: \"1\" | \"22\"", "abc def", "22", true),
            ("start: a \"X\"\na[stop=\"\"]: /[a-z ]*/", "hello", "", false),
        ] {
            let mut tokens = encode(&v, text);
            tokens.push(eos);
            tokens.extend(encode(&v, after));
            let (ours, peer) = lark(src);
            check_steps(&v, src, peer, &ours, &tokens, complete);
        }
    }
}

/// Grammars with `max_tokens=` and valid inputs.
const MAX_TOKENS_CASES: &[(&str, &str)] = &[
    ("start: a \"!\"\na[max_tokens=3]: /[a-z ]+/", "hello big world!"),
    ("start: a \"!\"\na[max_tokens=3]: /[a-z ]+/", "hi!"),
    ("start: a b\na[max_tokens=2]: /[a-z]+/\nb: /[a-z0-9]+/", "helloworld12"),
    ("start: (w \",\")+\nw[max_tokens=2]: /[a-z]+/", "hello,ab,x,"),
    ("start: w (\" \" w)*\nw[max_tokens=1]: /[a-z]+/", "the quick brown fox"),
    ("start: a a\na[max_tokens=2]: /[0-9]+/ | /[a-z]+/", "123abc"),
];

#[test]
fn max_tokens_masks_equal_llguidance() {
    for v in vocabularies() {
        for (i, &(src, input)) in MAX_TOKENS_CASES.iter().enumerate() {
            let (ours, peer) = lark(src);
            check(&v, src, peer, &ours, &encode(&v, input));
            let (_, peer) = lark(src);
            random_walk(&v, src, peer, &ours, 700 + i as u64, 10);
        }
    }
}

/// Documented difference: at its token limit llguidance ends a lexeme
/// even when its text does not match the lexeme's regex, so it accepts
/// `abc?` under `a[max_tokens=2]: /[a-z]+!/` followed by `"?"`, although
/// `abc` does not match `[a-z]+!`. Ours leaves out of the second token's
/// mask every token after which the lexeme could not end, and keeps the
/// ones after which it can (`c!`-like tokens); everything else agrees.
#[test]
fn max_tokens_ends_only_matching_lexemes() {
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    let src = "start: a \"?\"\na[max_tokens=2]: /[a-z]+!/";
    let (ours, peer) = lark(src);
    let grammar_accepts = |text: &str| ours.accepts(text.as_bytes()).unwrap();
    assert!(!grammar_accepts("abc?"));
    assert!(grammar_accepts("abc!?"));
    let mut theirs = peer_matcher(&v, peer);
    let mut mine = crate::mask::matcher(&v, &ours);
    let ab = encode(&v, "ab")[0];
    let c = encode(&v, "c")[0];
    mine.consume_token(ab).unwrap();
    theirs.consume_token(ab.0).unwrap();
    let my_mask = mine.compute_mask().unwrap().clone();
    let their_mask = theirs.compute_mask().unwrap();
    // llguidance allows `c` and then forces the end of the lexeme.
    assert!(their_mask.is_allowed(c.0));
    theirs.consume_token(c.0).unwrap();
    let q = encode(&v, "?")[0];
    assert!(theirs.compute_mask().unwrap().is_allowed(q.0));
    theirs.consume_token(q.0).unwrap();
    assert!(theirs.is_accepting().unwrap(), "llguidance accepts abc?");
    // Ours: `c` is not allowed; a token ending with `!` is, and every
    // token allowed by ours is allowed by llguidance.
    assert!(!my_mask.contains(c));
    let bang = encode(&v, "!")[0];
    assert!(my_mask.contains(bang));
    for t in my_mask.iter() {
        assert!(their_mask.is_allowed(t.0), "{t:?}");
    }
    for t in my_mask.iter().filter(|&t| t != v.trie.eos_tokens()[0]) {
        let bytes = v.trie.token_bytes(t).unwrap();
        assert!(bytes.contains(&b'!'), "{:?}", String::from_utf8_lossy(bytes));
    }
    assert!(mine.consume_token(c).is_err());
}

/// A stop regex of several words longer than one byte, where the text
/// after the rule starts with one of them: the front-end makes one lexeme
/// per word, so the walk knows the hidden word and re-lexes it, as
/// llguidance does (a token may go on past it). A stop of many or
/// unbounded words stays one lexeme, whose walk ends the token at the stop
/// text there (the documented difference, shown with `/[;!]{2,40}/`);
/// after the token, the word is lexed again from the consumed bytes, and
/// both engines accept the same text.
#[test]
fn regex_stop_words_are_relexed() {
    for v in vocabularies() {
        let src = "start: a \";;\\n\"\na[stop=/;;|!!/]: /[a-z ]*/";
        let (ours, peer) = lark(src);
        let mut tokens = encode(&v, "hello");
        tokens.extend(encode(&v, ";;"));
        tokens.extend(encode(&v, "\n"));
        check(&v, src, peer, &ours, &tokens);
        let (_, peer) = lark(src);
        random_walk(&v, src, peer, &ours, 950, 8);

        let src = "start: a \";;\\n\"\na[stop=/[;!]{2,40}/]: /[a-z ]*/";
        let (ours, peer) = lark(src);
        let mut theirs = peer_matcher(&v, peer);
        let mut mine = crate::mask::matcher(&v, &ours);
        let mut differences = 0;
        for (step, &t) in tokens.iter().enumerate() {
            let my_mask = mine.compute_mask().unwrap().clone();
            let their_mask = theirs.compute_mask().unwrap();
            for id in 0..v.tokenizer.vocab_size() as u32 {
                if my_mask.contains(TokenId(id)) == their_mask.is_allowed(id) {
                    continue;
                }
                let bytes = v.tokenizer.token_bytes(id).unwrap_or(&[]);
                assert!(
                    their_mask.is_allowed(id)
                        && bytes
                            .windows(2)
                            .position(|w| w == b";;")
                            .is_some_and(|i| i + 2 < bytes.len()),
                    "{} step {step}: {:?}",
                    v.name,
                    String::from_utf8_lossy(bytes)
                );
                differences += 1;
            }
            mine.consume_token(t).unwrap();
            theirs.consume_token(t.0).unwrap();
        }
        assert!(mine.is_accepting() && theirs.is_accepting().unwrap());
        assert!(differences > 0, "{}: `;;\\n` is one token", v.name);
        println!("KNOWN DIFFERENCE: {src:?} on {}: {differences} tokens past `;;`", v.name);
    }
}

/// `%llguidance {"ignore_once": true}`: the `%ignore` regex describes the
/// whole skipped span at a boundary (here at most two spaces), instead of
/// matching again and again.
#[test]
fn ignore_once_masks_equal_llguidance() {
    for v in vocabularies() {
        for (i, (src, input)) in [
            (
                "%llguidance {\"ignore_once\": true}\nstart: w+\nw: /[a-z]+/ \",\"\n%ignore /[ ]{1,2}/",
                "ab,  cd, e,",
            ),
            (
                "%llguidance {\"ignore_once\": true}\nstart: w+\nw: /[a-z]+/ \";\"\n%ignore /[ \\n]/",
                "ab; cd;\nef;",
            ),
            ("%llguidance {\"ignore_once\": false}\nstart: w+\nw: /[a-z]+/ \",\"\n%ignore \" \"", "ab,    cd,"),
        ]
        .into_iter()
        .enumerate()
        {
            let (ours, peer) = lark(src);
            check(&v, src, peer, &ours, &encode(&v, input));
            let (_, peer) = lark(src);
            random_walk(&v, src, peer, &ours, 900 + i as u64, 12);
        }
        // Three spaces: one match too many.
        let (ours, _) = lark(
            "%llguidance {\"ignore_once\": true}\nstart: w+\nw: /[a-z]+/ \",\"\n%ignore /[ ]{1,2}/",
        );
        assert!(ours.accepts(b"ab,  cd,").unwrap());
        assert!(!ours.accepts(b"ab,   cd,").unwrap());
    }
}

/// `temperature=` alone changes no mask, but llguidance compiles the rule
/// as one lexeme (no `%ignore` inside it), and so do we.
#[test]
fn temperature_rule_is_one_lexeme() {
    for v in vocabularies() {
        let src = "start: x \" b\"\nx[temperature=0.5]: \"a\" \"a\"\n%ignore \" \"";
        let (ours, peer) = lark(src);
        check(&v, src, peer, &ours, &encode(&v, "aa b"));
        assert!(!ours.accepts(b"a a b").unwrap());
    }
    // A rule reference in its body: both engines reject it.
    let src = "start: x\nx[temperature=0.5]: y\ny: \"a\"";
    assert!(grammar::lark::compile(src, &grammar::Config::default()).is_err());
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    let factory = compare::peer::llg_factory(&v.peer, &[]).unwrap();
    let peer = factory.create_parser(llguidance::api::TopLevelGrammar::from_lark(src.into()));
    assert!(peer.is_err());
}

/// Documented difference (an llguidance bug): when a stop text spread over
/// several tokens is lexed again as the start of what follows, llguidance
/// 1.9.1 panics inside its parser ("num_rows=2 row_infos=1", caught and
/// returned as an error); its masks before agree with ours, and ours goes
/// on and accepts the text, as the grammar says.
#[test]
fn forced_stop_over_several_tokens_llguidance_fails() {
    let v = vocab("o200k", bpe::Tokenizer::o200k_base());
    let src = "start: a \"</e> ok\"\na[stop=END]: /[a-z ]*/\nEND: \"</\" \"e>\"";
    let (ours, peer) = lark(src);
    assert!(ours.accepts(b"hi</e> ok").unwrap());
    let tokens = encode(&v, "hi</e> ok");
    let mut theirs = peer_matcher(&v, peer);
    let mut mine = crate::mask::matcher(&v, &ours);
    let mut failed_at = None;
    for (step, &t) in tokens.iter().enumerate() {
        let my_mask = mine.compute_mask().unwrap().clone();
        assert!(my_mask.contains(t), "step {step}");
        if failed_at.is_none() {
            match theirs.compute_mask() {
                Ok(m) => {
                    for id in 0..v.tokenizer.vocab_size() as u32 {
                        assert_eq!(
                            my_mask.contains(TokenId(id)),
                            m.is_allowed(id),
                            "step {step}: {id}"
                        );
                    }
                    if let Err(e) = theirs.consume_token(t.0) {
                        assert!(e.to_string().contains("panic"), "{e}");
                        failed_at = Some(step);
                    }
                }
                Err(e) => {
                    assert!(e.to_string().contains("panic"), "{e}");
                    failed_at = Some(step);
                }
            }
        }
        mine.consume_token(t).unwrap();
    }
    assert!(failed_at.is_some(), "llguidance no longer fails: compare the masks in STOP_CASES");
    assert!(mine.is_accepting());
    println!("KNOWN DIFFERENCE: {src:?}: llguidance panics at step {failed_at:?}; ours accepts");
}
