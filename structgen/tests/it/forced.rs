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
