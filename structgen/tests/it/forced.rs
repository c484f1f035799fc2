//! The Matcher's forced tokens: canonical replays of JSON documents under
//! JSON Schemas, the .txt Character example, EOS and whitespace never
//! forced, rollback and prompt healing.

use std::sync::{Arc, OnceLock};

use structgen::{Grammar, GrammarSpec, Matcher, Vocabulary};
use toktrie::TokenId;

struct Env {
    tok: Arc<bpe::Tokenizer>,
    vocab: Vocabulary,
}

fn env() -> &'static Env {
    static E: OnceLock<Env> = OnceLock::new();
    E.get_or_init(|| {
        let tok = Arc::new(bpe::Tokenizer::o200k_base());
        let vocab = Vocabulary::from_tokenizer(tok.clone()).unwrap();
        Env { tok, vocab }
    })
}

fn matcher(schema: &serde_json::Value, options: &jsonschema::Options) -> Matcher {
    let spec = GrammarSpec::JsonSchema { schema: schema.clone(), options: options.clone() };
    let g = Grammar::compile(&spec, &Default::default()).unwrap();
    Matcher::new(&env().vocab, &g).unwrap()
}

fn regex_matcher(rx: &str) -> Matcher {
    Matcher::new(&env().vocab, &Grammar::regex(rx).unwrap()).unwrap()
}

/// What [`replay`] counts.
#[derive(Debug, Default)]
struct Replay {
    tokens: usize,
    forced_tokens: usize,
    model_calls: usize,
    non_canonical: usize,
}

/// Replays a document's canonical tokens with a stand-in sampler: the
/// forced tokens when there are some (counting a non-canonical event when
/// they are not a prefix of what remains), else one "model call".
fn replay(m: &mut Matcher, canonical: &[TokenId]) -> Replay {
    let mut s = Replay { tokens: canonical.len(), ..Replay::default() };
    let mut i = 0;
    while i < canonical.len() {
        let f = m.forced_tokens().unwrap();
        if !f.tokens.is_empty() {
            if canonical[i..].starts_with(&f.tokens) {
                m.consume_tokens(&f.tokens).unwrap();
                i += f.tokens.len();
                s.forced_tokens += f.tokens.len();
                continue;
            }
            s.non_canonical += 1;
        }
        m.consume_token(canonical[i]).unwrap();
        s.model_calls += 1;
        i += 1;
    }
    s
}

/// Compact JSON without `20.0` for `20` (as llguidance compiles it).
fn compact() -> jsonschema::Options {
    jsonschema::Options::compact().with_integer_zero_fraction(false)
}

fn ids(v: Vec<u32>) -> Vec<TokenId> {
    v.into_iter().map(TokenId).collect()
}

fn character() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"enum": ["John", "Paul"]},
            "age": {"enum": [20, 30]}
        },
        "required": ["name", "age"],
        "additionalProperties": false
    })
}

/// The .txt post's regex for the Character model.
pub(crate) const CHARACTER_REGEX: &str = r#"\{"name":("John"|"Paul"),"age":(20|30)\}"#;

#[test]
fn character_example_takes_two_model_calls() {
    let tok = &env().tok;
    let mut m = regex_matcher(CHARACTER_REGEX);
    let doc = ids(tok.encode(r#"{"name":"Paul","age":20}"#));
    let s = replay(&mut m, &doc);
    assert_eq!((s.tokens, s.model_calls, s.non_canonical), (9, 2, 0), "{s:?}");
    assert_eq!(s.forced_tokens + s.model_calls, s.tokens);
    assert!(m.is_accepting());
    // EOS is allowed but never forced.
    assert!(m.forced_tokens().unwrap().tokens.is_empty());
    // Under the JSON Schema, `20` may go on as `20.0`: the `}` is a choice.
    let mut m = matcher(&character(), &compact());
    let s = replay(&mut m, &doc);
    assert_eq!((s.model_calls, s.non_canonical), (3, 0), "{s:?}");
}

#[test]
fn flexible_whitespace_is_never_forced() {
    let mut m = matcher(&character(), &jsonschema::Options::llguidance_compat());
    // At the start `{` is forced but whitespace may follow it: the brace
    // alone is not a final piece, nothing is forced yet.
    let f = m.forced_tokens().unwrap();
    assert_eq!(f.bytes, b"{");
    m.consume_token(TokenId(env().tok.encode("{")[0])).unwrap();
    let f = m.forced_bytes().unwrap();
    assert!(f.bytes.is_empty(), "{:?}", f.bytes);
    assert_eq!(f.stop, earley::ForcedStop::Branch);
    // Inside the key the quote-less rest of the name is forced.
    m.consume_token(TokenId(env().tok.encode("\"")[0])).unwrap();
    assert_eq!(m.forced_bytes().unwrap().bytes, b"name\"");
}

#[test]
fn forced_alternatives_start_with_the_canonical_path() {
    let mut m = matcher(&character(), &jsonschema::Options::compact());
    let f = m.forced_tokens().unwrap();
    let alts = m.forced_alternatives(16).unwrap();
    assert_eq!(alts[0], f.tokens);
    assert!(alts.len() > 1);
    for a in &alts {
        assert_eq!(m.trie().decode(a), &f.bytes[..f.covered]);
    }
}

#[test]
fn forcing_off_and_rollback() {
    let mut m = matcher(&character(), &jsonschema::Options::compact());
    m.set_forcing(false);
    assert!(m.forced_tokens().unwrap().tokens.is_empty());
    m.set_forcing(true);
    let first = m.consume_forced().unwrap();
    assert!(!first.is_empty());
    let paul = ids(env().tok.encode("Paul"));
    m.consume_tokens(&paul).unwrap();
    let after = m.forced_tokens().unwrap().tokens;
    assert!(!after.is_empty());
    m.rollback(paul.len());
    m.consume_tokens(&paul).unwrap();
    assert_eq!(m.forced_tokens().unwrap().tokens, after);
}

#[test]
fn process_prompt_heals_the_prompt_boundary() {
    let tok = &env().tok;
    // No forced prefix; the prompt ends in an apostrophe that a contraction
    // (`'s`, `'ll`) could still join: it is healed.
    let mut m = regex_matcher("[a-z]+");
    let prompt = ids(tok.encode("Reply: it'"));
    let new = m.process_prompt(&prompt).unwrap();
    let text = String::from_utf8(m.trie().decode(&new)).unwrap();
    assert_eq!(m.healing_bytes(), b" it'");
    assert_eq!(text, "Reply:");
    assert_eq!(new, ids(tok.encode(&text)));
    // The mask allows tokens that continue the healed bytes only.
    let mask = m.compute_mask().unwrap().clone();
    assert!(mask.contains(TokenId(tok.encode(" it")[0])));
    assert!(!mask.contains(TokenId(tok.encode("s")[0])));
    assert!(!mask.contains(m.stop_tokens()[0]));
    // Generating the healed bytes, then the grammar's text, works.
    let rest = ids(tok.encode(" it's"));
    m.consume_tokens(&rest).unwrap();
    assert!(m.healing_bytes().is_empty());
    assert!(m.is_accepting());
    m.rollback(rest.len());
    assert_eq!(m.healing_bytes(), b" it'");
}

#[test]
fn process_prompt_joins_the_forced_prefix() {
    let tok = &env().tok;
    let mut m = matcher(&character(), &jsonschema::Options::compact());
    let prompt = ids(tok.encode("Reply with JSON:\n"));
    let new = m.process_prompt(&prompt).unwrap();
    let text = String::from_utf8(m.trie().decode(&new)).unwrap();
    assert!(m.healing_bytes().is_empty());
    assert_eq!(text, "Reply with JSON:\n{\"name\":\"");
    assert_eq!(new, ids(tok.encode(&text)));
    // The grammar consumed its forced prefix: a name comes next.
    assert!(m.compute_mask().unwrap().contains(TokenId(tok.encode("Paul")[0])));
}

/// The forced bytes from scratch: a new matcher that consumed `tokens`
/// without ever being asked for forced bytes.
fn forced_from_scratch(g: &Grammar, tokens: &[TokenId]) -> earley::ForcedBytes {
    let mut m = Matcher::new(&env().vocab, g).unwrap();
    m.consume_tokens(tokens).unwrap();
    m.forced_bytes().unwrap()
}

/// `text` as tokens: random chunks, each tokenized on its own, so that
/// tokens end inside forced bytes at random places.
fn random_tokens(rng: &mut rand::rngs::SmallRng, text: &str) -> Vec<TokenId> {
    use rand::Rng;
    let tok = &env().tok;
    let (mut out, mut rest) = (Vec::new(), text);
    while !rest.is_empty() {
        let mut n = rng.random_range(1..=rest.len().min(6));
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        out.extend(ids(tok.encode(&rest[..n])));
        rest = &rest[n..];
    }
    out
}

/// A schema with free and enumerated strings, numbers, arrays and a
/// nested object, and two documents of it.
fn mixed_schema() -> (serde_json::Value, [&'static str; 2]) {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "kind": {"enum": ["alpha", "alphabet", "beta"]},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"enum": ["red", "green"]}},
            "inner": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                      "required": ["ok"], "additionalProperties": false}
        },
        "required": ["name", "kind", "count", "tags", "inner"],
        "additionalProperties": false
    });
    let docs = [
        r#"{"name":"Paul","kind":"alphabet","count":12,"tags":["red","green"],"inner":{"ok":true}}"#,
        r#"{"name":"Zoë","kind":"beta","count":-3,"tags":[],"inner":{"ok":false}}"#,
    ];
    (schema, docs)
}

/// Calls `f` with the grammar of [`mixed_schema`] (compact, then flexible
/// whitespace), a document and a tokenization of it: the canonical one,
/// then three of random chunks (from `seed`).
fn each_tokenization(seed: u64, mut f: impl FnMut(&Grammar, &str, &[TokenId])) {
    use rand::SeedableRng;
    let (schema, docs) = mixed_schema();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    for options in [compact(), jsonschema::Options::llguidance_compat()] {
        let spec = GrammarSpec::JsonSchema { schema: schema.clone(), options };
        let g = Grammar::compile(&spec, &Default::default()).unwrap();
        for doc in docs {
            for round in 0..4 {
                let tokens = if round == 0 {
                    ids(env().tok.encode(doc))
                } else {
                    random_tokens(&mut rng, doc)
                };
                f(&g, doc, &tokens);
            }
        }
    }
}

#[test]
fn forced_tokens_asking_for_next_bytes_equal_those_from_every_next_byte() {
    // `forced_tokens` asks the parser only about the next bytes the end
    // check needs; after `forced_bytes` (which completes them) it has them
    // all. The answers must not differ.
    let (mut steps, mut forced) = (0, 0);
    each_tokenization(0x1a2b, |g, doc, tokens| {
        let mut asking = Matcher::new(&env().vocab, g).unwrap();
        let mut complete = Matcher::new(&env().vocab, g).unwrap();
        for i in 0..=tokens.len() {
            let fb = complete.forced_bytes().unwrap();
            assert!(fb.bytes.is_empty() || fb.next_complete);
            let want = complete.forced_tokens().unwrap();
            let got = asking.forced_tokens().unwrap();
            assert_eq!(got, want, "{doc} after {i} tokens");
            steps += 1;
            forced += usize::from(!got.tokens.is_empty());
            if i < tokens.len() {
                asking.consume_token(tokens[i]).unwrap();
                complete.consume_token(tokens[i]).unwrap();
            }
        }
    });
    assert!(steps > 200 && forced > 30, "{steps} {forced}");
}

#[test]
fn forced_bytes_kept_between_steps_equal_the_computation_from_scratch() {
    let (mut checked, mut nonempty) = (0, 0);
    each_tokenization(0xcace, |g, doc, tokens| {
        let mut m = Matcher::new(&env().vocab, g).unwrap();
        for i in 0..=tokens.len() {
            let fb = m.forced_bytes().unwrap();
            let scratch = forced_from_scratch(g, &tokens[..i]);
            let show = |f: &earley::ForcedBytes| (f.bytes.clone(), f.stop, f.accepting, f.special);
            assert_eq!(show(&fb), show(&scratch), "{doc} after {i} tokens");
            if !fb.bytes.is_empty() {
                assert_eq!(fb.next, scratch.next, "{doc} after {i} tokens");
            }
            assert!(scratch.next.iter().all(|b| fb.next.contains(b)));
            // A second call at the same position is answered from the cache.
            assert_eq!(m.forced_bytes().unwrap(), fb);
            checked += 1;
            nonempty += usize::from(!fb.bytes.is_empty());
            if i < tokens.len() {
                m.consume_token(tokens[i]).unwrap();
            }
        }
        // Back to the middle: the answer there is the same again.
        let half = tokens.len() / 2;
        m.rollback(tokens.len() - half);
        assert_eq!(m.forced_bytes().unwrap().bytes, forced_from_scratch(g, &tokens[..half]).bytes);
    });
    assert!(checked > 200 && nonempty > 50, "{checked} {nonempty}");
}
