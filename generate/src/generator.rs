//! [`Generator`]: the model, its tokenizer, chat template and stop tokens,
//! and the decoding loop with masks and forced tokens.
//!
//! # The loop
//! After the prompt's forward pass, each step:
//! 1. (forcing on) takes the tokens the grammar forces now, in the
//!    tokenizer's canonical tokenization, and appends them without a model
//!    call;
//! 2. computes the mask; when it allows only stop tokens the text is
//!    complete and (forcing on) generation ends without another pass;
//! 3. runs one forward pass over every token not yet in the KV cache: the
//!    token sampled last and the forced tokens after it;
//! 4. masks the logits and samples a token; a stop token ends generation
//!    (the mask allows one only when the grammar accepts).
//!
//! So forward passes = 1 (the prompt) + sampled tokens (+ 1 for the stop
//! token when forcing is off), and forced tokens cost no pass of their own.
//! Timing: `forward_ms` (every pass, prompt included), `mask_ms` (masks and
//! consuming sampled tokens), `forced_ms` (computing and consuming forced
//! tokens), `total_ms` (everything, wall clock).

use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;
use std::time::Instant;

use bpe::{Allowed, GgufVocab};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde::Serialize;
use serde_json::Value;

use structgen::toktrie::TokenId;
use structgen::{DEFAULT_STOP_NAMES, Grammar, Vocabulary};

use crate::constraint::Constraint;
use crate::error::Error;
use crate::model::{Model, Session, Weights};
use crate::sampler;
use crate::template::{CHATML, ChatTemplate};

/// Sampling and stopping parameters of one generation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Params {
    /// Softmax temperature; 0 is greedy (the default).
    pub temperature: f32,
    /// Nucleus sampling: keep the most likely tokens up to this mass
    /// (default 1: all).
    pub top_p: f32,
    /// The seed of the sampler (default 0).
    pub seed: u64,
    /// The most tokens generated, forced ones included (default 512).
    pub max_tokens: usize,
    /// Append forced tokens without model calls (default on).
    pub forcing: bool,
    /// The repetition penalty of llama.cpp and Hugging Face
    /// (`repeat_penalty`, `repetition_penalty`): the logit of each token
    /// among the last [`repeat_last_n`](Self::repeat_last_n) generated ones
    /// (forced ones included) is divided by it when positive and multiplied
    /// by it when negative. 1 (the default) is off. A small model under
    /// greedy decoding tends to repeat a list item until the token limit;
    /// a penalty of about 1.1 makes closing the list win.
    pub repeat_penalty: f32,
    /// How many of the last generated tokens the penalty looks at (default 64).
    pub repeat_last_n: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
            max_tokens: 512,
            forcing: true,
            repeat_penalty: 1.0,
            repeat_last_n: 64,
        }
    }
}

impl Params {
    /// These parameters with `max_tokens`.
    pub fn with_max_tokens(mut self, n: usize) -> Params {
        self.max_tokens = n;
        self
    }

    /// These parameters with forcing on or off.
    pub fn with_forcing(mut self, on: bool) -> Params {
        self.forcing = on;
        self
    }

    /// These parameters with a repetition penalty over the last `last_n`
    /// tokens (see [`repeat_penalty`](Self::repeat_penalty)).
    pub fn with_repeat_penalty(mut self, penalty: f32, last_n: usize) -> Params {
        self.repeat_penalty = penalty;
        self.repeat_last_n = last_n;
        self
    }

    /// These parameters with a temperature, top-p and seed.
    pub fn with_sampling(mut self, temperature: f32, top_p: f32, seed: u64) -> Params {
        self.temperature = temperature;
        self.top_p = top_p;
        self.seed = seed;
        self
    }
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// A stop token (sampled, or the only token the grammar allowed).
    Stop,
    /// `max_tokens` tokens were generated.
    MaxTokens,
}

/// One generated token.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    /// The token.
    pub token: u32,
    /// Appended as a forced token (no model call).
    pub forced: bool,
    /// For a sampled token, the gap between the best and second-best
    /// allowed logit (`None` for forced tokens).
    pub gap: Option<f32>,
}

/// The result and the figures of one generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    /// The generated text (stop token excluded; invalid UTF-8 replaced).
    pub output: String,
    /// The generated tokens, forced ones included, in order.
    pub steps: Vec<Step>,
    /// Tokens of the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated (forced included, stop token excluded).
    pub generated_tokens: usize,
    /// Forward passes, the prompt's included.
    pub forward_passes: usize,
    /// Tokens appended as forced tokens.
    pub forced_tokens: usize,
    /// Time in the prompt's forward pass.
    pub prefill_ms: f64,
    /// Time in forward passes, the prompt's included.
    pub forward_ms: f64,
    /// Time computing masks and consuming sampled tokens.
    pub mask_ms: f64,
    /// Time computing and consuming forced tokens.
    pub forced_ms: f64,
    /// Time sampling.
    pub sample_ms: f64,
    /// Wall-clock time of the whole generation, the prompt's pass included.
    pub total_ms: f64,
    /// Generated tokens per second after the prompt:
    /// `generated_tokens / (total_ms - prefill_ms)`.
    pub tokens_per_s: f64,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Under a grammar: whether the output is complete (accepted).
    pub accepted: Option<bool>,
}

/// A prompt after its forward pass: the KV cache and the next logits.
/// Several generations can start from it (each clones the cache).
#[derive(Debug, Clone)]
pub struct Prefilled {
    session: Session,
    logits: Vec<f32>,
    prompt_tokens: usize,
    prefill_ms: f64,
}

impl Prefilled {
    /// Tokens of the prompt.
    pub fn prompt_tokens(&self) -> usize {
        self.prompt_tokens
    }

    /// Time of the prompt's forward pass.
    pub fn prefill_ms(&self) -> f64 {
        self.prefill_ms
    }
}

/// A model with its tokenizer, chat template and stop tokens.
#[derive(Debug)]
pub struct Generator {
    model: Model,
    gguf: GgufVocab,
    tokenizer: Arc<bpe::Tokenizer>,
    vocab: Vocabulary,
    template: ChatTemplate,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Generator {
    /// Loads a GGUF model file: its tokenizer (with `bpe`), chat template
    /// (ChatML when the file has none) and weights.
    ///
    /// # Errors
    /// The tokenizer, template or model cannot be loaded.
    pub fn load<R: Read + Seek>(reader: &mut R, weights: Weights) -> Result<Generator, Error> {
        let gguf = GgufVocab::read(&mut *reader).map_err(Error::Tokenizer)?;
        let tokenizer = Arc::new(gguf.tokenizer().map_err(Error::Tokenizer)?);
        let mut stop = gguf.stop_tokens();
        // Like llama.cpp, also stop on the end-of-text specials the model
        // has (`<|endoftext|>`, `<|im_end|>`, `<|eot_id|>`...).
        for (id, name) in tokenizer.special_tokens() {
            if DEFAULT_STOP_NAMES.contains(&name) && !stop.contains(&id) {
                stop.push(id);
            }
        }
        let name = |id: Option<u32>| id.and_then(|i| gguf.token(i)).unwrap_or("").to_owned();
        let template = ChatTemplate::new(
            gguf.chat_template.as_deref().unwrap_or(CHATML),
            &name(gguf.bos),
            &name(gguf.eos),
        )?;
        reader.seek(SeekFrom::Start(0)).map_err(|e| Error::Model(format!("seek: {e}")))?;
        let model = Model::load(reader, weights)?;
        if model.vocab_size() < tokenizer.vocab_size() {
            return Err(Error::Model(format!(
                "the model has {} output rows for {} tokens",
                model.vocab_size(),
                tokenizer.vocab_size()
            )));
        }
        let vocab = Vocabulary::builder()
            .tokenizer(tokenizer.clone())
            .stop_tokens(stop.into_iter().map(TokenId))
            .model_vocab_size(model.vocab_size())
            .build()
            .map_err(|e| Error::Model(format!("vocabulary: {e}")))?;
        Ok(Generator { model, gguf, tokenizer, vocab, template })
    }

    /// The tokenizer metadata of the file.
    pub fn gguf(&self) -> &GgufVocab {
        &self.gguf
    }

    /// The vocabulary as structgen sees it (trie, stop tokens, forced
    /// tokens by the tokenizer), for building other matchers.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    /// The tokenizer read from the file.
    pub fn tokenizer(&self) -> &Arc<bpe::Tokenizer> {
        &self.tokenizer
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The prompt text of a conversation (OpenAI-style messages), with the
    /// assistant's header, by the model's chat template.
    ///
    /// # Errors
    /// The template failed.
    pub fn chat_prompt(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
    ) -> Result<String, Error> {
        self.template.render(messages, tools, true)
    }

    /// The tokens of a prompt text: special-token names become their ids
    /// (the template writes them), and the BOS token goes first when the
    /// file asks for it and the text does not start with it.
    pub fn encode_prompt(&self, text: &str) -> Vec<u32> {
        let tok = &self.tokenizer;
        let mut ids = match tok.encode_with_specials(text, Allowed::All) {
            Ok(ids) => ids,
            // Unreachable with `Allowed::All`; encode as plain text then.
            Err(_) => tok.encode(text),
        };
        if let Some(bos) = self.gguf.bos.filter(|_| self.gguf.add_bos == Some(true))
            && ids.first() != Some(&bos)
        {
            ids.insert(0, bos);
        }
        ids
    }

    /// Runs the prompt's forward pass.
    ///
    /// # Errors
    /// An empty prompt, one longer than the context, or a model error.
    pub fn prefill(&self, prompt: &[u32]) -> Result<Prefilled, Error> {
        let t = Instant::now();
        let mut session = self.model.session();
        let logits = session.feed(prompt)?;
        Ok(Prefilled { session, logits, prompt_tokens: prompt.len(), prefill_ms: ms(t) })
    }

    /// Generates after `prompt` (its figures include its forward pass),
    /// constrained by `grammar` if given.
    ///
    /// # Errors
    /// As [`prefill`](Generator::prefill) and
    /// [`generate_after`](Generator::generate_after).
    pub fn generate(
        &self,
        prompt: &[u32],
        grammar: Option<&Grammar>,
        params: &Params,
    ) -> Result<Generation, Error> {
        let pre = self.prefill(prompt)?;
        self.generate_after(&pre, grammar, params)
    }

    /// Generates from a prefilled prompt (the prompt's pass is counted in
    /// the figures as if it had run now).
    ///
    /// # Errors
    /// The grammar names a special token the vocabulary lacks, the matcher
    /// stopped in an error, the context is full, or a model error.
    pub fn generate_after(
        &self,
        pre: &Prefilled,
        grammar: Option<&Grammar>,
        params: &Params,
    ) -> Result<Generation, Error> {
        let start = Instant::now();
        let mut g = Generation {
            output: String::new(),
            steps: Vec::new(),
            prompt_tokens: pre.prompt_tokens,
            generated_tokens: 0,
            forward_passes: 1,
            forced_tokens: 0,
            prefill_ms: pre.prefill_ms,
            forward_ms: pre.prefill_ms,
            mask_ms: 0.0,
            forced_ms: 0.0,
            sample_ms: 0.0,
            total_ms: 0.0,
            tokens_per_s: 0.0,
            stop_reason: StopReason::Stop,
            accepted: None,
        };
        let mut constraint = match grammar {
            Some(gr) => Some(Constraint::new(&self.vocab, gr, params.forcing)?),
            None => None,
        };
        let stop = self.vocab.stop_tokens();
        let mut session = pre.session.clone();
        let mut logits = pre.logits.clone();
        let mut rng = SmallRng::seed_from_u64(params.seed);
        // Tokens decided but not yet in the KV cache.
        let mut pending: Vec<u32> = Vec::new();
        g.stop_reason = loop {
            if g.steps.len() >= params.max_tokens {
                break StopReason::MaxTokens;
            }
            if let Some(c) = constraint.as_mut() {
                if params.forcing {
                    let t = Instant::now();
                    let forced = c.take_forced()?;
                    g.forced_ms += ms(t);
                    let room = params.max_tokens - g.steps.len();
                    for &token in forced.iter().take(room) {
                        g.steps.push(Step { token, forced: true, gap: None });
                        pending.push(token);
                    }
                    g.forced_tokens += forced.len().min(room);
                    if forced.len() >= room && !forced.is_empty() {
                        break StopReason::MaxTokens;
                    }
                }
                let t = Instant::now();
                let only_stop = c.only_stop_allowed()?;
                g.mask_ms += ms(t);
                if only_stop && params.forcing {
                    // The text is complete: the stop token is forced too.
                    break StopReason::Stop;
                }
            }
            if !pending.is_empty() {
                let t = Instant::now();
                logits = session.feed(&pending)?;
                g.forward_ms += ms(t);
                g.forward_passes += 1;
                pending.clear();
            }
            if let Some(c) = constraint.as_mut() {
                let t = Instant::now();
                c.mask_logits(&mut logits)?;
                g.mask_ms += ms(t);
            }
            let t = Instant::now();
            if params.repeat_penalty != 1.0 {
                let recent = g.steps.len().saturating_sub(params.repeat_last_n);
                let recent = g.steps[recent..].iter().map(|s| s.token);
                sampler::penalize(&mut logits, recent, params.repeat_penalty);
            }
            let pick = sampler::sample(&logits, params.temperature, params.top_p, &mut rng);
            g.sample_ms += ms(t);
            let Some(pick) = pick else {
                return Err(Error::Grammar("the mask allows no token (a dead end)".into()));
            };
            if stop.contains(&TokenId(pick.token)) {
                break StopReason::Stop;
            }
            if let Some(c) = constraint.as_mut() {
                let t = Instant::now();
                c.consume(pick.token)?;
                g.mask_ms += ms(t);
            }
            g.steps.push(Step { token: pick.token, forced: false, gap: Some(pick.gap) });
            pending.push(pick.token);
        };
        g.accepted = constraint.as_ref().map(Constraint::is_accepting);
        let ids: Vec<u32> = g.steps.iter().map(|s| s.token).collect();
        let bytes = self.tokenizer.decode(&ids).unwrap_or_default();
        g.output = String::from_utf8_lossy(&bytes).into_owned();
        g.generated_tokens = g.steps.len();
        g.total_ms = pre.prefill_ms + ms(start);
        let decode_ms = g.total_ms - g.prefill_ms;
        g.tokens_per_s =
            if decode_ms > 0.0 { g.generated_tokens as f64 * 1e3 / decode_ms } else { 0.0 };
        Ok(g)
    }
}
