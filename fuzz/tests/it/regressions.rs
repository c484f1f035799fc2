//! Minimized failures found by fuzz campaigns, kept as tests.

use fuzz::Target;

/// Runs `input` on `target`: it must not fail (panic or break a property).
fn replay(target: Target, input: &[u8]) {
    if let Err(e) = target.run(input) {
        panic!("{}: {e} on {:?}", target.name(), String::from_utf8_lossy(input));
    }
}

#[test]
fn hostile_regexes_do_not_fail() {
    for rx in ["((a*){100}){100}b", "(a?){0,100000}", "\\d{1,100000}", "[", "(?<=a)b", "a{2,1}"] {
        replay(Target::Regex, rx.as_bytes());
    }
}

/// Found by the 10-million regex campaign of 2026-11-26 (seed 20261126):
/// derivre's alternation simplifier panics on this pattern while the lexer
/// builds it; it is now a compile error naming the engine.
#[test]
fn derivre_construction_panic_is_an_error() {
    replay(Target::Regex, b"wohello|wo()hello");
    let e = structgen::Grammar::compile(
        &structgen::GrammarSpec::Regex("wohello|wo()hello".into()),
        &Default::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("derivre"), "{e}");
}

/// Found by the first long campaign (`slow-*`: seconds per input): one id
/// in the millions beside a few hundred tokens made every per-id table
/// that large (1.6–6.2 s and hundreds of MB per input). Such vocabularies
/// are now refused before any table is built.
#[test]
fn sparse_vocabulary_ids_are_refused() {
    let mut ranks = Target::Tiktoken.builtin_seeds().pop().expect("the byte-rank seed");
    ranks.extend_from_slice(b"YWJj 2868614\n");
    assert_eq!(Target::Tiktoken.run(&ranks), Ok(false));
    let json = Target::TokenizerJson.builtin_seeds().pop().expect("the tokenizer.json seed");
    let text = String::from_utf8(json).unwrap().replacen("\"n\":110", "\"n\":5555110", 1);
    assert!(text.contains("5555110"));
    assert_eq!(Target::TokenizerJson.run(text.as_bytes()), Ok(false));
}
