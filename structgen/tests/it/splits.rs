//! Split masks, the fast path of free text (`structgen/src/matcher/split.rs`):
//! equal to the plain walk's when made by the matcher, taken from the
//! vocabulary's store (across matchers and grammars) or inherited with a
//! grammar's learned start; the store's bound.

use proptest::prelude::*;
use serde_json::{Value, json};
use structgen::structural_tag::presets::{Tool, ToolChoice, ToolSyntax};
use structgen::{Grammar, Matcher, Vocabulary};
use toktrie::TokenId;

use super::structural_tag::{call, compile, preset_grammar, tokenizer, vocab};

/// One vocabulary for every case of the proptest below, so that its split
/// store carries splits from one case's grammar to the next: every byte,
/// and 3,000 words over the triggers' alphabet (enough tokens that a
/// free-text split is not refused for its outside words).
fn shared_vocab() -> &'static Vocabulary {
    static VOCAB: std::sync::OnceLock<Vocabulary> = std::sync::OnceLock::new();
    VOCAB.get_or_init(|| random_vocab(0x5b117, b"<>/ab x.", 7))
}

/// Every byte, and 3,000 words of 2 to `max_len - 1` bytes over `alphabet`.
fn random_vocab(seed: u64, alphabet: &[u8], max_len: usize) -> Vocabulary {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    while tokens.len() < 256 + 3000 {
        let len = rng.random_range(2..max_len);
        let w: Vec<u8> = (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
        if !tokens.contains(&w) {
            tokens.push(w);
        }
    }
    vocab(&tokens).0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// Split masks shared through one vocabulary by matchers of many
    /// grammars (random triggers, three shapes of free text) equal the
    /// plain walk's along random walks of allowed tokens: three matchers
    /// per grammar (the first makes splits, at a free text's start and
    /// derived from it after a partial trigger, the others take them),
    /// each also taking what earlier cases' grammars left in the store.
    /// (About a fifth of the cases reach a split mask, 15% derive one in
    /// round 0, 5% take one there that an earlier case's grammar made:
    /// counted when written.)
    #[test]
    fn shared_splits_equal_plain_walks_across_grammars(
        mut triggers in proptest::collection::vec("<[ab/]{1,2}>?", 1..3),
        which in 0usize..3,
        picks in proptest::collection::vec(any::<u32>(), 40),
    ) {
        // A tag's begin must start with exactly one trigger: none may
        // begin another.
        let all = triggers.clone();
        triggers.retain(|t| !all.iter().any(|u| u != t && u.starts_with(t.as_str())));
        triggers.sort();
        triggers.dedup();
        let v = shared_vocab();
        let tags: Vec<Value> = triggers
            .iter()
            .map(|t| json!({"begin": format!("{t}x"), "end": ".",
                "content": {"type": "const_string", "value": "ab"}}))
            .collect();
        let format = match which {
            0 => json!({"type": "triggered_tags", "triggers": triggers, "tags": tags}),
            1 => json!({"type": "triggered_tags", "triggers": triggers, "tags": tags,
                "at_least_one": true, "stop_after_first": true}),
            _ => json!({"type": "sequence", "elements": [
                {"type": "tag", "begin": "<b>", "end": "</b>",
                 "content": {"type": "any_text", "excludes": ["x."]}},
                {"type": "triggered_tags", "triggers": triggers, "tags": tags}]}),
        };
        let g = compile(format);
        for round in 0..3 {
            let mut m = Matcher::new(v, &g).unwrap();
            let mut plain = Matcher::new(v, &g).unwrap().with_max_splits(0);
            // Mostly tokens without `<`, so the text stays free for a
            // while and comes back to its states.
            let calm = |b: &[u8]| !b.contains(&b'<');
            random_walk_beside_plain(v, &mut m, &mut plain, &picks, 4, calm)
                .map_err(|e| TestCaseError::fail(format!("round {round}: {e}")))?;
        }
    }
}

/// A reasoning block of 2,000 tokens, then a required call; every mask
/// with split masks (the default) equals the plain walk's
/// (`with_max_splits(0)`), and a good share of the masks came from a split
/// (713 of 2,030 when written; the others are walked: first visits of a
/// lexer state, the call's JSON).
#[test]
fn long_reasoning_block() {
    let Some(tok) = tokenizer("long reasoning", "tokenizers/llama3.tokenizer.json.gz") else {
        return;
    };
    let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let tools =
        [Tool::new("f", json!({"type": "object", "properties": {"x": {"type": "integer"}}}))];
    let g = preset_grammar(ToolSyntax::Hermes, &tools, ToolChoice::Required, true);
    let mut body = String::new();
    while tok.encode(&body).len() < 2000 {
        body.push_str("Think about </thin k> and <tool_call> in prose; ");
    }
    let text = format!("<think>{body}</think>{}", call(ToolSyntax::Hermes, "f", r#"{"x": 3}"#));
    let mut m = Matcher::new(&v, &g).unwrap();
    let mut plain = Matcher::new(&v, &g).unwrap().with_max_splits(0);
    let ids = tok.encode(&text);
    walk_beside_plain(&mut m, &mut plain, &ids, "long reasoning");
    assert!(m.is_accepting());
    let stats = m.split_stats();
    assert!(stats.masks * 4 > ids.len() as u64, "{stats:?} over {} steps", ids.len());
    assert_eq!(plain.split_stats().masks, 0);
    let empty = format!("<think></think>{}", call(ToolSyntax::Hermes, "f", "{}"));
    assert!(g.accepts(empty.as_bytes()));
}

/// Walks `m` and `plain` (split masks off) along allowed tokens chosen by
/// `picks`, comparing their masks at every step: each pick not divisible
/// by `every` takes a `calm` token when one is allowed (to stay inside a
/// lexeme and come back to its states). `Err` names the first step whose
/// masks differ.
fn random_walk_beside_plain(
    v: &Vocabulary,
    m: &mut Matcher,
    plain: &mut Matcher,
    picks: &[u32],
    every: u32,
    calm: impl Fn(&[u8]) -> bool,
) -> Result<(), String> {
    for (i, &p) in picks.iter().enumerate() {
        let want: Vec<u32> = plain.compute_mask().unwrap().iter().map(|t| t.0).collect();
        let got: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
        if got != want {
            return Err(format!("step {i}: the split mask differs from the plain walk's"));
        }
        if want.is_empty() {
            break;
        }
        let quiet: Vec<u32> = want
            .iter()
            .copied()
            .filter(|&t| v.trie().token_bytes(TokenId(t)).is_some_and(&calm))
            .collect();
        let pool = if p % every != 0 && !quiet.is_empty() { &quiet } else { &want };
        let t = TokenId(pool[(p / every) as usize % pool.len()]);
        if plain.consume_token(t).is_err() || plain.is_stopped() {
            break;
        }
        m.consume_token(t).unwrap();
    }
    Ok(())
}

/// Consumes `ids` with `m` and with `plain` (split masks off), asserting
/// equal masks at every step.
fn walk_beside_plain(m: &mut Matcher, plain: &mut Matcher, ids: &[u32], what: &str) {
    for (i, &t) in ids.iter().enumerate() {
        let (a, b) = (m.compute_mask().unwrap(), plain.compute_mask().unwrap());
        assert!(a == b, "{what}, step {i}: the split mask differs from the plain walk's");
        m.consume_token(TokenId(t)).unwrap();
        plain.consume_token(TokenId(t)).unwrap();
    }
}

/// The matchers of one grammar share their split masks: the first makes
/// them (at each free text's start, and derived from it after a partial
/// trigger), the later ones take them, from the vocabulary's store or with
/// their grammar's learned start, also on another text. Every mask equals
/// the plain walk's.
#[test]
fn splits_shared_across_matchers() {
    let Some(tok) = tokenizer("shared splits", "tokenizers/llama3.tokenizer.json.gz") else {
        return;
    };
    let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let tools =
        [Tool::new("f", json!({"type": "object", "properties": {"x": {"type": "integer"}}}))];
    let g = preset_grammar(ToolSyntax::Hermes, &tools, ToolChoice::Auto, true);
    let texts = [
        "<think>We weigh </thin k> against the trigger.</think>Plain prose, then a call.",
        "<think>Another order: prose first.</think>And an answer with <tool_ in it.",
    ];
    let mut shared = Vec::new();
    for round in 0..4 {
        let text = texts[round % 2];
        let mut m = Matcher::new(&v, &g).unwrap();
        let mut plain = Matcher::new(&v, &g).unwrap().with_max_splits(0);
        walk_beside_plain(&mut m, &mut plain, &tok.encode(text), &format!("round {round}"));
        assert!(m.is_accepting(), "round {round}");
        let s = m.split_stats();
        shared.push((s.shared, s.inherited, s.masks));
    }
    assert_eq!(shared[0].0 + shared[0].1, 0, "the first matcher has nobody to take from");
    for s in &shared[2..] {
        assert!(s.0 + s.1 > 0 && s.2 > 0, "later matchers take splits and use them: {shared:?}");
    }
}

/// Matchers of other grammars with the same free text share the splits
/// too: a request with a new tool list (a new grammar, the same Hermes
/// triggers) takes the splits that the first request with another tool
/// list made, in the reasoning block and in the answer's text, and its
/// masks equal the plain walk's. The first request splits each text's
/// start at once and derives the states after a partial trigger from
/// it. A cleared store starts over.
#[test]
fn splits_shared_across_grammars() {
    let Some(tok) = tokenizer("splits across grammars", "tokenizers/llama3.tokenizer.json.gz")
    else {
        return;
    };
    let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let weather = [Tool::new(
        "get_weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )];
    let notes = [
        Tool::new("f", json!({"type": "object", "properties": {"x": {"type": "integer"}}})),
        Tool::new("note", json!({"type": "object", "properties": {"body": {"type": "string"}}})),
    ];
    let ids = tok.encode("<think>Which tool? None: prose will do.</think>An answer in prose.");
    let walk = |g: &Grammar, what: &str| {
        let mut m = Matcher::new(&v, g).unwrap();
        let mut plain = Matcher::new(&v, g).unwrap().with_max_splits(0);
        walk_beside_plain(&mut m, &mut plain, &ids, what);
        assert!(m.is_accepting(), "{what}");
        m.split_stats()
    };
    let a = preset_grammar(ToolSyntax::Hermes, &weather, ToolChoice::Auto, true);
    let first = walk(&a, "first request");
    assert_eq!(first.shared, 0);
    assert!(first.splits >= 2, "the first request splits the reasoning's and the answer's starts");
    assert!(first.derived >= 1, "and derives the splits after a partial trigger: {first:?}");
    assert_eq!(v.shared_splits_len() as u64, first.splits + first.derived);
    let second = walk(&a, "second request");
    assert!(second.shared >= 2 && second.splits + second.derived == 0, "{second:?}");
    let b = preset_grammar(ToolSyntax::Hermes, &notes, ToolChoice::Auto, true);
    let stats = walk(&b, "a new tool list");
    assert!(stats.shared >= 2 && stats.splits == 0, "{stats:?}");
    v.clear_shared_splits();
    assert_eq!(v.shared_splits_len(), 0);
    assert_eq!(walk(&b, "after clearing").shared, 0);
}

/// The vocabulary's store keeps at most `MAX_SHARED_SPLITS` splits, the
/// least recently used giving way: after more free texts than that (each
/// its own trigger), the newest is shared and the oldest is not.
#[test]
fn shared_splits_are_bounded_least_recently_used_first() {
    let Some(tok) = tokenizer("split store bound", "tokenizers/llama3.tokenizer.json.gz") else {
        return;
    };
    let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
    let grammar = |i: usize| {
        let trigger = format!("<t{i}>");
        let tag = json!({"begin": trigger, "end": format!("</t{i}>"),
            "content": {"type": "const_string", "value": "x"}});
        compile(json!({"type": "triggered_tags", "triggers": [trigger], "tags": [tag]}))
    };
    let ids = tok.encode("Some free text without a trigger.");
    let walk = |g: &Grammar| {
        let mut m = Matcher::new(&v, g).unwrap();
        for &t in &ids {
            m.compute_mask().unwrap();
            m.consume_token(TokenId(t)).unwrap();
        }
        m.split_stats()
    };
    let n = structgen::MAX_SHARED_SPLITS + 8;
    let grammars: Vec<Grammar> = (0..n).map(grammar).collect();
    for g in &grammars {
        walk(g);
        assert!(walk(g).splits > 0, "the second request splits");
        assert!(v.shared_splits_len() <= structgen::MAX_SHARED_SPLITS);
    }
    assert_eq!(v.shared_splits_len(), structgen::MAX_SHARED_SPLITS);
    // Fresh compiles: their starts learned nothing, so what they take
    // comes from the store.
    assert!(walk(&grammar(n - 1)).shared > 0, "the newest free text is shared");
    assert_eq!(walk(&grammar(0)).shared, 0, "the oldest gave way");
}

/// A random walk of `steps` allowed tokens (mostly without `<`, so that the
/// text stays free and comes back to its states), checking each mask
/// against a matcher of `reference` (the same grammar, compiled apart)
/// without splits fed the same tokens.
fn walk_against_plain(
    v: &Vocabulary,
    reference: &Grammar,
    m: &mut Matcher,
    seed: u64,
    steps: usize,
) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut plain = Matcher::new(v, reference).unwrap().with_max_splits(0);
    for step in 0..steps {
        let want: Vec<u32> = plain.compute_mask().unwrap().iter().map(|t| t.0).collect();
        let got: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
        assert_eq!(got, want, "seed {seed}, step {step}");
        let calm: Vec<u32> = want
            .iter()
            .copied()
            .filter(|&t| v.trie().token_bytes(TokenId(t)).is_some_and(|b| !b.contains(&b'<')))
            .collect();
        let pool = if rng.random_range(0..4) != 0 && !calm.is_empty() { &calm } else { &want };
        if pool.is_empty() {
            return;
        }
        let t = TokenId(pool[rng.random_range(0..pool.len())]);
        if plain.consume_token(t).is_err() || plain.is_stopped() {
            return;
        }
        m.consume_token(t).unwrap();
    }
}

/// A grammar's learned start takes a dropped matcher's lexer with that
/// matcher's split masks only: two matchers copied from one start number
/// the states they learn differently, so the splits of the first one
/// dropped would name the wrong states under the second one's lexer.
#[test]
fn a_learned_start_keeps_only_its_own_lexers_splits() {
    let v = shared_vocab();
    let format = json!({"type": "triggered_tags", "triggers": ["<a>", "<b/"],
        "tags": [{"begin": "<a>", "end": "</a>", "content": {"type": "any_text"}},
                 {"begin": "<b/", "end": ">", "content": {"type": "const_string", "value": "x"}}]});
    let reference = compile(format.clone());
    let mut both = 0;
    for round in 0..24u64 {
        // A fresh grammar: `a` and `b` both copy its first start.
        let g = compile(format.clone());
        let (mut a, mut b) = (Matcher::new(v, &g).unwrap(), Matcher::new(v, &g).unwrap());
        walk_against_plain(v, &reference, &mut a, 100 + round, 40);
        walk_against_plain(v, &reference, &mut b, 200 + round, 300);
        let first = g.start_transitions();
        drop(a);
        let after_a = g.start_transitions();
        drop(b);
        if first < after_a && after_a < g.start_transitions() {
            both += 1;
        }
        for seed in [100 + round, 200 + round, 300 + round] {
            walk_against_plain(v, &reference, &mut Matcher::new(v, &g).unwrap(), seed, 80);
        }
    }
    assert!(both > 6, "{both} rounds where both matchers taught the start");
}

/// A vocabulary for `uniqueItems` arrays: every byte, and 3,000 words over
/// a JSON alphabet (enough tokens that splits inside strings form).
fn json_vocab() -> &'static Vocabulary {
    static VOCAB: std::sync::OnceLock<Vocabulary> = std::sync::OnceLock::new();
    VOCAB.get_or_init(|| random_vocab(0x0417, b"ab \"\",:{}[]12", 6))
}

/// The `uniqueItems` schemas of the split tests: free strings (a distinct
/// phrase without search), bounded strings and closed objects (searching
/// phrases).
fn unique_schema(which: usize) -> Grammar {
    let items = match which {
        0 => json!({"type": "string"}),
        1 => json!({"type": "string", "maxLength": 5}),
        _ => json!({"type": "object", "properties": {"a": {"type": "string"},
            "b": {"enum": [1, 2]}}, "additionalProperties": false}),
    };
    let schema = json!({"type": "array", "uniqueItems": true, "items": items});
    let spec = structgen::GrammarSpec::JsonSchema {
        schema,
        options: structgen::jsonschema::Options::compact(),
    };
    Grammar::compile(&spec, &structgen::CompileOptions::default()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Among taken distinct members the byte walk takes splits
    /// (`earley::TakenSplit`): their masks equal the plain byte walk's
    /// (`with_max_splits(0)`) along random walks of allowed tokens, mostly
    /// inside strings so that lexer states come back.
    #[test]
    fn unique_items_split_masks_equal_byte_walks(
        which in 0usize..3,
        picks in proptest::collection::vec(any::<u32>(), 60),
    ) {
        let v = json_vocab();
        let g = unique_schema(which);
        let mut m = Matcher::new(v, &g).unwrap();
        let mut plain = Matcher::new(v, &g).unwrap().with_max_splits(0);
        let calm = |b: &[u8]| b.iter().all(|c| b"ab ".contains(c));
        random_walk_beside_plain(v, &mut m, &mut plain, &picks, 3, calm)
            .map_err(TestCaseError::fail)?;
    }
}

/// Splits serve masks inside the later strings of a `uniqueItems` array
/// (free and bounded strings alike), with the same masks as the byte walk;
/// in a bounded string the bytes near its end are left to the walk (the
/// split's frontier), where a search decides.
#[test]
fn unique_items_take_splits_inside_strings() {
    let v = json_vocab();
    let id = |s: &str| {
        (0..v.trie().vocab_size() as u32)
            .find(|&t| v.trie().token_bytes(TokenId(t)) == Some(s.as_bytes()))
            .unwrap()
    };
    for which in [0, 1] {
        let g = unique_schema(which);
        let mut m = Matcher::new(v, &g).unwrap();
        let mut plain = Matcher::new(v, &g).unwrap().with_max_splits(0);
        // `["a","ba","baa"]`: the bounded string's lexer states count its
        // characters, so they come back (seen twice) in the third item.
        let mut ids = vec![id("["), id("\""), id("a"), id("\""), id(",")];
        ids.extend([id("\""), id("b"), id("a"), id("\""), id(",")]);
        ids.extend([id("\""), id("b"), id("a"), id("a"), id("\""), id("]")]);
        walk_beside_plain(&mut m, &mut plain, &ids, "uniqueItems strings");
        assert!(m.is_accepting());
        let stats = m.split_stats();
        assert!(stats.masks >= 2, "schema {which}: {stats:?}");
        assert_eq!(plain.split_stats().masks, 0);
    }
}
