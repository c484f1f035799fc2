//! Structural tags against llguidance 1.9.1 on the same Lark text: our
//! structure is compiled through the front door (`StructuralTag::compile`),
//! llguidance's side from `StructuralTag::to_lark` (the lazy-lexeme Lark
//! form llguidance's `StructTag` lowering uses), and every mask along each
//! input must be equal token for token, on o200k and Llama-3.
//!
//! The tools' schemas close their objects (`additionalProperties: false`):
//! with open objects, llguidance 1.9.1 also allows `\u` escapes in the
//! first tokens of an unknown key where ours does not (a JSON Schema
//! difference, not a structural-tag one).

use serde_json::json;
use structgen::structural_tag::StructuralTag;
use structgen::structural_tag::presets::{self, PresetOptions, Tool, ToolChoice, ToolSyntax};

use crate::mask::{check, encode, vocabularies};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "get_weather",
            json!({"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"],
            "additionalProperties": false}),
        ),
        Tool::new(
            "search",
            json!({"type": "object", "properties": {
            "q": {"type": "string", "maxLength": 40}}, "required": ["q"],
            "additionalProperties": false}),
        ),
    ]
}

fn hermes(name: &str, args: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
}

/// (case, structure, input)
fn cases() -> Vec<(String, StructuralTag, String)> {
    let t = tools();
    let preset = |s, c: ToolChoice, reasoning| {
        let o = PresetOptions::default().with_reasoning(reasoning);
        presets::structural_tag(s, &t, &c, &o).unwrap()
    };
    let weather = hermes("get_weather", r#"{"city": "Paris <tool_call> </tool_call>", "days": 3}"#);
    let search = hermes("search", r#"{"q": "rust"}"#);
    vec![
        (
            "hermes auto, reasoning, two calls".into(),
            preset(ToolSyntax::Hermes, ToolChoice::Auto, true),
            format!(
                "<think>The user wants weather. I saw <tool_ and </thi in text.</think>Let me look.\
                 {weather} and {search}\nDone <tool_call"
            ),
        ),
        (
            "hermes required, 0-token reasoning".into(),
            preset(ToolSyntax::Hermes, ToolChoice::Required, true),
            format!("<think></think>{search}"),
        ),
        (
            "llama3 json named".into(),
            preset(ToolSyntax::Llama3Json, ToolChoice::Function("search".into()), false),
            r#"{"name": "search", "parameters": {"q": "a {\"name\": b"}}"#.into(),
        ),
        (
            "mistral parallel".into(),
            preset(ToolSyntax::Mistral, ToolChoice::Auto, false),
            r#"Sure. [TOOL_CALLS][{"name": "search", "arguments": {"q": "x"}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]"#.into(),
        ),
        (
            "deepseek".into(),
            preset(ToolSyntax::DeepSeek, ToolChoice::Auto, true),
            "<think>ok</think>Calling.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": \"y\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>".into(),
        ),
        (
            "tags with separator, excludes".into(),
            StructuralTag::from_json(&json!({"type": "structural_tag", "format": {
                "type": "tags_with_separator", "separator": "\n", "at_least_one": true,
                "tags": [{"begin": "<note>", "end": "</note>",
                          "content": {"type": "any_text", "excludes": ["<note>"]}}]}})).unwrap(),
            "<note>one < two</note>\n<note>three</note>".into(),
        ),
    ]
}

#[test]
fn structural_tag_masks_equal_llguidance() {
    for v in vocabularies() {
        for (case, tag, input) in cases() {
            let lark = tag.to_lark().unwrap();
            let ours = tag.compile(&Default::default()).unwrap();
            let peer = llguidance::api::TopLevelGrammar::from_lark(lark);
            check(&v, &case, peer, &ours, &encode(&v, &input));
        }
    }
}
