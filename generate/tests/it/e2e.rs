//! Short generations with the real model, checked independently.

use std::sync::OnceLock;

use generate::{ChatRequest, Format, Generator, Params, StopReason, Weights};
use serde_json::{Value, json};

fn generator(what: &str) -> Option<&'static Generator> {
    static G: OnceLock<Generator> = OnceLock::new();
    let path = testkit::model_or_skip(what)?;
    Some(G.get_or_init(|| {
        let mut file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        Generator::load(&mut file, Weights::AsStored).unwrap()
    }))
}

fn prompt(g: &Generator, user: &str) -> Vec<u32> {
    g.encode_prompt(&g.chat_prompt(&[json!({"role": "user", "content": user})], None).unwrap())
}

#[test]
fn a_json_schema_generation_is_valid_and_forcing_saves_passes() {
    let Some(g) = generator("generation under a JSON Schema") else { return };
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "pet": {"enum": ["cat", "dog", "none"]},
        },
        "required": ["name", "age", "pet"],
        "additionalProperties": false,
    });
    let grammar = Format::JsonSchema(schema.clone()).compile().unwrap();
    let p = prompt(g, "Describe a person as JSON with a name, an age and a pet.");
    let pre = g.prefill(&p).unwrap();
    let on =
        g.generate_after(&pre, Some(&grammar), &Params::default().with_max_tokens(60)).unwrap();
    assert_eq!(on.stop_reason, StopReason::Stop, "{on:?}");
    assert_eq!(on.accepted, Some(true));
    let doc: Value = serde_json::from_str(&on.output).unwrap();
    let validator = json_validator::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&doc), "{}", on.output);
    // `{"name": "` and `", "age": ` are forced at least.
    assert!(on.forced_tokens >= 4, "{on:?}");
    assert_eq!(
        on.forward_passes,
        1 + on.generated_tokens - on.forced_tokens,
        "one pass per sampled token"
    );

    let off = g
        .generate_after(
            &pre,
            Some(&grammar),
            &Params::default().with_max_tokens(60).with_forcing(false),
        )
        .unwrap();
    assert_eq!(off.forced_tokens, 0);
    assert_eq!(off.forward_passes, 1 + off.generated_tokens, "a pass per token and the stop");
    assert!(on.forward_passes < off.forward_passes);
    // Q4_1 logits of a batched pass equal single-token passes', so greedy
    // outputs agree unless the model prefers a non-canonical tokenization.
    assert_eq!(on.output, off.output);
}

#[test]
fn a_lark_grammar_generation_matches_an_independent_regex() {
    let Some(g) = generator("generation under a Lark grammar") else { return };
    let lark = r#"
start: "Colors: " COLOR (", " COLOR){1,2} "."
COLOR: "red" | "green" | "blue" | "yellow" | "black" | "white"
"#;
    let grammar = Format::Lark(lark.into()).compile().unwrap();
    let p = prompt(g, "Name two or three colors.");
    let out = g.generate(&p, Some(&grammar), &Params::default().with_max_tokens(30)).unwrap();
    let re = fancy_regex::Regex::new(
        r"^Colors: (red|green|blue|yellow|black|white)(, (red|green|blue|yellow|black|white)){1,2}\.$",
    )
    .unwrap();
    assert!(re.is_match(&out.output).unwrap(), "{out:?}");
    assert_eq!(out.stop_reason, StopReason::Stop);
}

#[test]
fn a_regex_generation_matches_the_regex_and_sampling_is_seeded() {
    let Some(g) = generator("generation under a regex") else { return };
    let pattern = r"[A-Z][a-z]{2,9} (19|20)[0-9]{2}";
    let grammar = Format::Regex(pattern.into()).compile().unwrap();
    let p = prompt(g, "Give a first name and a birth year.");
    let params = Params::default().with_max_tokens(20).with_sampling(0.8, 0.95, 7);
    let a = g.generate(&p, Some(&grammar), &params).unwrap();
    let re = fancy_regex::Regex::new(&format!("^(?:{pattern})$")).unwrap();
    assert!(re.is_match(&a.output).unwrap(), "{a:?}");
    let b = g.generate(&p, Some(&grammar), &params).unwrap();
    assert_eq!(a.output, b.output, "same seed, same output");
}

#[test]
fn a_required_tool_call_has_valid_arguments() {
    let Some(g) = generator("a tool-call request") else { return };
    let parameters = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 20},
                       "unit": {"enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
        "additionalProperties": false,
    });
    let req = json!({
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "strict": true,
                    "description": "Current weather of a city", "parameters": parameters}}],
        "tool_choice": "required",
        "max_tokens": 60,
    });
    let r = ChatRequest::parse(&req).unwrap();
    let grammar = r.grammar().unwrap().compile().unwrap();
    let text = g.chat_prompt(&r.prompt_messages(), None).unwrap();
    let out =
        g.generate(&g.encode_prompt(&text), Some(&grammar), &r.params(&Params::default())).unwrap();
    let answer = r.response(&out, "smollm2");
    let call = &answer["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather", "{answer}");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert!(json_validator::validator_for(&parameters).unwrap().is_valid(&args), "{args}");
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
}
