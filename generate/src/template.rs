//! Chat templates: the model's Jinja template (`tokenizer.chat_template`)
//! rendered with `minijinja`, as Hugging Face `transformers` renders it.
//!
//! `transformers` compiles chat templates with `trim_blocks` and
//! `lstrip_blocks`, the loop controls (`break`, `continue`) and a
//! `raise_exception` function, and passes `messages`, `tools`,
//! `add_generation_prompt`, `bos_token` and `eos_token`; we do the same,
//! with Python's string and dict methods (`strip`, `startswith`, `items`,
//! ...) from `minijinja-contrib`. The template comes from the model file, so
//! rendering runs on a fuel budget ([`DEFAULT_FUEL`] instructions) instead
//! of trusting it to terminate.

use minijinja::value::Serde;
use minijinja::{Environment, ErrorKind, Value as Jinja};
use serde_json::Value;

use crate::error::Error;

/// The instructions a template may execute in one rendering.
pub const DEFAULT_FUEL: u64 = 2_000_000;

/// A compiled chat template with the model's special tokens.
#[derive(Debug)]
pub struct ChatTemplate {
    env: Environment<'static>,
    bos: String,
    eos: String,
}

fn template_err(e: minijinja::Error) -> Error {
    // minijinja's `Display` names the template line; `{:#}` adds the
    // source excerpt, which is too long for one error line.
    Error::Template(e.to_string())
}

impl ChatTemplate {
    /// Compiles `source`; `bos` and `eos` are the texts of the model's
    /// beginning- and end-of-sequence tokens (`bos_token`, `eos_token` in
    /// the template).
    ///
    /// # Errors
    /// A template syntax error, with its line.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<ChatTemplate, Error> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(template_err)?;
        env.set_syntax(syntax);
        env.set_fuel(Some(DEFAULT_FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<Jinja, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_template_owned("chat", source.to_owned()).map_err(template_err)?;
        Ok(ChatTemplate { env, bos: bos.to_owned(), eos: eos.to_owned() })
    }

    /// Renders a conversation: `messages` in OpenAI's shape (`role`,
    /// `content`, and for assistant turns possibly `tool_calls`), the
    /// `tools` if any, and the assistant's header when
    /// `add_generation_prompt`.
    ///
    /// # Errors
    /// The template raised an exception, used something undefined in a
    /// way Jinja forbids, or ran out of fuel.
    pub fn render(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
        add_generation_prompt: bool,
    ) -> Result<String, Error> {
        let template = self.env.get_template("chat").map_err(template_err)?;
        let ctx = minijinja::context! {
            messages => Jinja::from(Serde(messages)),
            tools => tools.map(|t| Jinja::from(Serde(t))),
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos.as_str(),
            eos_token => self.eos.as_str(),
        };
        template.render(ctx).map_err(template_err)
    }
}

/// ChatML, for models whose file has no template.
pub const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + \
                          message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if \
                          add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// SmolLM2's template as its GGUF file carries it.
    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn smollm2_adds_its_default_system_turn() {
        let t = ChatTemplate::new(SMOLLM2, "<|im_start|>", "<|im_end|>").unwrap();
        let user = [json!({"role": "user", "content": "Hi"})];
        assert_eq!(
            t.render(&user, None, true).unwrap(),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by \
             Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let with_system = [json!({"role": "system", "content": "Be brief."}), user[0].clone()];
        assert_eq!(
            t.render(&with_system, None, false).unwrap(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        );
    }

    #[test]
    fn python_methods_trimming_and_exceptions_work() {
        let src = "{% for m in messages %}\n  {{ m.content.strip() | upper }}\n{% endfor %}\
                   {% if tools %}{{ tools | length }}{% endif %}\
                   {% if messages | length > 1 %}{{ raise_exception('one message only') }}{% endif %}";
        let t = ChatTemplate::new(src, "", "").unwrap();
        let one = [json!({"role": "user", "content": "  hi  "})];
        assert_eq!(t.render(&one, Some(&[json!({})]), false).unwrap(), "  HI\n1");
        let two = [one[0].clone(), one[0].clone()];
        let err = t.render(&two, None, false).unwrap_err().to_string();
        assert!(err.contains("one message only"), "{err}");
    }

    #[test]
    fn runaway_templates_run_out_of_fuel() {
        let t = ChatTemplate::new(
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
            "",
            "",
        )
        .unwrap();
        assert!(t.render(&[], None, false).is_err());
        assert!(ChatTemplate::new("{% for %}", "", "").is_err());
    }
}
