//! The model: a GGUF LLaMA-family checkpoint run on the CPU by candle's
//! quantized LLaMA (`candle_transformers::models::quantized_llama`).
//!
//! [`Model::load`] reads the file (from any `Read + Seek`: the caller opens
//! it); a [`Session`] holds one sequence's KV cache and position. Feeding a
//! session several tokens is one forward pass over all of them (a
//! rectangular causal mask over the cached prefix) that returns the logits
//! of the last one: that is how forced tokens enter the cache. A session
//! clones cheaply (the weights and the cached tensors are shared), which
//! snapshots a prompt's cache for several generations.

use std::io::{Read, Seek};

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama::{MAX_SEQ_LEN, ModelWeights};

use crate::error::Error;

/// How the weights are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Weights {
    /// As stored in the file (Q4_1 for the SmolLM2 file). candle 0.11's
    /// Q4_1 matrix product is scalar on x86 (no AVX2 path), but a batched
    /// forward pass gives bit-identical logits to single-token passes.
    #[default]
    AsStored,
    /// Q4_0/Q4_1/Q5_0/Q5_1 tensors requantized to Q8_0 when loading: about
    /// 3× faster on the CPU through candle's AVX2 Q8_0 kernel, twice the
    /// memory, and logits that differ slightly (up to about 1.0 on
    /// SmolLM2) between a batched pass and single-token passes.
    Q8_0,
}

/// A loaded model.
#[derive(Debug, Clone)]
pub struct Model {
    weights: ModelWeights,
    device: Device,
    vocab_size: usize,
    context_length: usize,
    architecture: String,
}

/// One sequence: the KV cache of the tokens fed so far.
#[derive(Debug, Clone)]
pub struct Session {
    weights: ModelWeights,
    device: Device,
    /// Tokens in the cache.
    pos: usize,
    context_length: usize,
}

fn model_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Model(format!("{what}: {e}"))
}

impl Model {
    /// Loads a GGUF model of the `llama` family (LLaMA, SmolLM, Mistral
    /// without sliding windows...) onto the CPU.
    ///
    /// # Errors
    /// A file candle cannot read, or a missing tensor or metadata key.
    pub fn load<R: Read + Seek>(reader: &mut R, weights: Weights) -> Result<Model, Error> {
        let device = Device::Cpu;
        let content = gguf_file::Content::read(reader).map_err(|e| model_err("GGUF header", e))?;
        let architecture = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        if architecture != "llama" {
            return Err(Error::Model(format!(
                "architecture `{architecture}`: only `llama` models are supported"
            )));
        }
        let meta_usize =
            |key: &str| content.metadata.get(key).and_then(|v| v.to_u32().ok()).map(|v| v as usize);
        let context_length = meta_usize("llama.context_length").unwrap_or(MAX_SEQ_LEN);
        let context_length = context_length.min(MAX_SEQ_LEN);
        let vocab_size = match content.tensor_infos.get("token_embd.weight") {
            Some(info) => info.shape.dims()[0],
            None => return Err(Error::Model("no token_embd.weight tensor".into())),
        };
        let weights = match weights {
            Weights::AsStored => ModelWeights::from_gguf(content, reader, &device)
                .map_err(|e| model_err("loading the weights", e))?,
            Weights::Q8_0 => {
                let mut bytes = requantized(&content, reader, &device)?;
                let content = gguf_file::Content::read(&mut bytes)
                    .map_err(|e| model_err("requantized header", e))?;
                ModelWeights::from_gguf(content, &mut bytes, &device)
                    .map_err(|e| model_err("loading the requantized weights", e))?
            }
        };
        Ok(Model { weights, device, vocab_size, context_length, architecture })
    }

    /// Rows of the output layer (the logits' length).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The most tokens a session can hold: the model's context length,
    /// capped at candle's rotary table (4,096 positions).
    pub fn context_length(&self) -> usize {
        self.context_length
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> &str {
        &self.architecture
    }

    /// A new, empty sequence.
    pub fn session(&self) -> Session {
        let mut weights = self.weights.clone();
        weights.clear_kv_cache();
        Session {
            weights,
            device: self.device.clone(),
            pos: 0,
            context_length: self.context_length,
        }
    }
}

/// The file with its 4- and 5-bit tensors requantized to Q8_0, as GGUF bytes.
fn requantized<R: Read + Seek>(
    content: &gguf_file::Content,
    reader: &mut R,
    device: &Device,
) -> Result<std::io::Cursor<Vec<u8>>, Error> {
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors: Vec<(String, QTensor)> = Vec::with_capacity(names.len());
    for name in names {
        let t = content.tensor(reader, name, device).map_err(|e| model_err(name, e))?;
        let t = if matches!(
            t.dtype(),
            GgmlDType::Q4_0 | GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1
        ) {
            let f = t.dequantize(device).map_err(|e| model_err(name, e))?;
            QTensor::quantize(&f, GgmlDType::Q8_0).map_err(|e| model_err(name, e))?
        } else {
            t
        };
        tensors.push((name.clone(), t));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> =
        content.metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut out = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &refs).map_err(|e| model_err("requantizing", e))?;
    out.set_position(0);
    Ok(out)
}

impl Session {
    /// Tokens in the cache.
    pub fn len(&self) -> usize {
        self.pos
    }

    /// Whether no token was fed yet.
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// Feeds `tokens` in one forward pass and returns the logits that
    /// follow the last of them.
    ///
    /// # Errors
    /// No tokens, the context length exceeded, or a candle error.
    pub fn feed(&mut self, tokens: &[u32]) -> Result<Vec<f32>, Error> {
        if tokens.is_empty() {
            return Err(Error::Model("a forward pass needs at least one token".into()));
        }
        if self.pos + tokens.len() > self.context_length {
            return Err(Error::ContextFull { limit: self.context_length });
        }
        let input = Tensor::new(tokens, &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(|e| model_err("input", e))?;
        let logits = self
            .weights
            .forward(&input, self.pos)
            .and_then(|l| l.squeeze(0))
            .and_then(|l| l.to_vec1::<f32>())
            .map_err(|e| model_err("forward pass", e))?;
        self.pos += tokens.len();
        Ok(logits)
    }
}
