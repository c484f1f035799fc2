//! OpenAI-style chat requests: `messages`, `response_format` and `tools`
//! turned into a prompt and a grammar, and the generation turned into a
//! `chat.completion` answer.
//!
//! - `response_format: {"type": "json_schema", "json_schema": {"name",
//!   "schema", "strict"}}` constrains the answer to the schema;
//!   `{"type": "json_object"}` to a JSON object; `{"type": "text"}` (or no
//!   `response_format`) leaves it free.
//! - `tools` (functions with JSON-Schema `parameters`) with `tool_choice`
//!   `"required"` (one or more calls), a named function (exactly one call
//!   to it) or `"auto"` (a call or free text; the default, as in OpenAI's
//!   API); `"none"` ignores the tools. The tools are described to the model
//!   in a system message, and a call is written in SmolLM2's syntax,
//!   `<tool_call>[{"name": "f", "arguments": {...}}]</tool_call>`; the
//!   grammar is exactly that syntax around each function's `parameters`
//!   schema, so the arguments are valid whether or not the function is
//!   marked `strict`.
//! - `max_tokens` (or `max_completion_tokens`), `temperature`, `top_p` and
//!   `seed` override the command line's.

use serde_json::{Value, json};

use crate::constraint::Format;
use crate::error::Error;
use crate::generator::{Generation, Params, StopReason};

/// The text before a list of tool calls.
pub const TOOL_CALL_OPEN: &str = "<tool_call>";
/// The text after a list of tool calls.
pub const TOOL_CALL_CLOSE: &str = "</tool_call>";

/// A function the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// What it does (for the model).
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
}

/// How the model must answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// Free text.
    Text,
    /// Text under a grammar (`response_format`).
    Constrained(Format),
    /// One or more tool calls (`tool_choice: "required"`).
    ToolCalls,
    /// Exactly one call to this function.
    Function(String),
    /// A tool call or free text (`tool_choice: "auto"`).
    Auto,
}

/// A parsed chat request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The conversation, each message with a string `content`.
    pub messages: Vec<Value>,
    /// The tools (empty without tools or with `tool_choice: "none"`).
    pub tools: Vec<Tool>,
    /// How to answer.
    pub answer: Answer,
    /// `max_tokens`, if given.
    pub max_tokens: Option<usize>,
    /// `temperature`, if given.
    pub temperature: Option<f32>,
    /// `top_p`, if given.
    pub top_p: Option<f32>,
    /// `seed`, if given.
    pub seed: Option<u64>,
}

fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    Error::Request(format!("{path}: {what}"))
}

/// The text of a message's `content`: a string, null, or a list of parts
/// whose `text` parts are joined.
fn content_text(content: Option<&Value>, path: &str) -> Result<String, Error> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for (i, p) in parts.iter().enumerate() {
                match p.get("text").and_then(Value::as_str) {
                    Some(t) => out.push_str(t),
                    None => {
                        return Err(bad(&format!("{path}[{i}]"), "only text parts are supported"));
                    }
                }
            }
            Ok(out)
        }
        Some(_) => Err(bad(path, "expected a string or a list of text parts")),
    }
}

/// Tool calls written in the model's syntax (for assistant turns in the
/// history).
fn tool_calls_text(calls: &[Value], path: &str) -> Result<String, Error> {
    let mut list = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let f = c.get("function").ok_or_else(|| bad(&format!("{path}[{i}]"), "no `function`"))?;
        let name = f.get("name").and_then(Value::as_str).unwrap_or("");
        let args = match f.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s)
                .map_err(|e| bad(&format!("{path}[{i}].function.arguments"), e))?,
            Some(v) => v.clone(),
            None => json!({}),
        };
        list.push(json!({"name": name, "arguments": args}));
    }
    Ok(format!("{TOOL_CALL_OPEN}{}{TOOL_CALL_CLOSE}", json_dumps(&Value::Array(list))))
}

/// JSON as Python's `json.dumps` writes it (`", "` and `": "`), the style
/// the grammars generate.
pub fn json_dumps(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(json_dumps).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), json_dumps(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        other => other.to_string(),
    }
}

impl ChatRequest {
    /// Parses a request.
    ///
    /// # Errors
    /// A missing or malformed field (named by its path), or an unsupported
    /// `response_format` or `tool_choice`.
    pub fn parse(v: &Value) -> Result<ChatRequest, Error> {
        let raw = v
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("messages", "expected a list of messages"))?;
        let mut messages = Vec::with_capacity(raw.len());
        for (i, m) in raw.iter().enumerate() {
            let path = format!("messages[{i}]");
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(&path, "no `role` string"))?;
            let mut content = content_text(m.get("content"), &format!("{path}.content"))?;
            if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                content.push_str(&tool_calls_text(calls, &format!("{path}.tool_calls"))?);
            }
            messages.push(json!({"role": role, "content": content}));
        }
        if messages.is_empty() {
            return Err(bad("messages", "the list is empty"));
        }
        let mut tools = Vec::new();
        if let Some(list) = v.get("tools").and_then(Value::as_array) {
            for (i, t) in list.iter().enumerate() {
                let path = format!("tools[{i}]");
                if t.get("type").and_then(Value::as_str).is_some_and(|ty| ty != "function") {
                    return Err(bad(&path, "only `function` tools are supported"));
                }
                let f = t.get("function").ok_or_else(|| bad(&path, "no `function`"))?;
                let name = f
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(&format!("{path}.function"), "no `name`"))?;
                tools.push(Tool {
                    name: name.to_owned(),
                    description: f.get("description").and_then(Value::as_str).unwrap_or("").into(),
                    parameters: f.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
                });
            }
        }
        let answer = match (v.get("tool_choice"), tools.is_empty()) {
            (Some(Value::String(s)), _) if s == "none" => {
                tools.clear();
                response_format(v.get("response_format"))?
            }
            (_, true) => response_format(v.get("response_format"))?,
            (None, false) => Answer::Auto,
            (Some(Value::String(s)), false) if s == "auto" => Answer::Auto,
            (Some(Value::String(s)), false) if s == "required" => Answer::ToolCalls,
            (Some(choice @ Value::Object(_)), false) => {
                let name = choice
                    .get("function")
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        bad("tool_choice", "expected {\"function\": {\"name\": ...}}")
                    })?;
                if !tools.iter().any(|t| t.name == name) {
                    return Err(bad("tool_choice.function.name", format!("no tool `{name}`")));
                }
                Answer::Function(name.to_owned())
            }
            (Some(other), false) => return Err(bad("tool_choice", format!("unsupported {other}"))),
        };
        let uint = |k: &str| v.get(k).and_then(Value::as_u64);
        Ok(ChatRequest {
            messages,
            tools,
            answer,
            max_tokens: uint("max_completion_tokens").or(uint("max_tokens")).map(|n| n as usize),
            temperature: v.get("temperature").and_then(Value::as_f64).map(|t| t as f32),
            top_p: v.get("top_p").and_then(Value::as_f64).map(|t| t as f32),
            seed: uint("seed"),
        })
    }

    /// `params` with the request's overrides.
    pub fn params(&self, params: &Params) -> Params {
        let mut p = params.clone();
        if let Some(n) = self.max_tokens {
            p.max_tokens = n;
        }
        if let Some(t) = self.temperature {
            p.temperature = t;
        }
        if let Some(t) = self.top_p {
            p.top_p = t;
        }
        if let Some(s) = self.seed {
            p.seed = s;
        }
        p
    }

    /// The messages to render: with tools, a system message describing
    /// them and the call syntax comes first (merged into the request's own
    /// system message if it has one).
    pub fn prompt_messages(&self) -> Vec<Value> {
        if self.tools.is_empty() {
            return self.messages.clone();
        }
        let list: Vec<Value> = self
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        let mut text = format!(
            "You can call the functions listed between <tools> and </tools>. To call them, \
             answer with {TOOL_CALL_OPEN}[{{\"name\": \"function name\", \"arguments\": \
             {{...}}}}]{TOOL_CALL_CLOSE}, giving arguments that match the function's \
             parameters.\n<tools>{}</tools>",
            json_dumps(&Value::Array(list))
        );
        let mut out = self.messages.clone();
        if out[0].get("role").and_then(Value::as_str) == Some("system") {
            let own = out[0].get("content").and_then(Value::as_str).unwrap_or("").to_owned();
            text = format!("{own}\n\n{text}");
            out[0] = json!({"role": "system", "content": text});
        } else {
            out.insert(0, json!({"role": "system", "content": text}));
        }
        out
    }

    /// The grammar of the answer (`None` for free text).
    pub fn grammar(&self) -> Option<Format> {
        let call = |t: &Tool| {
            json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": false,
            })
        };
        let calls = |tools: &[&Tool], min: u64, max: Option<u64>| {
            let items: Vec<Value> = tools.iter().map(|t| call(t)).collect();
            let mut schema = json!({"type": "array", "items": {"anyOf": items}, "minItems": min});
            if let Some(max) = max {
                schema["maxItems"] = json!(max);
            }
            Format::JsonSchemaBetween {
                before: TOOL_CALL_OPEN.into(),
                schema,
                after: TOOL_CALL_CLOSE.into(),
            }
        };
        let all: Vec<&Tool> = self.tools.iter().collect();
        match &self.answer {
            Answer::Text | Answer::Auto => None,
            Answer::Constrained(g) => Some(g.clone()),
            Answer::ToolCalls => Some(calls(&all, 1, None)),
            Answer::Function(name) => {
                let one: Vec<&Tool> = all.into_iter().filter(|t| &t.name == name).collect();
                Some(calls(&one, 1, Some(1)))
            }
        }
    }

    /// The `chat.completion` answer for a generation: a `content`, or
    /// `tool_calls` with the arguments as JSON strings when the output is
    /// in the tool-call syntax.
    pub fn response(&self, g: &Generation, model: &str) -> Value {
        let calls = parse_tool_calls(&g.output).filter(|_| !self.tools.is_empty());
        let (message, finish) = match calls {
            Some(calls) => {
                let list: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        json!({"id": format!("call_{i}"), "type": "function",
                               "function": {"name": name, "arguments": args.to_string()}})
                    })
                    .collect();
                (json!({"role": "assistant", "content": null, "tool_calls": list}), "tool_calls")
            }
            None => (json!({"role": "assistant", "content": g.output}), "stop"),
        };
        let finish = if g.stop_reason == StopReason::MaxTokens { "length" } else { finish };
        json!({
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": g.prompt_tokens,
                "completion_tokens": g.generated_tokens,
                "total_tokens": g.prompt_tokens + g.generated_tokens,
            },
        })
    }
}

fn response_format(v: Option<&Value>) -> Result<Answer, Error> {
    let Some(v) = v else { return Ok(Answer::Text) };
    match v.get("type").and_then(Value::as_str) {
        Some("text") => Ok(Answer::Text),
        Some("json_object") => Ok(Answer::Constrained(Format::JsonObject)),
        Some("json_schema") => {
            let schema = v
                .get("json_schema")
                .and_then(|j| j.get("schema"))
                .ok_or_else(|| bad("response_format.json_schema", "no `schema`"))?;
            Ok(Answer::Constrained(Format::JsonSchema(schema.clone())))
        }
        other => Err(bad("response_format.type", format!("unsupported {other:?}"))),
    }
}

/// The calls of an output in the tool-call syntax: `(name, arguments)`.
pub fn parse_tool_calls(output: &str) -> Option<Vec<(String, Value)>> {
    let body = output.trim().strip_prefix(TOOL_CALL_OPEN)?.strip_suffix(TOOL_CALL_CLOSE)?;
    let list: Vec<Value> = serde_json::from_str(body).ok()?;
    list.into_iter()
        .map(|c| {
            let name = c.get("name")?.as_str()?.to_owned();
            Some((name, c.get("arguments")?.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weather() -> Value {
        json!({
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "strict": true,
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"], "additionalProperties": false}}}],
            "tool_choice": "required",
        })
    }

    #[test]
    fn tools_become_a_system_message_and_a_grammar() {
        let r = ChatRequest::parse(&weather()).unwrap();
        assert_eq!(r.answer, Answer::ToolCalls);
        let msgs = r.prompt_messages();
        assert_eq!(msgs.len(), 2);
        assert!(msgs[0]["content"].as_str().unwrap().contains("\"get_weather\""));
        let g = r.grammar().unwrap().compile().unwrap();
        assert!(g.accepts(
            br#"<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_call>"#
        ));
        assert!(
            !g.accepts(br#"<tool_call>[{"name": "get_weather", "arguments": {}}]</tool_call>"#)
        );
        assert!(!g.accepts(br#"<tool_call>[]</tool_call>"#));
    }

    #[test]
    fn response_formats_and_tool_choices_parse() {
        let mut v = weather();
        v["tool_choice"] = json!({"type": "function", "function": {"name": "get_weather"}});
        assert_eq!(ChatRequest::parse(&v).unwrap().answer, Answer::Function("get_weather".into()));
        v["tool_choice"] = json!({"type": "function", "function": {"name": "nope"}});
        assert!(ChatRequest::parse(&v).unwrap_err().to_string().contains("nope"));
        v["tool_choice"] = json!("none");
        v["response_format"] = json!({"type": "json_object"});
        let r = ChatRequest::parse(&v).unwrap();
        assert!(r.tools.is_empty());
        assert_eq!(r.answer, Answer::Constrained(Format::JsonObject));
        let bad = json!({"messages": [{"content": "x"}]});
        assert!(ChatRequest::parse(&bad).unwrap_err().to_string().contains("messages[0]"));
    }

    #[test]
    fn tool_calls_in_history_and_answers_round_trip() {
        let v = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
        ]});
        let r = ChatRequest::parse(&v).unwrap();
        assert_eq!(r.messages[0]["content"], "hi");
        let text = r.messages[1]["content"].as_str().unwrap();
        assert_eq!(text, r#"<tool_call>[{"name": "f", "arguments": {"a": 1}}]</tool_call>"#);
        assert_eq!(parse_tool_calls(text), Some(vec![("f".into(), json!({"a": 1}))]));
    }
}
