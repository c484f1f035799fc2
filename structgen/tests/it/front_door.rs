//! The front door: every grammar kind through one `Grammar::compile`, one
//! error type with its location, llguidance's request format, and the
//! compile cache.

use serde_json::json;
use structgen::jsonschema;
use structgen::{
    CompileOptions, ErrorKind, Grammar, GrammarCache, GrammarSpec, Location, Matcher, Vocabulary,
};
use toktrie::TokenId;

fn compile(spec: GrammarSpec) -> Result<Grammar, structgen::Error> {
    Grammar::compile(&spec, &CompileOptions::default())
}

#[test]
fn every_kind_compiles_through_one_entry() {
    let cases: Vec<(GrammarSpec, &[u8], &[u8])> = vec![
        (GrammarSpec::json_schema(json!({"type": "integer"})), b"42", b"4.2"),
        (GrammarSpec::Lark("start: \"a\"+".into()), b"aaa", b"ab"),
        (GrammarSpec::Gbnf("root ::= [0-9]+ \"!\"".into()), b"12!", b"12"),
        (GrammarSpec::Regex("[a-c]{2}".into()), b"ab", b"abc"),
        (GrammarSpec::Choice(vec!["yes".into(), "no".into()]), b"no", b"maybe"),
        (
            GrammarSpec::Llguidance(json!({"grammars": [{"lark_grammar": "start: /[0-9]+/"}]})),
            b"123",
            b"12a",
        ),
        (
            GrammarSpec::Llguidance(json!({"grammars": [{"json_schema": {"type": "boolean"}}]})),
            b"true",
            b"yes",
        ),
    ];
    for (spec, yes, no) in cases {
        let g = compile(spec.clone()).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
        assert_eq!(g.kind_name(), spec.kind_name());
        assert!(g.accepts(yes), "{spec:?} accepts {yes:?}");
        assert!(!g.accepts(no), "{spec:?} rejects {no:?}");
    }
}

#[test]
fn a_choice_may_hold_the_empty_string_and_prefixes() {
    let g = Grammar::choice(&["", "a", "ab"]).unwrap();
    for text in [&b""[..], b"a", b"ab"] {
        assert!(g.accepts(text), "{text:?}");
    }
    assert!(!g.accepts(b"b"));
    let e = Grammar::choice::<&str>(&[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsatisfiable);
}

#[test]
fn errors_carry_their_location() {
    let e = Grammar::lark("start: \"a\" b\nb: c").unwrap_err();
    assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::Invalid, Some(2), Some(4)));
    let e = Grammar::gbnf("root ::= \"a").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.line(), Some(1));
    let e = Grammar::regex("ab[").unwrap_err();
    assert_eq!((e.line(), e.column()), (Some(1), Some(3)));
    let e =
        Grammar::json_schema(&json!({"properties": {"a": {"type": "string", "minLength": -1}}}))
            .unwrap_err();
    assert_eq!(e.pointer(), Some("/properties/a"));
    assert_eq!(e.keyword(), Some("minLength"));
    let e = GrammarSpec::json_schema_str("{\n  \"type\": \"string\",,\n}").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!((e.line(), e.column()), (Some(2), Some(20)));
    let e = Grammar::json_schema(&json!({"not": {}})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsatisfiable);
    // Display: location, kind, message.
    let e = Grammar::regex("ab[").unwrap_err();
    assert!(e.to_string().starts_with("1:3: invalid: unclosed character class"), "{e}");
}

#[test]
fn llguidance_requests_map_their_settings_and_refuse_unknown_ones() {
    // x-guidance: compact whitespace, a custom separator.
    let request = json!({"grammars": [{"json_schema": {
        "type": "array", "items": {"type": "integer"},
        "x-guidance": {"whitespace_flexible": false, "item_separator": ";"}
    }}]});
    let g = Grammar::llguidance(&request).unwrap();
    assert!(g.accepts(b"[1;2]"));
    assert!(!g.accepts(b"[1, 2]"));
    // The default: llguidance's flexible whitespace.
    let g =
        Grammar::llguidance(&json!({"grammars": [{"json_schema": {"type": "array"}}]})).unwrap();
    assert!(g.accepts(b"[ 1 ,\n 2 ]"));
    // max_tokens
    let g = Grammar::llguidance(
        &json!({"grammars": [{"lark_grammar": "start: /a+/"}], "max_tokens": 3}),
    )
    .unwrap();
    assert_eq!(g.max_tokens(), Some(3));
    let bad = [
        (json!({"grammars": [], "x": 1}), "/x"),
        (json!({"grammars": [{"lark_grammar": "start: \"a\"", "lexer": 1}]}), "/grammars/0/lexer"),
        (
            json!({"grammars": [{"json_schema": {"x-guidance": {"whitespace_flexibel": true}}}]}),
            "/grammars/0/json_schema/x-guidance/whitespace_flexibel",
        ),
        (json!({"grammars": [{"json_schema": {}, "lark_grammar": "start: \"a\""}]}), "/grammars/0"),
        (json!({"grammars": [{"name": "x"}]}), "/grammars/0"),
        (json!({"grammars": [{"lark_grammar": "start: \"a\""}], "max_tokens": -1}), "/max_tokens"),
        (json!({"max_tokens": 1}), ""),
    ];
    for (request, pointer) in bad {
        let e = Grammar::llguidance(&request).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Request, "{request}: {e}");
        assert_eq!(e.location(), Some(&Location::Pointer(pointer.to_owned())), "{request}");
    }
    // A schema error inside a request points into the request.
    let e = Grammar::llguidance(&json!({"grammars": [{"json_schema": {"minLength": "x"}}]}))
        .unwrap_err();
    assert_eq!(e.pointer(), Some("/grammars/0/json_schema"));
    assert_eq!(e.grammar_index(), Some(0));
}

#[test]
fn max_tokens_ends_the_sequence() {
    let vocab = Vocabulary::builder()
        .token_list(&["a"])
        .special(TokenId(1), "<eos>")
        .stop_tokens([TokenId(1)])
        .build()
        .unwrap();
    let request = json!({"grammars": [{"lark_grammar": "start: /a+/"}], "max_tokens": 2});
    let mut m = Matcher::new(&vocab, &Grammar::llguidance(&request).unwrap()).unwrap();
    m.consume_tokens(&[TokenId(0), TokenId(0)]).unwrap();
    assert_eq!(m.stop_reason(), Some(structgen::StopReason::MaxTokens));
    let allowed: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
    assert_eq!(allowed, [1]);
    assert!(m.consume_token(TokenId(0)).is_err());
}

#[test]
fn the_cache_compiles_each_spec_once_and_stays_within_its_bound() {
    let cache = GrammarCache::new(1 << 30);
    let opts = CompileOptions::default();
    let a = GrammarSpec::json_schema(json!({"type": "string", "maxLength": 5}));
    let b = GrammarSpec::Regex("x+".into());
    let g1 = cache.get_or_compile(&a, &opts).unwrap();
    let g2 = cache.get_or_compile(&a, &opts).unwrap();
    assert!(g1.ptr_eq(&g2));
    cache.get_or_compile(&b, &opts).unwrap();
    let bad = GrammarSpec::Regex("(".into());
    assert!(cache.get_or_compile(&bad, &opts).is_err());
    assert!(cache.get_or_compile(&bad, &opts).is_err());
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries), (2, 3, 3));
    // Other options, another entry.
    let mut other = CompileOptions::default();
    other.grammar.ignore_priorities = true;
    let g3 = cache.get_or_compile(&a, &other).unwrap();
    assert!(!g1.ptr_eq(&g3));
    // The same members in another order compile to another property
    // order: another entry, although serde_json calls the two equal.
    let ab = GrammarSpec::json_schema(json!({"properties": {"a": {}, "b": {}}}));
    let ba = GrammarSpec::json_schema(json!({"properties": {"b": {}, "a": {}}}));
    let g_ab = cache.get_or_compile(&ab, &opts).unwrap();
    let g_ba = cache.get_or_compile(&ba, &opts).unwrap();
    assert!(!g_ab.ptr_eq(&g_ba));
    assert!(g_ab.accepts(br#"{"a":1,"b":2}"#) && !g_ab.accepts(br#"{"b":2,"a":1}"#));
    assert!(g_ba.accepts(br#"{"b":2,"a":1}"#) && !g_ba.accepts(br#"{"a":1,"b":2}"#));
    // So do `0.0` and `-0.0`, which compare equal as numbers.
    let zero =
        cache.get_or_compile(&GrammarSpec::json_schema(json!({"const": 0.0})), &opts).unwrap();
    let minus =
        cache.get_or_compile(&GrammarSpec::json_schema(json!({"const": -0.0})), &opts).unwrap();
    assert!(!zero.ptr_eq(&minus));
    assert_eq!(cache.stats().entries, 8);
    // A bound below both entries keeps one: least recently used out first.
    let size = |spec: &GrammarSpec| {
        let c = GrammarCache::new(1 << 30);
        c.get_or_compile(spec, &opts).unwrap();
        c.stats().bytes
    };
    let bound = size(&a) + size(&b) - 1;
    let small = GrammarCache::new(bound);
    let a1 = small.get_or_compile(&a, &opts).unwrap();
    small.get_or_compile(&b, &opts).unwrap(); // a out
    let a2 = small.get_or_compile(&a, &opts).unwrap(); // compiled again; b out
    assert!(!a1.ptr_eq(&a2));
    let s = small.stats();
    assert_eq!((s.misses, s.evictions, s.entries), (3, 2, 1), "{s:?}");
    assert!(s.bytes <= bound);
    small.clear();
    assert_eq!(small.stats().entries, 0);
}

#[test]
fn grammars_and_vocabularies_are_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Grammar>();
    assert_send_sync::<Vocabulary>();
    assert_send_sync::<GrammarCache>();
    assert_send_sync::<structgen::Error>();
}

/// A grammar keeps its first matcher's start and copies it into the next
/// matchers over that vocabulary; a copied start, a start built over another
/// vocabulary and a start of a fresh compile give the same masks on the same
/// tokens, whatever the first matcher did after it was created. Dropped
/// matchers teach the kept start their lexers' transitions: the masks stay
/// the same while it learns.
#[test]
fn a_kept_start_changes_no_mask() {
    use rand::{Rng, SeedableRng};
    let tokens: Vec<String> =
        ["{", "}", "\"", ":", ",", " ", "a", "b", "ab\"", "1", "2", "true", "null"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let build = || {
        Vocabulary::builder()
            .token_list(&tokens)
            .special(TokenId(tokens.len() as u32), "<eos>")
            .stop_tokens([TokenId(tokens.len() as u32)])
            .slicer(Some(structgen::slicer::SlicerConfig::json()))
            .build()
            .unwrap()
    };
    let (vocab, other_vocab) = (build(), build());
    let spec = GrammarSpec::json_schema(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"]
    }));
    let g = compile(spec.clone()).unwrap();
    assert!(!g.has_kept_start());
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    // The first matcher walks away from the start before the others exist.
    let mut first = Matcher::new(&vocab, &g).unwrap();
    assert!(g.has_kept_start());
    for _ in 0..12 {
        let allowed: Vec<TokenId> = first.compute_mask().unwrap().iter().collect();
        first.consume_token(allowed[rng.random_range(0..allowed.len())]).unwrap();
        if first.is_stopped() {
            break;
        }
    }
    let before = g.start_transitions();
    drop(first);
    assert!(g.start_transitions() > before, "the first matcher's lexer teaches the start");
    for seed in 0..20 {
        let mut ms = [
            Matcher::new(&vocab, &g).unwrap(),
            Matcher::new(&other_vocab, &g).unwrap(),
            Matcher::new(&vocab, &compile(spec.clone()).unwrap()).unwrap(),
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        for step in 0..30 {
            let masks: Vec<_> = ms.iter_mut().map(|m| m.compute_mask().unwrap().clone()).collect();
            assert!(masks.iter().all(|m| *m == masks[0]), "seed {seed} step {step}");
            let allowed: Vec<TokenId> = masks[0].iter().collect();
            let t = allowed[rng.random_range(0..allowed.len())];
            for m in &mut ms {
                m.consume_token(t).unwrap();
            }
            if ms[0].is_stopped() {
                break;
            }
        }
    }
    // Only the kept start's own matchers teach it: those over the other
    // vocabulary and those of the fresh compile were built from scratch.
    let learned = g.start_transitions();
    for _ in 0..3 {
        let mut m = Matcher::new(&other_vocab, &g).unwrap();
        for t in [0, 2, 6, 2, 3, 5, 2, 7, 1] {
            m.compute_mask().unwrap();
            m.consume_token(TokenId(t)).unwrap();
        }
    }
    assert_eq!(g.start_transitions(), learned);
}

/// A schema that refers to another document, handed over in the
/// options; the cache tells documents of different content apart.
#[test]
fn referenced_documents_through_the_front_door() {
    let schema = json!({"properties": {"port": {"$ref": "common.json#/$defs/port"}}});
    let docs = |max: u32| {
        jsonschema::Documents::new()
            .with("common.json", json!({"$defs": {"port": {"type": "integer", "maximum": max}}}))
    };
    let spec = |max: u32| GrammarSpec::JsonSchema {
        schema: schema.clone(),
        options: jsonschema::Options::compact().with_documents(docs(max)),
    };
    let cache = GrammarCache::new(1 << 30);
    let opts = CompileOptions::default();
    let small = cache.get_or_compile(&spec(100), &opts).unwrap();
    let large = cache.get_or_compile(&spec(1000), &opts).unwrap();
    assert!(small.accepts(br#"{"port":80}"#) && !small.accepts(br#"{"port":443}"#));
    assert!(large.accepts(br#"{"port":443}"#));
    assert_eq!(cache.stats().entries, 2);
    // Without the document: an error naming the URI.
    let e = compile(GrammarSpec::json_schema(schema.clone())).unwrap_err();
    assert!(e.to_string().contains("json-schema:///common.json"), "{e}");
}

#[test]
fn unique_items_masks_leave_out_the_tokens_that_repeat_an_item() {
    let tokens: Vec<String> = ["[", "]", "\"", ",", "a", "b", "\"a\"", "a\"", "\"]", "\","]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let eos = TokenId(tokens.len() as u32);
    // With the slicer: the matcher must still walk byte by byte.
    let vocab = Vocabulary::builder()
        .token_list(&tokens)
        .special(eos, "<eos>")
        .stop_tokens([eos])
        .slicer(Some(structgen::slicer::SlicerConfig::json()))
        .build()
        .unwrap();
    let g = compile(GrammarSpec::json_schema(
        json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
    ))
    .unwrap();
    let id = |t: &str| TokenId(tokens.iter().position(|x| x == t).unwrap() as u32);
    let allowed = |m: &mut Matcher| -> Vec<String> {
        m.compute_mask()
            .unwrap()
            .iter()
            .filter(|&t| t != eos)
            .map(|t| tokens[t.index()].clone())
            .collect()
    };
    let mut m = Matcher::new(&vocab, &g).unwrap();
    m.consume_tokens(&[id("["), id("\"a\""), id(","), id("\"")]).unwrap();
    // Inside a string `[`, `]` and `,` are text; `a"` would close a
    // second "a"; `"` closes "", a new item.
    assert_eq!(allowed(&mut m), ["[", "]", "\"", ",", "a", "b", "\"]", "\","]);
    m.consume_token(id("a")).unwrap();
    // Now every token that closes the string repeats "a".
    assert_eq!(allowed(&mut m), ["[", "]", ",", "a", "b", "a\""]);
    // Rollback restores the set: back after `[`, "a" is free again.
    m.rollback(4);
    m.consume_token(id("\"")).unwrap();
    m.consume_token(id("a\"")).unwrap();
    m.consume_token(id("]")).unwrap();
    assert!(m.compute_mask().unwrap().contains(eos));
}

/// A vocabulary of `tokens` and a stop token `<eos>` after them.
fn small_vocab(tokens: &[&str]) -> (Vec<String>, Vocabulary, TokenId) {
    let tokens: Vec<String> = tokens.iter().map(|s| s.to_string()).collect();
    let eos = TokenId(tokens.len() as u32);
    let vocab = Vocabulary::builder()
        .token_list(&tokens)
        .special(eos, "<eos>")
        .stop_tokens([eos])
        .build()
        .unwrap();
    (tokens, vocab, eos)
}

/// Items that are open objects with a constrained member: the one token
/// that would close a repeat is left out, and a fresh member is offered.
#[test]
fn unique_open_objects_leave_out_only_the_closing_repeat() {
    let (tokens, vocab, eos) =
        small_vocab(&["[", "]", "{", "}", "\"k\"", ":", "1", ",", "\"x\"", "}]"]);
    let schema = json!({"type": "array", "uniqueItems": true, "items": {"type": "object",
        "properties": {"k": {"enum": [1, 2]}}, "required": ["k"]}});
    let g = compile(GrammarSpec::JsonSchema { schema, options: jsonschema::Options::compact() })
        .unwrap();
    let id = |t: &str| TokenId(tokens.iter().position(|x| x == t).unwrap() as u32);
    let allowed = |m: &mut Matcher| -> Vec<String> {
        m.compute_mask()
            .unwrap()
            .iter()
            .map(|t| tokens.get(t.index()).cloned().unwrap_or_default())
            .collect()
    };
    let ids = |ts: &[&str]| ts.iter().map(|t| id(t)).collect::<Vec<_>>();
    let mut m = Matcher::new(&vocab, &g).unwrap();
    m.consume_tokens(&ids(&["[", "{", "\"k\"", ":", "1"])).unwrap();
    // The first item may close.
    assert_eq!(allowed(&mut m), ["}", ",", "}]"]);
    m.consume_tokens(&ids(&["}", ",", "{", "\"k\"", ":", "1"])).unwrap();
    // `{"k":1}` again: only another member can follow.
    assert_eq!(allowed(&mut m), [","]);
    m.consume_token(id(",")).unwrap();
    assert_eq!(allowed(&mut m), ["\"x\""]);
    m.consume_tokens(&ids(&["\"x\"", ":", "1"])).unwrap();
    // `x` takes any value: `11` is one too.
    assert_eq!(allowed(&mut m), ["}", "1", ",", "}]"]);
    m.consume_token(id("}]")).unwrap();
    assert!(m.compute_mask().unwrap().contains(eos));
}

/// Items that are closed objects with three values in all, inside an
/// object: masks come from a walk by state outside the array (which
/// falls back to the byte walk when a token enters it) and from the byte
/// walk with a completion search inside; at every step they equal the
/// tokens a copy of the matcher consumes.
#[test]
fn unique_closed_objects_masks_equal_what_the_matcher_consumes() {
    #[rustfmt::skip]
    let list = [
        "{", "}", "[", "]", "\"", ",", ":", "k", "a", "b", "\"k\"", "\"a\"", "\"b\"", "{\"",
        "items", "\"items\"", "\":[", "\":[{", "},{", "}]", "]}", "}]}", "{}", "\"}", ":\"",
    ];
    let (tokens, vocab, eos) = small_vocab(&list);
    let schema = json!({"type": "object", "properties": {"items": {"type": "array",
        "uniqueItems": true, "items": {"type": "object", "properties": {"k": {"enum": ["a", "b"]}},
        "additionalProperties": false}}}, "required": ["items"], "additionalProperties": false});
    let g = compile(GrammarSpec::JsonSchema { schema, options: jsonschema::Options::compact() })
        .unwrap();
    let id = |t: &str| TokenId(tokens.iter().position(|x| x == t).unwrap() as u32);
    let doc = [
        "{\"", "items", "\":[{", "\"k\"", ":\"", "a", "\"}", ",", "{}", ",", "{", "\"k\"", ":",
        "\"b\"", "}]}",
    ];
    let mut m = Matcher::new(&vocab, &g).unwrap();
    let mut masks = Vec::new();
    for (step, t) in doc.iter().enumerate() {
        let mask = m.compute_mask().unwrap().clone();
        let mut expected = Vec::new();
        for i in 0..=tokens.len() {
            let mut copy = m.clone();
            if copy.consume_token(TokenId(i as u32)).is_ok() {
                expected.push(TokenId(i as u32));
            }
        }
        let got: Vec<TokenId> = mask.iter().collect();
        assert_eq!(got, expected, "step {step}, before {t:?}");
        masks.push(got.len());
        m.consume_token(id(t)).unwrap();
    }
    assert!(m.compute_mask().unwrap().contains(eos));
    // After `{"k":"a"},{},{"k":` only `"b"` (or its first byte) may come:
    // `"a"` would repeat the first item.
    let mut m = Matcher::new(&vocab, &g).unwrap();
    let prefix =
        ["{\"", "items", "\":[{", "\"k\"", ":\"", "a", "\"}", ",", "{}", ",", "{", "\"k\"", ":"];
    m.consume_tokens(&prefix.iter().map(|t| id(t)).collect::<Vec<_>>()).unwrap();
    let allowed: Vec<&str> =
        m.compute_mask().unwrap().iter().map(|t| tokens[t.index()].as_str()).collect();
    assert_eq!(allowed, ["\"", "\"b\""]);
    // With all three items written, the array may only close.
    m.consume_tokens(&[id("\"b\""), id("}")]).unwrap();
    let allowed: Vec<&str> =
        m.compute_mask().unwrap().iter().map(|t| tokens[t.index()].as_str()).collect();
    assert_eq!(allowed, ["]", "]}"]);
}
