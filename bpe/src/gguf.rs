//! Loading the tokenizer of a GGUF model file (llama.cpp's format).
//!
//! A GGUF file starts with its metadata: a header (magic `GGUF`, version,
//! tensor count, key-value count) and typed key-value pairs, all little
//! endian; the tensors follow. The tokenizer lives in the `tokenizer.*` keys
//! (see llama.cpp's `gguf-py/gguf/constants.py`):
//!
//! | key | what |
//! | --- | --- |
//! | `tokenizer.ggml.model` | `gpt2` (byte-level BPE with merges) or `llama` (SentencePiece, scores) |
//! | `tokenizer.ggml.pre` | the pre-tokenizer's name (`smollm`, `llama-bpe`, `qwen2`, ...) |
//! | `tokenizer.ggml.tokens` | the token strings, by id |
//! | `tokenizer.ggml.token_type` | 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte |
//! | `tokenizer.ggml.merges` | `gpt2`: the merges, `"left right"`, by priority |
//! | `tokenizer.ggml.scores` | `llama`: each token's score |
//! | `tokenizer.ggml.{bos,eos,eot,eom,unknown,padding}_token_id` | special ids |
//! | `tokenizer.chat_template` | the Jinja chat template |
//!
//! [`GgufVocab::read`] reads the metadata from any [`Read`] (it stops
//! before the tensors, so a caller can hand it a file without loading the
//! weights) and keeps the tokenizer keys; [`GgufVocab::tokenizer`] builds
//! the [`Tokenizer`]. The vocabulary is described to the `tokenizer.json`
//! loader as the equivalent Hugging Face document (the two formats hold the
//! same data, and llama.cpp's converter writes one from the other), so both
//! share one builder and its checks:
//!
//! - `gpt2`: tokens are in GPT-2's byte-level alphabet; merges by position;
//!   `tokenizer.ggml.pre` picks the split [`Pattern`] (`smollm`,
//!   `starcoder`, `refact`, `command-r`, `codeshell`, `exaone`:
//!   [`Pattern::Gpt2Digits`]; `gpt-2`, `mpt`, `olmo`, `jais`:
//!   [`Pattern::Gpt2`]; `llama3`, `llama-v3`, `llama-bpe`: [`Pattern::Cl100k`]
//!   with whole-word tokens first, as llama.cpp's `ignore_merges`; `qwen2`:
//!   [`Pattern::Qwen2`]; `gpt-4o`: [`Pattern::O200k`]); any other name is an
//!   error rather than a silently different split.
//! - `llama`: SentencePiece pieces (`▁` for a space, `<0xNN>` byte tokens)
//!   merged by score: two adjacent parts merge when their concatenation is
//!   a token, highest score first, leftmost first among equals, which is
//!   a merge list ordered by the result's score. A space is put in front
//!   of the text when `tokenizer.ggml.add_space_prefix` is true (the
//!   default).
//! - Control, user-defined, unknown and unused tokens become special
//!   tokens (matched by name only when allowed, like added tokens).
//!
//! The limits ([`GgufLimits`]) bound the metadata read, the length of any
//! string or array and the nesting of arrays, so a corrupt header fails
//! fast instead of allocating. Errors carry the byte offset and the key.

use std::io::Read;

use serde_json::{Map, Value, json};

use crate::error::LoadError;
use crate::pretok::Pattern;
use crate::tokenizer::Tokenizer;

/// Limits on what [`GgufVocab::read_with_limits`] reads.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GgufLimits {
    /// The most metadata bytes read (default 256 MiB; the metadata of a
    /// 256k-token vocabulary is about 10 MB).
    pub max_metadata_bytes: u64,
    /// The most elements of one array (default 16 Mi).
    pub max_array_len: u64,
    /// The most nested array levels (default 4).
    pub max_depth: usize,
}

impl Default for GgufLimits {
    fn default() -> GgufLimits {
        GgufLimits { max_metadata_bytes: 256 << 20, max_array_len: 16 << 20, max_depth: 4 }
    }
}

impl GgufLimits {
    /// Sets [`max_metadata_bytes`](GgufLimits::max_metadata_bytes).
    pub fn with_max_metadata_bytes(mut self, n: u64) -> GgufLimits {
        self.max_metadata_bytes = n;
        self
    }
}

/// The tokenizer metadata of a GGUF file (the `tokenizer.*` keys and the
/// architecture's name).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GgufVocab {
    /// `general.architecture` (`llama`, `qwen2`, ...).
    pub architecture: Option<String>,
    /// `tokenizer.ggml.model`: `gpt2` or `llama`.
    pub model: String,
    /// `tokenizer.ggml.pre`: the pre-tokenizer's name.
    pub pre: Option<String>,
    /// Token strings by id (byte-level or SentencePiece spelling).
    pub tokens: Vec<String>,
    /// Token types by id (empty when absent: all normal).
    pub token_types: Vec<i32>,
    /// Merges, `"left right"`, by priority (`gpt2`).
    pub merges: Vec<String>,
    /// Scores by id (`llama`).
    pub scores: Vec<f32>,
    /// Beginning-of-sequence id.
    pub bos: Option<u32>,
    /// End-of-sequence id.
    pub eos: Option<u32>,
    /// End-of-turn id.
    pub eot: Option<u32>,
    /// End-of-message id (Llama 3.1 tool calls).
    pub eom: Option<u32>,
    /// Unknown-token id.
    pub unk: Option<u32>,
    /// Padding id.
    pub pad: Option<u32>,
    /// `tokenizer.ggml.add_bos_token`.
    pub add_bos: Option<bool>,
    /// `tokenizer.ggml.add_eos_token`.
    pub add_eos: Option<bool>,
    /// `tokenizer.ggml.add_space_prefix` (`llama` models; absent: true).
    pub add_space_prefix: Option<bool>,
    /// `tokenizer.chat_template`: the Jinja chat template.
    pub chat_template: Option<String>,
}

/// GGUF value types.
const T_U8: u32 = 0;
const T_I8: u32 = 1;
const T_U16: u32 = 2;
const T_I16: u32 = 3;
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_F32: u32 = 6;
const T_BOOL: u32 = 7;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;
const T_U64: u32 = 10;
const T_I64: u32 = 11;
const T_F64: u32 = 12;

/// One metadata value as kept: integers widened, arrays of what we keep.
enum Kept {
    Int(i128),
    Bool(bool),
    Str(String),
    Strings(Vec<String>),
    Ints(Vec<i64>),
    Floats(Vec<f32>),
    /// A value we do not need (skipped).
    Skipped,
}

/// A counting little-endian reader with the limits.
struct Cursor<'a, R> {
    inner: R,
    offset: u64,
    limits: &'a GgufLimits,
}

fn gguf_err(offset: u64, message: impl Into<String>) -> LoadError {
    LoadError::Gguf { offset, message: message.into() }
}

impl<R: Read> Cursor<'_, R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], LoadError> {
        self.budget(N as u64)?;
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b).map_err(|e| self.io(e))?;
        self.offset += N as u64;
        Ok(b)
    }

    fn budget(&self, n: u64) -> Result<(), LoadError> {
        if self.offset.saturating_add(n) > self.limits.max_metadata_bytes {
            return Err(gguf_err(
                self.offset,
                format!(
                    "the metadata exceeds the limit of {} bytes",
                    self.limits.max_metadata_bytes
                ),
            ));
        }
        Ok(())
    }

    fn io(&self, e: std::io::Error) -> LoadError {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            gguf_err(self.offset, "the file ends inside the metadata")
        } else {
            gguf_err(self.offset, format!("read error: {e}"))
        }
    }

    fn u32(&mut self) -> Result<u32, LoadError> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }

    fn u64(&mut self) -> Result<u64, LoadError> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }

    fn string_bytes(&mut self, keep: bool) -> Result<Vec<u8>, LoadError> {
        let at = self.offset;
        let n = self.u64()?;
        self.budget(n).map_err(|_| {
            gguf_err(at, format!("a string of {n} bytes exceeds the metadata limit"))
        })?;
        let mut out = Vec::new();
        let got = if keep {
            (&mut self.inner).take(n).read_to_end(&mut out).map_err(|e| self.io(e))? as u64
        } else {
            std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())
                .map_err(|e| self.io(e))?
        };
        self.offset += got;
        if got != n {
            return Err(gguf_err(self.offset, "the file ends inside a string"));
        }
        Ok(out)
    }

    fn string(&mut self) -> Result<String, LoadError> {
        let at = self.offset;
        String::from_utf8(self.string_bytes(true)?)
            .map_err(|_| gguf_err(at, "a string is not valid UTF-8"))
    }

    /// An integer of integer type `t`, or `None` for another type.
    fn int(&mut self, t: u32) -> Result<Option<i128>, LoadError> {
        Ok(Some(match t {
            T_U8 => u8::from_le_bytes(self.bytes()?).into(),
            T_I8 => i8::from_le_bytes(self.bytes()?).into(),
            T_U16 => u16::from_le_bytes(self.bytes()?).into(),
            T_I16 => i16::from_le_bytes(self.bytes()?).into(),
            T_U32 => u32::from_le_bytes(self.bytes()?).into(),
            T_I32 => i32::from_le_bytes(self.bytes()?).into(),
            T_U64 => u64::from_le_bytes(self.bytes()?).into(),
            T_I64 => i64::from_le_bytes(self.bytes()?).into(),
            _ => return Ok(None),
        }))
    }

    /// A scalar of type `t` as an integer, float or bool.
    fn scalar(&mut self, t: u32) -> Result<Kept, LoadError> {
        if let Some(i) = self.int(t)? {
            return Ok(Kept::Int(i));
        }
        Ok(match t {
            // No float scalar is used (`rope.freq_base` and the like are
            // the model's business).
            T_F32 => {
                self.bytes::<4>()?;
                Kept::Skipped
            }
            T_F64 => {
                self.bytes::<8>()?;
                Kept::Skipped
            }
            T_BOOL => Kept::Bool(self.bytes::<1>()?[0] != 0),
            _ => return Err(gguf_err(self.offset, format!("unknown value type {t}"))),
        })
    }

    /// A value of type `t`; arrays are kept only when `keep`.
    fn value(&mut self, t: u32, keep: bool, depth: usize) -> Result<Kept, LoadError> {
        match t {
            T_STRING => {
                if keep {
                    Ok(Kept::Str(self.string()?))
                } else {
                    self.string_bytes(false)?;
                    Ok(Kept::Skipped)
                }
            }
            T_ARRAY => self.array(keep, depth),
            _ => self.scalar(t),
        }
    }

    fn array(&mut self, keep: bool, depth: usize) -> Result<Kept, LoadError> {
        let at = self.offset;
        if depth >= self.limits.max_depth {
            return Err(gguf_err(at, "arrays nested deeper than the limit"));
        }
        let t = self.u32()?;
        let n = self.u64()?;
        if n > self.limits.max_array_len {
            return Err(gguf_err(
                at,
                format!("an array of {n} elements exceeds the limit {}", self.limits.max_array_len),
            ));
        }
        // Capacity grows with what was read, never from `n` alone beyond a
        // bound: a corrupt length cannot make us allocate.
        let cap = n.min(1 << 16) as usize;
        match (t, keep) {
            (T_STRING, true) => {
                let mut v = Vec::with_capacity(cap);
                for _ in 0..n {
                    v.push(self.string()?);
                }
                Ok(Kept::Strings(v))
            }
            (T_F32, true) => {
                let mut v = Vec::with_capacity(cap);
                for _ in 0..n {
                    v.push(f32::from_le_bytes(self.bytes()?));
                }
                Ok(Kept::Floats(v))
            }
            (T_U8 | T_I8 | T_U16 | T_I16 | T_U32 | T_I32 | T_U64 | T_I64, true) => {
                let mut v = Vec::with_capacity(cap);
                while let Some(i) = self.int(t)? {
                    v.push(i64::try_from(i).unwrap_or(i64::MAX));
                    if v.len() as u64 == n {
                        break;
                    }
                }
                Ok(Kept::Ints(v))
            }
            _ => {
                for _ in 0..n {
                    self.value(t, false, depth + 1)?;
                }
                Ok(Kept::Skipped)
            }
        }
    }
}

/// The keys [`GgufVocab`] keeps.
fn wanted(key: &str) -> bool {
    key == "general.architecture" || key.starts_with("tokenizer.")
}

impl GgufVocab {
    /// Reads the metadata of a GGUF file (versions 2 and 3, little endian)
    /// with the default [`GgufLimits`], stopping before the tensors.
    ///
    /// # Errors
    /// Not a GGUF file, an unsupported version, a truncated or corrupt
    /// header, a limit exceeded, or a `tokenizer.*` key of the wrong type;
    /// each with its byte offset.
    pub fn read(reader: impl Read) -> Result<GgufVocab, LoadError> {
        GgufVocab::read_with_limits(reader, &GgufLimits::default())
    }

    /// [`read`](GgufVocab::read) with explicit limits.
    ///
    /// # Errors
    /// As [`read`](GgufVocab::read).
    pub fn read_with_limits(
        reader: impl Read,
        limits: &GgufLimits,
    ) -> Result<GgufVocab, LoadError> {
        let mut c = Cursor { inner: reader, offset: 0, limits };
        if &c.bytes::<4>()? != b"GGUF" {
            return Err(gguf_err(0, "not a GGUF file (the magic is not `GGUF`)"));
        }
        let version = c.u32()?;
        if version != 2 && version != 3 {
            let hint = if version.swap_bytes() <= 3 { " (a big-endian file)" } else { "" };
            return Err(gguf_err(4, format!("unsupported GGUF version {version}{hint}")));
        }
        let _tensors = c.u64()?;
        let kv_count = c.u64()?;
        let mut out = GgufVocab::default();
        for _ in 0..kv_count {
            let at = c.offset;
            let key = c.string()?;
            let t = c.u32()?;
            let keep = wanted(&key);
            let value = c.value(t, keep, 0)?;
            if keep {
                out.set(&key, value).map_err(|m| gguf_err(at, format!("key `{key}`: {m}")))?;
            }
        }
        if out.model.is_empty() {
            return Err(gguf_err(c.offset, "no `tokenizer.ggml.model` key"));
        }
        if out.tokens.is_empty() {
            return Err(gguf_err(c.offset, "no `tokenizer.ggml.tokens` key"));
        }
        Ok(out)
    }

    fn set(&mut self, key: &str, v: Kept) -> Result<(), String> {
        let id = |v: Kept| match v {
            Kept::Int(i) => u32::try_from(i).map_err(|_| format!("id {i} is out of range")),
            _ => Err("expected an integer".to_owned()),
        };
        let flag = |v: Kept| match v {
            Kept::Bool(b) => Ok(b),
            _ => Err("expected a bool".to_owned()),
        };
        let text = |v: Kept| match v {
            Kept::Str(s) => Ok(s),
            _ => Err("expected a string".to_owned()),
        };
        match key {
            "general.architecture" => self.architecture = Some(text(v)?),
            "tokenizer.ggml.model" => self.model = text(v)?,
            "tokenizer.ggml.pre" => self.pre = Some(text(v)?),
            "tokenizer.ggml.tokens" => match v {
                Kept::Strings(s) => self.tokens = s,
                _ => return Err("expected an array of strings".into()),
            },
            "tokenizer.ggml.merges" => match v {
                Kept::Strings(s) => self.merges = s,
                _ => return Err("expected an array of strings".into()),
            },
            "tokenizer.ggml.token_type" => match v {
                Kept::Ints(t) => {
                    self.token_types = t.into_iter().map(|t| t.clamp(-1, 99) as i32).collect()
                }
                _ => return Err("expected an array of integers".into()),
            },
            "tokenizer.ggml.scores" => match v {
                Kept::Floats(s) => self.scores = s,
                _ => return Err("expected an array of f32".into()),
            },
            "tokenizer.ggml.bos_token_id" => self.bos = Some(id(v)?),
            "tokenizer.ggml.eos_token_id" => self.eos = Some(id(v)?),
            "tokenizer.ggml.eot_token_id" => self.eot = Some(id(v)?),
            "tokenizer.ggml.eom_token_id" => self.eom = Some(id(v)?),
            "tokenizer.ggml.unknown_token_id" => self.unk = Some(id(v)?),
            "tokenizer.ggml.padding_token_id" => self.pad = Some(id(v)?),
            "tokenizer.ggml.add_bos_token" => self.add_bos = Some(flag(v)?),
            "tokenizer.ggml.add_eos_token" => self.add_eos = Some(flag(v)?),
            "tokenizer.ggml.add_space_prefix" => self.add_space_prefix = Some(flag(v)?),
            "tokenizer.chat_template" => self.chat_template = Some(text(v)?),
            // Other tokenizer keys (HF's JSON, RWKV, ...) are not used.
            _ => {}
        }
        Ok(())
    }

    /// The ids that end generation: end of sequence, end of turn and end
    /// of message, those present, in that order without repeats.
    pub fn stop_tokens(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for id in [self.eos, self.eot, self.eom].into_iter().flatten() {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    fn is_special(&self, id: usize) -> bool {
        matches!(self.token_types.get(id), Some(2..=5))
    }

    /// The name of token `id` as written in the file.
    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// The split pattern of a `gpt2` vocabulary's pre-tokenizer name, and
    /// whether whole-word tokens go first (llama.cpp's `ignore_merges`).
    fn pattern(&self) -> Result<(Pattern, bool), LoadError> {
        let pre = self.pre.as_deref().unwrap_or("default");
        Ok(match pre {
            "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" => {
                (Pattern::Gpt2Digits, false)
            }
            "gpt-2" | "mpt" | "olmo" | "jais" => (Pattern::Gpt2, false),
            "llama3" | "llama-v3" | "llama-bpe" => (Pattern::Cl100k, true),
            "qwen2" => (Pattern::Qwen2, false),
            "gpt-4o" => (Pattern::O200k, false),
            other => {
                return Err(LoadError::Unsupported {
                    what: format!("GGUF pre-tokenizer `{other}`"),
                });
            }
        })
    }

    /// Builds the tokenizer.
    ///
    /// # Errors
    /// An unsupported `tokenizer.ggml.model` or pre-tokenizer, or a token or
    /// merge the `tokenizer.json` loader rejects (named).
    pub fn tokenizer(&self) -> Result<Tokenizer, LoadError> {
        Tokenizer::from_tokenizer_value(&self.to_tokenizer_json()?)
    }

    /// The Hugging Face `tokenizer.json` document of this vocabulary.
    fn to_tokenizer_json(&self) -> Result<Value, LoadError> {
        let spm = match self.model.as_str() {
            "gpt2" => false,
            "llama" => true,
            other => {
                return Err(LoadError::Unsupported {
                    what: format!("GGUF tokenizer model `{other}`"),
                });
            }
        };
        if !self.token_types.is_empty() && self.token_types.len() != self.tokens.len() {
            return Err(gguf_err(0, "`tokenizer.ggml.token_type` and the tokens differ in length"));
        }
        let mut vocab = Map::with_capacity(self.tokens.len());
        let mut added = Vec::new();
        for (id, token) in self.tokens.iter().enumerate() {
            // 1 normal, 6 byte (`<0xNN>`); 2 unknown, 3 control,
            // 4 user-defined, 5 unused: matched by name only.
            if self.is_special(id) {
                added.push(json!({"id": id, "content": token, "special": true}));
                // Listed for name lookups (the unknown token) unless an
                // ordinary token has the same text.
                vocab.entry(token.clone()).or_insert(json!(id));
            } else if let Some(other) = vocab.insert(token.clone(), json!(id))
                && !other.as_u64().is_some_and(|o| self.is_special(o as usize))
            {
                return Err(LoadError::Token {
                    token: token.clone(),
                    message: format!("ids {other} and {id} have the same text"),
                });
            }
        }
        let mut model = Map::new();
        model.insert("type".into(), json!("BPE"));
        model.insert("vocab".into(), Value::Object(vocab));
        let (pre, normalizer) = if spm {
            model.insert("merges".into(), Value::Array(self.score_merges()?));
            model.insert("byte_fallback".into(), json!(true));
            if let Some(unk) = self.unk.and_then(|u| self.token(u)) {
                model.insert("unk_token".into(), json!(unk));
            }
            let normalizer = if self.add_space_prefix.unwrap_or(true) {
                json!({"type": "Sequence", "normalizers": [
                    {"type": "Prepend", "prepend": "\u{2581}"},
                    {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"},
                ]})
            } else {
                json!({"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"})
            };
            (Value::Null, normalizer)
        } else {
            let (pattern, ignore_merges) = self.pattern()?;
            let merges: Vec<Value> = self.merges.iter().map(|m| json!(m)).collect();
            model.insert("merges".into(), Value::Array(merges));
            model.insert("ignore_merges".into(), json!(ignore_merges));
            let byte_level =
                json!({"type": "ByteLevel", "add_prefix_space": false, "use_regex": false});
            let pre = match pattern {
                Pattern::Gpt2 => {
                    json!({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})
                }
                Pattern::Gpt2Digits => json!({"type": "Sequence", "pretokenizers": [
                    {"type": "Digits", "individual_digits": true},
                    {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
                ]}),
                other => {
                    let regex = other.regex().unwrap_or_default();
                    json!({"type": "Sequence", "pretokenizers": [
                        {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false},
                        byte_level,
                    ]})
                }
            };
            (pre, Value::Null)
        };
        Ok(json!({
            "added_tokens": added,
            "normalizer": normalizer,
            "pre_tokenizer": pre,
            "model": Value::Object(model),
        }))
    }

    /// SentencePiece's score order as a merge list: for every token, each
    /// split into two tokens is a merge, ranked by the token's score
    /// (higher first; equal scores keep the lower id first).
    fn score_merges(&self) -> Result<Vec<Value>, LoadError> {
        if self.scores.len() != self.tokens.len() {
            return Err(gguf_err(0, "`tokenizer.ggml.scores` and the tokens differ in length"));
        }
        let normal = |id: usize| matches!(self.token_types.get(id), None | Some(1));
        let by_text: std::collections::HashMap<&str, usize> = self
            .tokens
            .iter()
            .enumerate()
            .filter(|&(id, _)| normal(id))
            .map(|(id, t)| (t.as_str(), id))
            .collect();
        let mut order: Vec<usize> = (0..self.tokens.len()).filter(|&id| normal(id)).collect();
        order.sort_by(|&a, &b| self.scores[b].total_cmp(&self.scores[a]).then(a.cmp(&b)));
        let mut merges = Vec::new();
        for id in order {
            let t = &self.tokens[id];
            for (cut, _) in t.char_indices().skip(1) {
                let (l, r) = t.split_at(cut);
                if by_text.contains_key(l) && by_text.contains_key(r) {
                    merges.push(json!([l, r]));
                }
            }
        }
        Ok(merges)
    }
}

impl Tokenizer {
    /// Loads the tokenizer of a GGUF model file from its metadata (see
    /// [`GgufVocab`] for the ids and the chat template).
    ///
    /// # Errors
    /// As [`GgufVocab::read`] and [`GgufVocab::tokenizer`].
    pub fn from_gguf(reader: impl Read) -> Result<Tokenizer, LoadError> {
        GgufVocab::read(reader)?.tokenizer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF file with the given key-values (each already encoded).
    fn file(kvs: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend((kvs.len() as u64).to_le_bytes());
        for (k, v) in kvs {
            out.extend(string(k));
            out.extend(v);
        }
        out
    }

    fn string(s: &str) -> Vec<u8> {
        let mut out = (s.len() as u64).to_le_bytes().to_vec();
        out.extend(s.as_bytes());
        out
    }

    fn str_value(s: &str) -> Vec<u8> {
        let mut out = T_STRING.to_le_bytes().to_vec();
        out.extend(string(s));
        out
    }

    fn u32_value(v: u32) -> Vec<u8> {
        let mut out = T_U32.to_le_bytes().to_vec();
        out.extend(v.to_le_bytes());
        out
    }

    fn strings(v: &[&str]) -> Vec<u8> {
        let mut out = T_ARRAY.to_le_bytes().to_vec();
        out.extend(T_STRING.to_le_bytes());
        out.extend((v.len() as u64).to_le_bytes());
        for s in v {
            out.extend(string(s));
        }
        out
    }

    fn i32s(v: &[i32]) -> Vec<u8> {
        let mut out = T_ARRAY.to_le_bytes().to_vec();
        out.extend(T_I32.to_le_bytes());
        out.extend((v.len() as u64).to_le_bytes());
        for x in v {
            out.extend(x.to_le_bytes());
        }
        out
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        let mut out = T_ARRAY.to_le_bytes().to_vec();
        out.extend(T_F32.to_le_bytes());
        out.extend((v.len() as u64).to_le_bytes());
        for x in v {
            out.extend(x.to_le_bytes());
        }
        out
    }

    /// A byte-level vocabulary: the 256 byte tokens, `ab`, `abc`, `Ġa`,
    /// and a control token.
    fn gpt2_file(pre: &str) -> Vec<u8> {
        let mut names: Vec<String> = vec!["<|end|>".into()];
        let table = byte_level_table();
        names.extend((0..=255u8).map(|b| table[b as usize].to_string()));
        names.extend(["ab", "abc", "Ġa"].map(String::from));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut types = vec![3];
        types.extend(std::iter::repeat_n(1, names.len() - 1));
        file(&[
            ("general.architecture", str_value("llama")),
            ("general.unrelated", f32s(&[1.0, 2.0])),
            ("tokenizer.ggml.model", str_value("gpt2")),
            ("tokenizer.ggml.pre", str_value(pre)),
            ("tokenizer.ggml.tokens", strings(&refs)),
            ("tokenizer.ggml.token_type", i32s(&types)),
            ("tokenizer.ggml.merges", strings(&["a b", "ab c", "Ġ a"])),
            ("tokenizer.ggml.eos_token_id", u32_value(0)),
            ("tokenizer.chat_template", str_value("{{ messages }}")),
        ])
    }

    fn byte_level_table() -> Vec<char> {
        let mut n = 0u32;
        (0..=255u8)
            .map(|b| {
                let printable = (b'!'..=b'~').contains(&b)
                    || (0xA1..=0xAC).contains(&b)
                    || (0xAE..=0xFF).contains(&b);
                if printable {
                    char::from(b)
                } else {
                    n += 1;
                    char::from_u32(255 + n).unwrap()
                }
            })
            .collect()
    }

    #[test]
    fn a_byte_level_vocabulary_loads_and_encodes() {
        let bytes = gpt2_file("smollm");
        let v = GgufVocab::read(bytes.as_slice()).unwrap();
        assert_eq!(v.architecture.as_deref(), Some("llama"));
        assert_eq!(v.stop_tokens(), [0]);
        assert_eq!(v.chat_template.as_deref(), Some("{{ messages }}"));
        let tok = v.tokenizer().unwrap();
        assert_eq!(tok.pattern(), Pattern::Gpt2Digits);
        let abc = tok.encode("abc a1");
        assert_eq!(tok.decode_to_string(&abc).unwrap(), "abc a1");
        assert_eq!(abc[0], 257 + 1, "`abc` is one token");
        assert_eq!(abc[1], 257 + 2, "` a` is one token");
        assert_eq!(tok.special_id("<|end|>"), Some(0));
        assert_eq!(Tokenizer::from_gguf(bytes.as_slice()).unwrap().encode("ab"), [257]);
    }

    #[test]
    fn unknown_pre_tokenizers_and_models_are_errors() {
        let err = GgufVocab::read(gpt2_file("mystery").as_slice()).unwrap().tokenizer();
        assert!(err.unwrap_err().to_string().contains("mystery"));
        let mut v = GgufVocab::read(gpt2_file("smollm").as_slice()).unwrap();
        v.model = "rwkv".into();
        assert!(v.tokenizer().unwrap_err().to_string().contains("rwkv"));
    }

    #[test]
    fn a_sentencepiece_vocabulary_merges_by_score() {
        // `▁ab` can be made as `▁a`+`b` or `▁`+`ab`; scores decide.
        let names = ["<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "ab", "▁ab", "<0x21>"];
        let types = [2, 3, 3, 1, 1, 1, 1, 1, 1, 6];
        let scores = [0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, 0.0];
        let bytes = file(&[
            ("tokenizer.ggml.model", str_value("llama")),
            ("tokenizer.ggml.tokens", strings(&names)),
            ("tokenizer.ggml.token_type", i32s(&types)),
            ("tokenizer.ggml.scores", f32s(&scores)),
            ("tokenizer.ggml.unknown_token_id", u32_value(0)),
            ("tokenizer.ggml.eos_token_id", u32_value(2)),
        ]);
        let tok = Tokenizer::from_gguf(bytes.as_slice()).unwrap();
        assert_eq!(tok.encode("ab"), [8], "▁a (score -4) first, then ▁ab");
        assert_eq!(tok.encode("ba"), [3, 5, 4]);
        assert_eq!(tok.encode("a!"), [6, 9], "byte fallback");
        assert_eq!(tok.decode_to_string(&[8]).unwrap(), " ab");
    }

    #[test]
    fn corrupt_headers_are_errors_with_offsets() {
        let good = gpt2_file("smollm");
        for cut in [0, 3, 10, 30, good.len() / 2, good.len() - 1] {
            let err = GgufVocab::read(&good[..cut]).unwrap_err();
            assert!(matches!(err, LoadError::Gguf { .. }), "cut {cut}: {err}");
        }
        assert!(GgufVocab::read(&b"GGML\x03\0\0\0"[..]).unwrap_err().to_string().contains("magic"));
        let mut v1 = good.clone();
        v1[4] = 1;
        assert!(GgufVocab::read(v1.as_slice()).unwrap_err().to_string().contains("version 1"));
        // A string length of 2^60 bytes fails on the limit, allocating nothing.
        let mut huge = b"GGUF".to_vec();
        huge.extend(3u32.to_le_bytes());
        huge.extend(0u64.to_le_bytes());
        huge.extend(1u64.to_le_bytes());
        huge.extend((1u64 << 60).to_le_bytes());
        let err = GgufVocab::read(huge.as_slice()).unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
        let small = GgufLimits::default().with_max_metadata_bytes(100);
        let err = GgufVocab::read_with_limits(good.as_slice(), &small).unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }

    #[test]
    fn wrong_value_types_name_the_key() {
        let bytes = file(&[("tokenizer.ggml.model", u32_value(2))]);
        let err = GgufVocab::read(bytes.as_slice()).unwrap_err();
        assert!(err.to_string().contains("tokenizer.ggml.model"), "{err}");
    }
}
