//! Structural tags for the tool-call and reasoning syntaxes of current
//! model families, built from OpenAI-style `tools` and `tool_choice`.
//!
//! | [`ToolSyntax`] | a call looks like | source |
//! | --- | --- | --- |
//! | `Hermes` (Qwen 2.5, Qwen 3, Hermes 2/3) | `<tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>` | the `tools` branch of Qwen2.5/Qwen3's `tokenizer_config.json` chat template; NousResearch Hermes-Function-Calling |
//! | `Llama3Json` (Llama 3.1, 3.2, 3.3) | `{"name": "f", "parameters": {…}}` | Meta's Llama 3.1 model card, "JSON based tool calling" |
//! | `Llama3PythonTag` (Llama 3.1) | `<|python_tag|>{"name": "f", "parameters": {…}}` (the special token, then the JSON) | Meta's Llama 3.1 prompt format (`<|python_tag|>` opens tool calls, `<|eom_id|>` ends them) |
//! | `Mistral` (Mistral 7B v0.3, Nemo, Small, Large 2) | `[TOOL_CALLS][{"name": "f", "arguments": {…}}, …]` | mistral-common's tool-call format (v3 tokenizers) |
//! | `DeepSeek` (DeepSeek V3, R1) | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` (calls joined by `\n`) | DeepSeek-V3's `tokenizer_config.json` chat template |
//!
//! With [`PresetOptions::reasoning`], the output starts with a reasoning
//! block `<think>…</think>` (any text, Qwen 3 / DeepSeek R1 / QwQ style)
//! before anything else.
//!
//! `tool_choice`:
//! - `none`: free text only (after the reasoning block).
//! - `auto`: free text; a call starts wherever the model writes the
//!   syntax's trigger; free text may follow the calls.
//! - `required`: the answer (after reasoning) starts with a call.
//! - a named function: exactly one call, of that function.
//!
//! `parallel_tool_calls: false` ([`PresetOptions::parallel_tool_calls`])
//! allows at most one call.
//!
//! Markers (`<tool_call>`, `</tool_call>`, `[TOOL_CALLS]`, DeepSeek's
//! `<｜…｜>`, `<think>`, `</think>`) are matched as the vocabulary's token
//! of that name when [`PresetOptions::special_tokens`] lists it, and as text
//! otherwise. A model whose tokenizer has the marker as an added token
//! (Mistral v3's `[TOOL_CALLS]` is id 5, Qwen 3's `<tool_call>` id 151657)
//! writes that one token, never the text spelled in ordinary tokens, and a
//! vocabulary matches added tokens by id only: matched as text, the marker
//! the model would write is masked out. `<|python_tag|>` is always the
//! special token.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Delimiter, Format, StructuralTag, Tag, TagsWithSeparator, TriggeredTags};
use crate::error::{Error, request_error};

/// A tool-call syntax (see the module docs for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSyntax {
    /// Qwen 2.5 / 3 and Hermes: `<tool_call>` JSON `</tool_call>`.
    Hermes,
    /// Llama 3.x JSON tool calls: `{"name": …, "parameters": …}`.
    Llama3Json,
    /// Llama 3.1 with `<|python_tag|>` before the JSON call.
    Llama3PythonTag,
    /// Mistral: `[TOOL_CALLS]` and a JSON list of calls.
    Mistral,
    /// DeepSeek V3 / R1.
    DeepSeek,
}

impl ToolSyntax {
    /// Every syntax.
    pub const ALL: [ToolSyntax; 5] = [
        ToolSyntax::Hermes,
        ToolSyntax::Llama3Json,
        ToolSyntax::Llama3PythonTag,
        ToolSyntax::Mistral,
        ToolSyntax::DeepSeek,
    ];

    /// The syntax of a name: `hermes` (or `qwen`), `llama3` (or
    /// `llama3_json`), `llama3_python_tag`, `mistral`, `deepseek`.
    pub fn from_name(name: &str) -> Option<ToolSyntax> {
        Some(match name {
            "hermes" | "qwen" | "qwen2.5" | "qwen3" => ToolSyntax::Hermes,
            "llama3" | "llama3_json" | "llama" => ToolSyntax::Llama3Json,
            "llama3_python_tag" => ToolSyntax::Llama3PythonTag,
            "mistral" => ToolSyntax::Mistral,
            "deepseek" | "deepseek_r1" | "deepseek_v3" => ToolSyntax::DeepSeek,
            _ => return None,
        })
    }

    /// The syntax's canonical name.
    pub fn name(self) -> &'static str {
        match self {
            ToolSyntax::Hermes => "hermes",
            ToolSyntax::Llama3Json => "llama3_json",
            ToolSyntax::Llama3PythonTag => "llama3_python_tag",
            ToolSyntax::Mistral => "mistral",
            ToolSyntax::DeepSeek => "deepseek",
        }
    }
}

/// A function the model may call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Tool {
    /// The function's name.
    pub name: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
}

impl Tool {
    /// A tool.
    pub fn new(name: impl Into<String>, parameters: Value) -> Tool {
        Tool { name: name.into(), parameters }
    }
}

/// OpenAI's `tool_choice`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// No calls.
    None,
    /// Calls where the model starts one.
    Auto,
    /// At least one call, first.
    Required,
    /// Exactly one call of this function.
    Function(String),
}

/// How the preset shapes the output.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PresetOptions {
    /// A `<think>…</think>` block first.
    pub reasoning: bool,
    /// Several calls allowed (OpenAI's `parallel_tool_calls`, default true).
    pub parallel_tool_calls: bool,
    /// The names of the vocabulary's special (and added) tokens: a marker
    /// named here is matched as that token, any other as text (see the
    /// module docs). Empty by default.
    pub special_tokens: BTreeSet<String>,
}

impl Default for PresetOptions {
    fn default() -> PresetOptions {
        PresetOptions {
            reasoning: false,
            parallel_tool_calls: true,
            special_tokens: BTreeSet::new(),
        }
    }
}

impl PresetOptions {
    /// These options with the reasoning block on or off.
    pub fn with_reasoning(mut self, on: bool) -> PresetOptions {
        self.reasoning = on;
        self
    }

    /// These options with parallel calls allowed or not.
    pub fn with_parallel_tool_calls(mut self, on: bool) -> PresetOptions {
        self.parallel_tool_calls = on;
        self
    }

    /// These options with the vocabulary's special tokens, by name
    /// (`bpe::Tokenizer::special_tokens` gives them).
    pub fn with_special_tokens<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> PresetOptions {
        self.special_tokens = names.into_iter().map(Into::into).collect();
        self
    }

    fn is_token(&self, marker: &str) -> bool {
        self.special_tokens.contains(marker)
    }

    /// A marker as a delimiter: the token, or the text.
    fn marker(&self, marker: &str) -> Delimiter {
        if self.is_token(marker) { Delimiter::token(marker) } else { Delimiter::text(marker) }
    }

    /// The tag `open` `before` `content` `after` `close`, where `open` and
    /// `close` are markers. A marker that is text joins its neighbouring
    /// text in the delimiter (so a trigger that is the marker's text stays
    /// a prefix of the begin, naming the tag); one that is a token is the
    /// delimiter, and the text moves into the content.
    fn marked_tag(
        &self,
        (open, before): (&str, &str),
        content: Format,
        (after, close): (&str, &str),
    ) -> Tag {
        let (begin, before) = self.join(open, before, |m, t| format!("{m}{t}"));
        let (end, after) = self.join(close, after, |m, t| format!("{t}{m}"));
        let mut parts: Vec<Format> = before.into_iter().chain([content]).chain(after).collect();
        let content = if parts.len() == 1 { parts.remove(0) } else { Format::Sequence(parts) };
        Tag::new(begin, content, end)
    }

    /// A marker and the text beside it: one text delimiter (`spell` puts
    /// them in order), or the token and the text as a format of its own.
    fn join(
        &self,
        marker: &str,
        text: &str,
        spell: impl Fn(&str, &str) -> String,
    ) -> (Delimiter, Option<Format>) {
        if self.is_token(marker) {
            let text = (!text.is_empty()).then(|| Format::ConstString(text.to_owned()));
            (Delimiter::token(marker), text)
        } else {
            (Delimiter::Text(spell(marker, text)), None)
        }
    }
}

/// OpenAI's `tools` array: `[{"type": "function", "function": {"name": …,
/// "parameters": {…}}}]` (a missing `parameters` is any object).
///
/// # Errors
/// [`ErrorKind::Request`](crate::ErrorKind::Request) with the pointer of a
/// malformed entry.
pub fn tools_from_openai(tools: &Value) -> Result<Vec<Tool>, Error> {
    let Some(list) = tools.as_array() else {
        return Err(request_error("", "expected an array of tools"));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let p = format!("/{i}");
        if let Some(kind) = t.get("type")
            && kind != "function"
        {
            return Err(request_error(&format!("{p}/type"), "expected \"function\""));
        }
        let Some(f) = t.get("function") else {
            return Err(request_error(&p, "missing field `function`"));
        };
        let Some(name) = f.get("name").and_then(Value::as_str) else {
            return Err(request_error(&format!("{p}/function/name"), "expected a string"));
        };
        let parameters = f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"}));
        out.push(Tool::new(name, parameters));
    }
    Ok(out)
}

/// OpenAI's `tool_choice`: `"none"`, `"auto"`, `"required"` or
/// `{"type": "function", "function": {"name": …}}`.
///
/// # Errors
/// [`ErrorKind::Request`](crate::ErrorKind::Request) for anything else.
pub fn tool_choice_from_openai(choice: &Value) -> Result<ToolChoice, Error> {
    match choice {
        Value::String(s) if s == "none" => Ok(ToolChoice::None),
        Value::String(s) if s == "auto" => Ok(ToolChoice::Auto),
        Value::String(s) if s == "required" => Ok(ToolChoice::Required),
        Value::Object(_) => match choice.pointer("/function/name").and_then(Value::as_str) {
            Some(name) => Ok(ToolChoice::Function(name.to_owned())),
            None => Err(request_error("/function/name", "expected a string")),
        },
        _ => Err(request_error("", "expected \"none\", \"auto\", \"required\" or a function")),
    }
}

/// The structural tag of `syntax` for these tools.
///
/// ```
/// use structgen::structural_tag::presets::{self, PresetOptions, Tool, ToolChoice, ToolSyntax};
/// use structgen::Grammar;
///
/// let tools = [Tool::new("add", serde_json::json!({"type": "object",
///     "properties": {"a": {"type": "integer"}}, "required": ["a"]}))];
/// let tag = presets::structural_tag(ToolSyntax::Hermes, &tools, &ToolChoice::Auto,
///     &PresetOptions::default().with_reasoning(true))?;
/// let g = Grammar::from_earley(tag.compile(&Default::default())?);
/// assert!(g.accepts(b"<think>hmm</think>Sure.<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>"));
/// assert!(!g.accepts(b"<think>hmm</think><tool_call>\n{\"name\": \"mul\", \"arguments\": {}}\n</tool_call>"));
/// # Ok::<(), structgen::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::Request`](crate::ErrorKind::Request) when the named
/// function is not among `tools`, or calls are required with no tools.
pub fn structural_tag(
    syntax: ToolSyntax,
    tools: &[Tool],
    choice: &ToolChoice,
    options: &PresetOptions,
) -> Result<StructuralTag, Error> {
    let selected: Vec<&Tool> = match choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Auto | ToolChoice::Required => tools.iter().collect(),
        ToolChoice::Function(name) => {
            let t: Vec<&Tool> = tools.iter().filter(|t| &t.name == name).collect();
            if t.is_empty() {
                return Err(request_error(
                    "/tool_choice",
                    format!("tool_choice names `{name}`, which is not among the tools"),
                ));
            }
            t
        }
    };
    if selected.is_empty() && *choice == ToolChoice::Required {
        return Err(request_error("/tools", "tool_choice `required` with no tools"));
    }
    let forced = matches!(choice, ToolChoice::Required | ToolChoice::Function(_));
    let single = matches!(choice, ToolChoice::Function(_)) || !options.parallel_tool_calls;
    let answer = if selected.is_empty() {
        Format::any_text()
    } else {
        let mut t = calls(syntax, &selected, single, options);
        t.at_least_one = forced;
        t.stop_after_first =
            t.stop_after_first || single || matches!(choice, ToolChoice::Function(_));
        Format::TriggeredTags(t)
    };
    let format = if options.reasoning {
        let think = options.marked_tag(("<think>", ""), Format::any_text(), ("", "</think>"));
        Format::Sequence(vec![Format::Tag(think), answer])
    } else {
        answer
    };
    Ok(StructuralTag::new(format))
}

/// `{"name": "NAME", "KEY": ` as JSON text.
fn name_prefix(name: &str, key: &str) -> String {
    format!("{{\"name\": {}, \"{key}\": ", Value::String(name.to_owned()))
}

fn json_call(tool: &Tool, key: &str) -> Tag {
    Tag::new(
        Delimiter::Text(name_prefix(&tool.name, key)),
        Format::JsonSchema(tool.parameters.clone()),
        Delimiter::text("}"),
    )
}

/// The triggered tags of one syntax (before `at_least_one` is set).
fn calls(syntax: ToolSyntax, tools: &[&Tool], single: bool, o: &PresetOptions) -> TriggeredTags {
    match syntax {
        ToolSyntax::Hermes => {
            let tags = tools
                .iter()
                .map(|t| {
                    o.marked_tag(
                        ("<tool_call>", &format!("\n{}", name_prefix(&t.name, "arguments"))),
                        Format::JsonSchema(t.parameters.clone()),
                        ("}\n", "</tool_call>"),
                    )
                })
                .collect();
            TriggeredTags::new(vec![o.marker("<tool_call>")], tags)
        }
        ToolSyntax::Llama3Json => {
            let tags = tools.iter().map(|t| json_call(t, "parameters")).collect();
            TriggeredTags::new(vec![Delimiter::text("{\"name\": ")], tags)
        }
        ToolSyntax::Llama3PythonTag => {
            let inner: Vec<Format> = tools
                .iter()
                .map(|t| {
                    Format::Sequence(vec![
                        Format::ConstString(name_prefix(&t.name, "parameters")),
                        Format::JsonSchema(t.parameters.clone()),
                        Format::ConstString("}".into()),
                    ])
                })
                .collect();
            let tag = Tag::new(
                Delimiter::token("<|python_tag|>"),
                Format::Or(inner),
                Delimiter::text(""),
            );
            let mut t = TriggeredTags::new(vec![Delimiter::token("<|python_tag|>")], vec![tag]);
            // Llama 3.1 makes one call per `<|python_tag|>` message.
            t.stop_after_first = true;
            t
        }
        ToolSyntax::Mistral => {
            let mut list = TagsWithSeparator::new(
                tools.iter().map(|t| json_call(t, "arguments")).collect(),
                Delimiter::text(", "),
            );
            list.at_least_one = true;
            list.stop_after_first = single;
            let tag =
                o.marked_tag(("[TOOL_CALLS]", "["), Format::TagsWithSeparator(list), ("]", ""));
            let mut t = TriggeredTags::new(vec![o.marker("[TOOL_CALLS]")], vec![tag]);
            t.stop_after_first = true;
            t
        }
        ToolSyntax::DeepSeek => {
            const SEP: &str = "<｜tool▁sep｜>";
            let calls = tools
                .iter()
                .map(|t| {
                    // `function` SEP `name` after the call's marker, with
                    // SEP a token (then in the content) or text.
                    let schema = Format::JsonSchema(t.parameters.clone());
                    let (before, content) = if o.is_token(SEP) {
                        let content = Format::Sequence(vec![
                            Format::Token(SEP.to_owned()),
                            Format::ConstString(format!("{}\n```json\n", t.name)),
                            schema,
                        ]);
                        ("function".to_owned(), content)
                    } else {
                        (format!("function{SEP}{}\n```json\n", t.name), schema)
                    };
                    o.marked_tag(
                        ("<｜tool▁call▁begin｜>", &before),
                        content,
                        ("\n```", "<｜tool▁call▁end｜>"),
                    )
                })
                .collect();
            let mut list = TagsWithSeparator::new(calls, Delimiter::text("\n"));
            list.at_least_one = true;
            list.stop_after_first = single;
            let tag = o.marked_tag(
                ("<｜tool▁calls▁begin｜>", ""),
                Format::TagsWithSeparator(list),
                ("", "<｜tool▁calls▁end｜>"),
            );
            let mut t = TriggeredTags::new(vec![o.marker("<｜tool▁calls▁begin｜>")], vec![tag]);
            t.stop_after_first = true;
            t
        }
    }
}
