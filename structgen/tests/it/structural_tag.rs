//! Structural tags: the JSON format, its lowering, presets, and masks
//! against a naive per-token oracle.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use structgen::structural_tag::StructuralTag;
use structgen::structural_tag::presets::{self, PresetOptions, Tool, ToolChoice, ToolSyntax};
use structgen::{Grammar, GrammarSpec, Matcher, Vocabulary};
use toktrie::TokenId;

pub(super) fn compile(format: Value) -> Grammar {
    let req = json!({"type": "structural_tag", "format": format});
    Grammar::compile(&GrammarSpec::StructuralTag(req.clone()), &Default::default()).unwrap_or_else(
        |e| {
            let lark = StructuralTag::from_json(&req).and_then(|t| t.to_lark());
            panic!("{e}\n{lark:?}")
        },
    )
}

fn check(format: Value, accept: &[&str], reject: &[&str]) {
    let g = compile(format.clone());
    for a in accept {
        assert!(g.accepts(a.as_bytes()), "{format}\nshould accept {a:?}");
    }
    for r in reject {
        assert!(!g.accepts(r.as_bytes()), "{format}\nshould reject {r:?}");
    }
}

fn int_tag(begin: &str, end: &str) -> Value {
    json!({"begin": begin, "end": end, "content": {"type": "json_schema", "json_schema": {"type": "integer"}}})
}

#[test]
fn basic_formats() {
    check(json!({"type": "const_string", "value": "hi"}), &["hi"], &["h", "hii", ""]);
    check(json!({"type": "regex", "pattern": "a/b+"}), &["a/b", "a/bbb"], &["a/", "ab"]);
    check(json!({"type": "json_schema", "json_schema": {"type": "boolean"}}), &["true"], &["1"]);
    check(json!({"type": "any_text"}), &["", "anything\n at all <>"], &[]);
    check(
        json!({"type": "any_text", "excludes": ["bad", "</"]}),
        &["", "good", "ba d"],
        &["so bad", "</x"],
    );
    check(
        json!({"type": "sequence", "elements": [
            {"type": "const_string", "value": "A:"}, {"type": "any_text"}]}),
        &["A:", "A: free"],
        &["B:"],
    );
    check(
        json!({"type": "or", "elements": [
            {"type": "const_string", "value": "x"}, {"type": "json_schema", "json_schema": {"type": "integer"}}]}),
        &["x", "12"],
        &["y", "x1"],
    );
    check(
        json!({"type": "grammar", "grammar": "root ::= \"a\" b\nb ::= [0-9]+"}),
        &["a1", "a123"],
        &["a", "b1"],
    );
    check(
        json!({"type": "grammar", "grammar": "%lark\nstart: \"a\" B\nB: /[0-9]+/"}),
        &["a1"],
        &["a"],
    );
}

#[test]
fn tags_and_free_text_ends_at_the_first_end() {
    let think = json!({"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"});
    check(
        think.clone(),
        &["<think></think>", "<think>a < b </thin </think>"],
        &["<think>a</think>b", "<think>a</think></think>", "<think>a"],
    );
    // Reasoning, then an answer: the first `</think>` closes the block.
    check(
        json!({"type": "sequence", "elements": [think, {"type": "any_text"}]}),
        &["<think>x</think>", "<think>x</think>answer </think> again"],
        &["x</think>"],
    );
    // Nested tags.
    check(
        json!({"type": "tag", "begin": "<a>", "end": "</a>", "content":
            {"type": "tag", "begin": "<b>", "end": "</b>", "content": {"type": "any_text"}}}),
        &["<a><b>t</b></a>"],
        &["<a><b>t</b>x</a>", "<a>t</a>"],
    );
}

#[test]
fn triggered_tags() {
    let tt = |at_least_one: bool, stop_after_first: bool| {
        json!({"type": "triggered_tags", "triggers": ["<f="],
               "tags": [int_tag("<f=a>", "</f>"), int_tag("<f=b>", "</f>")],
               "at_least_one": at_least_one, "stop_after_first": stop_after_first})
    };
    check(
        tt(false, false),
        &["", "text", "x<f=a>1</f>y<f=b>2</f>", "<f=a>1</f><f=a>2</f>", "a <f b"],
        &["<f=c>1</f>", "<f=a>x</f>", "x<f=a>1", "<f=", "ok <f=a>1</f> then <f="],
    );
    check(tt(true, false), &["<f=a>1</f>", "<f=a>1</f> and <f=b>2</f>"], &["", "x<f=a>1</f>"]);
    check(tt(false, true), &["", "text", "x<f=a>1</f>"], &["x<f=a>1</f>y", "<f=a>1</f><f=b>2</f>"]);
    check(tt(true, true), &["<f=a>1</f>", "<f=b>2</f>"], &["", "<f=a>1</f> ", "x<f=a>1</f>"]);
    // A trigger inside a JSON string does not re-trigger.
    check(
        json!({"type": "triggered_tags", "triggers": ["<t>"], "tags": [{"begin": "<t>", "end": "</t>",
            "content": {"type": "json_schema", "json_schema": {"type": "string"}}}]}),
        &["a<t>\"x <t> y </t>\"</t>b"],
        &["a<t>\"x\" <t></t>"],
    );
    // Followed by text: the free text ends at the first end, and a trigger
    // after it is not a trigger.
    check(
        json!({"type": "tag", "begin": "[", "end": "]", "content": tt(false, false)}),
        &["[]", "[x<f=a>1</f>y]"],
        &["[x]<f=a>1</f>", "[x]]"],
    );
}

#[test]
fn tags_with_separator() {
    let tws = |at_least_one: bool, stop_after_first: bool| {
        json!({"type": "tags_with_separator", "separator": ",",
               "tags": [int_tag("<a>", "</a>"), int_tag("<b>", "</b>")],
               "at_least_one": at_least_one, "stop_after_first": stop_after_first})
    };
    check(tws(false, false), &["", "<a>1</a>", "<a>1</a>,<b>2</b>,<a>3</a>"], &["<a>1</a>,", "x"]);
    check(tws(true, false), &["<a>1</a>,<b>2</b>"], &[""]);
    check(tws(false, true), &["", "<b>2</b>"], &["<a>1</a>,<b>2</b>"]);
    check(tws(true, true), &["<b>2</b>"], &["", "<a>1</a>,<b>2</b>"]);
}

#[test]
fn errors_carry_pointers() {
    let bad = [
        (json!({"type": "nope"}), "/format/type"),
        (json!({"type": "sequence", "elements": [{"type": "const_string"}]}), "/format/elements/0"),
        (
            json!({"type": "triggered_tags", "triggers": ["<x>"], "tags": [int_tag("<y>", "</y>")]}),
            "/format/tags/0/begin",
        ),
        (
            json!({"type": "sequence", "elements": [{"type": "any_text"},
                {"type": "json_schema", "json_schema": {}}]}),
            "/format/elements/0",
        ),
        (json!({"type": "token", "token": "no brackets"}), "/format"),
        (
            json!({"type": "tag", "begin": "a", "end": "b", "content": {"type": "any_text"}, "x": 1}),
            "/format/x",
        ),
    ];
    for (format, pointer) in bad {
        let req = json!({"type": "structural_tag", "format": format});
        let e =
            Grammar::compile(&GrammarSpec::StructuralTag(req), &Default::default()).unwrap_err();
        assert_eq!(e.pointer(), Some(pointer), "{format}: {e}");
    }
}

#[test]
fn json_round_trip() {
    let tools = [Tool::new("f", json!({"type": "object"}))];
    for syntax in ToolSyntax::ALL {
        let t =
            presets::structural_tag(syntax, &tools, &ToolChoice::Auto, &PresetOptions::default())
                .unwrap();
        assert_eq!(StructuralTag::from_json(&t.to_json()).unwrap(), t);
    }
}

/// A call of `name` with `args` in `syntax`.
pub(super) fn call(syntax: ToolSyntax, name: &str, args: &str) -> String {
    match syntax {
        ToolSyntax::Hermes => {
            format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
        }
        ToolSyntax::Llama3Json => format!("{{\"name\": \"{name}\", \"parameters\": {args}}}"),
        ToolSyntax::Mistral => {
            format!("[TOOL_CALLS][{{\"name\": \"{name}\", \"arguments\": {args}}}]")
        }
        ToolSyntax::DeepSeek => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        _ => unreachable!("{syntax:?} is not written as text"),
    }
}

pub(super) fn preset_grammar(
    syntax: ToolSyntax,
    tools: &[Tool],
    choice: ToolChoice,
    reasoning: bool,
) -> Grammar {
    let opts = PresetOptions::default().with_reasoning(reasoning);
    let tag = presets::structural_tag(syntax, tools, &choice, &opts).unwrap();
    Grammar::from_earley(tag.compile(&Default::default()).unwrap())
}

#[test]
fn presets_accept_their_syntax() {
    let tools = [
        Tool::new(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        ),
        Tool::new(
            "echo",
            json!({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}),
        ),
    ];
    for syntax in ToolSyntax::ALL {
        if syntax == ToolSyntax::Llama3PythonTag {
            continue;
        }
        let a = call(syntax, "add", r#"{"a": 1}"#);
        let e = call(syntax, "echo", r#"{"s": "<tool_call>"}"#);
        let bad_name = call(syntax, "mul", r#"{"a": 1}"#);
        let bad_args = call(syntax, "add", r#"{"a": "x"}"#);
        let auto = preset_grammar(syntax, &tools, ToolChoice::Auto, false);
        for ok in [String::new(), "plain".into(), a.clone(), e.clone(), format!("Sure. {a}")] {
            assert!(auto.accepts(ok.as_bytes()), "{syntax:?} auto should accept {ok:?}");
        }
        for bad in [&bad_name, &bad_args] {
            assert!(!auto.accepts(bad.as_bytes()), "{syntax:?} auto should reject {bad:?}");
        }
        let req = preset_grammar(syntax, &tools, ToolChoice::Required, false);
        assert!(
            req.accepts(a.as_bytes()) && !req.accepts(b"plain") && !req.accepts(b""),
            "{syntax:?}"
        );
        let named = preset_grammar(syntax, &tools, ToolChoice::Function("echo".into()), false);
        assert!(named.accepts(e.as_bytes()) && !named.accepts(a.as_bytes()), "{syntax:?}");
        let none = preset_grammar(syntax, &tools, ToolChoice::None, true);
        assert!(none.accepts(b"<think>hm</think>text") && !none.accepts(b"text"), "{syntax:?}");
        let think = preset_grammar(syntax, &tools, ToolChoice::Required, true);
        let t = format!("<think>I should call add.</think>{a}");
        assert!(think.accepts(t.as_bytes()) && !think.accepts(a.as_bytes()), "{syntax:?}");
    }
}

/// A vocabulary of `tokens`, `<|python_tag|>` and `<eos>` (both special).
pub(super) fn vocab(tokens: &[Vec<u8>]) -> (Vocabulary, TokenId, TokenId) {
    let tag = TokenId(tokens.len() as u32);
    let eos = TokenId(tokens.len() as u32 + 1);
    let v = Vocabulary::builder()
        .token_list(tokens)
        .special(tag, "<|python_tag|>")
        .special(eos, "<eos>")
        .stop_tokens([eos])
        .build()
        .unwrap();
    (v, tag, eos)
}

/// The true mask: every token walked through `consume` on a clone.
fn oracle(m: &Matcher, vocab_size: usize) -> Vec<u32> {
    (0..vocab_size as u32)
        .filter(|&t| {
            let mut c = m.clone();
            c.consume_token(TokenId(t)).is_ok()
        })
        .collect()
}

fn assert_masks_exact(m: &mut Matcher, tokens: &[TokenId]) {
    let n = m.vocabulary().trie().vocab_size();
    for &t in tokens {
        let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
        assert_eq!(mask, oracle(m, n), "after {} tokens", m.num_tokens());
        m.consume_token(t).unwrap();
    }
    let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
    assert_eq!(mask, oracle(m, n), "at the end");
}

#[test]
fn special_token_trigger() {
    let pieces: Vec<Vec<u8>> =
        ["{", "\"name\": ", "\"f\"", ", \"parameters\": ", "1", "}", "a", " ", "<", "|"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
    let (v, tag, eos) = vocab(&pieces);
    let tools = [Tool::new("f", json!({"type": "integer"}))];
    let g = preset_grammar(ToolSyntax::Llama3PythonTag, &tools, ToolChoice::Auto, false);
    let mut m = Matcher::new(&v, &g).unwrap();
    let call: Vec<TokenId> = [6, 7, 8, 9]
        .map(TokenId)
        .into_iter()
        .chain([tag])
        .chain([0, 1, 2, 3, 4, 5].map(TokenId))
        .collect();
    assert_masks_exact(&mut m, &call);
    assert!(m.is_accepting());
    m.consume_token(eos).unwrap();
}

fn tokens_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let alphabet: Vec<u8> = b"<t>/x\"1{} ".to_vec();
    let token = proptest::collection::vec(proptest::sample::select(alphabet), 1..6);
    proptest::collection::vec(token, 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Masks equal the oracle's along random walks of allowed tokens, over
    /// random vocabularies made of trigger pieces.
    #[test]
    fn masks_equal_the_oracle_on_random_vocabularies(
        mut tokens in tokens_strategy(), picks in proptest::collection::vec(any::<u32>(), 30),
        which in 0usize..3,
    ) {
        // Every byte alone, so every text can be written.
        for b in b"<t>/x\"1{} " {
            tokens.push(vec![*b]);
        }
        tokens.sort();
        tokens.dedup();
        let (v, _, _) = vocab(&tokens);
        let format = match which {
            0 => json!({"type": "triggered_tags", "triggers": ["<t>"], "tags": [{"begin": "<t>", "end": "</t>",
                "content": {"type": "json_schema", "json_schema": {"type": "string"}}}]}),
            1 => json!({"type": "sequence", "elements": [
                {"type": "tag", "begin": "<t>", "end": "</t>", "content": {"type": "any_text"}},
                {"type": "triggered_tags", "triggers": ["{"], "tags": [int_tag("{1", "}")],
                 "stop_after_first": true}]}),
            _ => json!({"type": "tags_with_separator", "separator": " ", "tags": [
                {"begin": "<t>", "end": "</t>", "content": {"type": "any_text", "excludes": ["x"]}}]}),
        };
        let g = compile(format);
        let mut m = Matcher::new(&v, &g).unwrap();
        let n = v.trie().vocab_size();
        for p in picks {
            let want = oracle(&m, n);
            let got: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
            prop_assert_eq!(&got, &want);
            if want.is_empty() {
                break;
            }
            let t = want[p as usize % want.len()];
            if m.consume_token(TokenId(t)).is_err() || m.is_stopped() {
                break;
            }
        }
    }
}

pub(super) fn tokenizer(what: &str, file: &str) -> Option<Arc<bpe::Tokenizer>> {
    let json = testkit::read_data_or_skip(what, file)?;
    Some(Arc::new(bpe::Tokenizer::from_tokenizer_json(&json).unwrap()))
}

/// Exact masks on real vocabularies at the interesting steps: free text,
/// a trigger split across tokens, the tool's JSON, after the call.
#[test]
fn masks_equal_the_oracle_on_llama3_and_qwen3() {
    for (name, file) in [
        ("Llama-3", "tokenizers/llama3.tokenizer.json.gz"),
        ("Qwen3", "tokenizers/qwen3.tokenizer.json.gz"),
    ] {
        let Some(tok) = tokenizer(&format!("{name} structural-tag masks"), file) else { return };
        let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
        let tools = [Tool::new(
            "get_weather",
            json!({"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )];
        let g = preset_grammar(ToolSyntax::Hermes, &tools, ToolChoice::Auto, true);
        let text = "<think>Weather? <tool_ I need</think>Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"<tool_call> Paris\"}}\n</tool_call>Done.";
        let ids: Vec<TokenId> = tok.encode(text).into_iter().map(TokenId).collect();
        let mut m = Matcher::new(&v, &g).unwrap();
        // The oracle costs a vocabulary of consumes per step: check every
        // fourth step and the last ones.
        let n = v.trie().vocab_size();
        for (i, &t) in ids.iter().enumerate() {
            if i % 4 == 0 || i + 3 >= ids.len() {
                let mask: Vec<u32> = m.compute_mask().unwrap().iter().map(|t| t.0).collect();
                assert_eq!(mask, oracle(&m, n), "{name}: step {i}");
            }
            m.consume_token(t).unwrap_or_else(|e| panic!("{name}: step {i}: {e}"));
        }
        assert!(m.is_accepting(), "{name}");
    }
}

/// MaskBench's BFCL schemas as tools: every valid instance accepted in
/// its call syntax, a wrong function name rejected. Each schema goes
/// through one syntax (rotating), to keep the test fast.
#[test]
fn bfcl_schemas_in_every_syntax() {
    let Some(raw) = testkit::read_data_or_skip("BFCL tool calls", "maskbench/dev.jsonl.gz") else {
        return;
    };
    let syntaxes =
        [ToolSyntax::Hermes, ToolSyntax::Llama3Json, ToolSyntax::Mistral, ToolSyntax::DeepSeek];
    let mut checked = 0;
    for (i, line) in
        raw.split(|&b| b == b'\n').filter(|l| l.starts_with(b"{\"name\":\"BFCL")).enumerate()
    {
        let entry: Value = serde_json::from_slice(line).unwrap();
        let syntax = syntaxes[i % syntaxes.len()];
        let tools = [Tool::new("tool", entry["schema"].clone())];
        let tag =
            presets::structural_tag(syntax, &tools, &ToolChoice::Auto, &PresetOptions::default())
                .unwrap();
        let g = Grammar::from_earley(tag.compile(&Default::default()).unwrap());
        for test in entry["tests"].as_array().unwrap() {
            let args = serde_json::to_string(&test["data"]).unwrap();
            let text = format!("Calling. {}", call(syntax, "tool", &args));
            let valid = test["valid"].as_bool().unwrap();
            assert_eq!(
                g.accepts(text.as_bytes()),
                valid,
                "{} in {syntax:?}: {text}",
                entry["name"]
            );
            let wrong = call(syntax, "tool2", &args);
            assert!(!g.accepts(wrong.as_bytes()), "{}", entry["name"]);
            checked += 1;
        }
    }
    assert!(checked >= 700, "{checked}");
}

/// Consumes `text` a token at a time, each the longest token the mask
/// allows whose bytes begin what is left (whatever the canonical
/// tokenization: SentencePiece vocabularies prefix a space to a text
/// encoded alone).
fn walk_text(m: &mut Matcher, v: &Vocabulary, text: &str) {
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        let trie = v.trie();
        let best = m
            .compute_mask()
            .unwrap()
            .iter()
            .map(|t| (t, trie.token_bytes(t).unwrap_or(&[])))
            .filter(|(_, b)| !b.is_empty() && rest.starts_with(b))
            .max_by_key(|(_, b)| b.len())
            .map(|(t, b)| (t, b.len()));
        let Some((t, n)) = best else {
            panic!("no allowed token begins {:?}", &text[text.len() - rest.len()..])
        };
        m.consume_token(t).unwrap();
        rest = &rest[n..];
    }
}

/// Markers that the vocabulary has as added tokens are matched as those
/// tokens, the one token the model writes (Mistral v0.3's `[TOOL_CALLS]`
/// is id 5, Qwen 3's `<tool_call>` 151657, its `<think>` 151667); without
/// `special_tokens` they are text, and the model's token is masked out.
#[test]
fn markers_are_the_vocabularys_tokens() {
    let tools = [Tool::new(
        "f",
        json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}),
    )];
    let cases = [
        ("Mistral v0.3", "tokenizers/mistral03.tokenizer.json.gz", ToolSyntax::Mistral),
        ("Qwen3", "tokenizers/qwen3.tokenizer.json.gz", ToolSyntax::Hermes),
    ];
    for (name, file, syntax) in cases {
        let Some(tok) = tokenizer(&format!("{name} preset markers"), file) else { return };
        let v = Vocabulary::from_tokenizer(tok.clone()).unwrap();
        let id = |marker: &str| TokenId(tok.special_id(marker).unwrap());
        let reasoning = syntax == ToolSyntax::Hermes;
        let grammar = |opts: PresetOptions| {
            let opts = opts.with_reasoning(reasoning);
            let tag = presets::structural_tag(syntax, &tools, &ToolChoice::Auto, &opts).unwrap();
            Grammar::from_earley(tag.compile(&Default::default()).unwrap())
        };
        let (open, close) = match syntax {
            ToolSyntax::Mistral => ("[TOOL_CALLS]", None),
            _ => ("<tool_call>", Some("</tool_call>")),
        };
        let first = if reasoning { "<think>" } else { open };
        let text_markers = grammar(PresetOptions::default());
        let m = &mut Matcher::new(&v, &text_markers).unwrap();
        assert!(!m.compute_mask().unwrap().contains(id(first)), "{name}: {first} as text");

        let names: Vec<&str> = tok.special_tokens().map(|(_, n)| n).collect();
        let g = grammar(PresetOptions::default().with_special_tokens(names));
        let m = &mut Matcher::new(&v, &g).unwrap();
        if reasoning {
            assert!(m.compute_mask().unwrap().contains(id("<think>")), "{name}");
            m.consume_token(id("<think>")).unwrap();
            walk_text(m, &v, "The user wants f.");
            m.consume_token(id("</think>")).unwrap();
        }
        walk_text(m, &v, "Calling f.");
        assert!(m.compute_mask().unwrap().contains(id(open)), "{name}: {open}");
        m.consume_token(id(open)).unwrap();
        match close {
            None => walk_text(m, &v, r#"[{"name": "f", "arguments": {"x": 3}}]"#),
            Some(close) => {
                walk_text(m, &v, "\n{\"name\": \"f\", \"arguments\": {\"x\": 3}}\n");
                m.consume_token(id(close)).unwrap();
            }
        }
        assert!(m.is_accepting(), "{name}");
    }
}

/// DeepSeek's markers as tokens of a small vocabulary: the calls' begin,
/// separator and end markers are the tokens, the rest text.
#[test]
fn deepseek_markers_as_tokens() {
    let markers = [
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
    ];
    let mut b = Vocabulary::builder();
    for byte in 0..=255u8 {
        b = b.token(TokenId(u32::from(byte)), &[byte]);
    }
    for (i, name) in markers.iter().enumerate() {
        b = b.special(TokenId(256 + i as u32), name);
    }
    let v = b.build().unwrap();
    let tools = [Tool::new("f", json!({"type": "integer"}))];
    let opts = PresetOptions::default().with_special_tokens(markers);
    let tag = presets::structural_tag(ToolSyntax::DeepSeek, &tools, &ToolChoice::Required, &opts)
        .unwrap();
    let g = Grammar::from_earley(tag.compile(&Default::default()).unwrap());
    let m = &mut Matcher::new(&v, &g).unwrap();
    let token = |i: usize| TokenId(256 + i as u32);
    // The text before each marker, and the marker.
    for (piece, marker) in [("", 0), ("", 1), ("function", 2), ("f\n```json\n42\n```", 3), ("", 4)]
    {
        walk_text(m, &v, piece);
        let t = token(marker);
        assert!(m.compute_mask().unwrap().contains(t), "{}", markers[marker]);
        m.consume_token(t).unwrap();
    }
    assert!(m.is_accepting());
}
