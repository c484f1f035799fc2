//! Loading Hugging Face `tokenizer.json` files with a BPE model.
//!
//! Two families are supported:
//! - byte-level (GPT-2, Llama-3, Qwen2/3): token strings are spelled in the
//!   GPT-2 byte alphabet (every byte is a printable character, `Ġ` is a
//!   space); the pre-tokenizer is `ByteLevel` (GPT-2's regex) or a `Split`
//!   regex followed by `ByteLevel`;
//! - SentencePiece-style (Llama-2, Mistral): tokens are characters, `▁`
//!   stands for a space, characters missing from the vocabulary become
//!   `<0xNN>` byte tokens (`byte_fallback`); a `Prepend`/`Replace`
//!   normalizer or a `Metaspace` pre-tokenizer adds the leading space.
//!
//! Merge priority is the position in `model.merges` (not the token id).
//! Added tokens become special tokens (matched by name only when allowed).
//!
//! A byte-level vocabulary need not have a token for every byte (SmolLM2
//! lacks 21); see `model::Gaps` for what encoding does with such a byte
//! (Hugging Face's behaviour: dropped, or the unknown token). Errors where
//! Hugging Face would encode differently from us: `byte_fallback` tokens for
//! a byte without a token (HF would spell its character with them), and an
//! `unk_token` that is not in the vocabulary (HF fails when encoding a text
//! holding such a byte; we refuse the file when it lacks a byte token).

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::error::LoadError;
use crate::model::{Gaps, Model, NO_TOKEN, Rules, Symbols};
use crate::pretok::Pattern;
use crate::tokenizer::{Normalizer, Prefix, Tokenizer};
use crate::vocab::{ByteMap, Kind, MAX_ID, Tokens};

/// GPT-2's byte-to-character table, inverted: character -> byte.
fn byte_level_decoder() -> FxHashMap<char, u8> {
    let mut map = FxHashMap::default();
    let mut n = 0u32;
    for b in 0..=255u8 {
        let printable =
            (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        let c = if printable {
            char::from(b)
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap_or('\0')
        };
        map.insert(c, b);
    }
    map
}

fn json_err(message: impl Into<String>) -> LoadError {
    LoadError::Json { message: message.into() }
}

fn unsupported(what: impl Into<String>) -> LoadError {
    LoadError::Unsupported { what: what.into() }
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The `<0xNN>` byte of a SentencePiece byte-fallback token.
fn fallback_byte(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// What the pre-tokenizer section says.
struct PreTok {
    pattern: Pattern,
    byte_level: bool,
    prefix: Prefix,
    metaspace: bool,
    /// `Digits(individual_digits)` came first (then `ByteLevel` must split).
    digits: bool,
}

fn pre_tokenizer(v: &Value) -> Result<PreTok, LoadError> {
    let mut out = PreTok {
        pattern: Pattern::Whole,
        byte_level: false,
        prefix: Prefix::Never,
        metaspace: false,
        digits: false,
    };
    let items: Vec<&Value> = match s(v, "type") {
        None if v.is_null() => return Ok(out),
        Some("Sequence") => v
            .get("pretokenizers")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        Some(_) => vec![v],
        None => return Err(json_err("pre_tokenizer has no type")),
    };
    for item in items {
        match s(item, "type") {
            Some("ByteLevel") => {
                out.byte_level = true;
                if item.get("add_prefix_space").and_then(Value::as_bool).unwrap_or(false) {
                    out.prefix = Prefix::IfNoSpace;
                }
                if item.get("use_regex").and_then(Value::as_bool).unwrap_or(true) {
                    if out.pattern != Pattern::Whole {
                        return Err(unsupported(
                            "pre_tokenizer Split followed by ByteLevel with use_regex",
                        ));
                    }
                    out.pattern = if out.digits { Pattern::Gpt2Digits } else { Pattern::Gpt2 };
                }
            }
            Some("Digits") => {
                let individual =
                    item.get("individual_digits").and_then(Value::as_bool).unwrap_or(false);
                if !individual || out.pattern != Pattern::Whole || out.byte_level {
                    return Err(unsupported(
                        "pre_tokenizer Digits other than individual_digits before ByteLevel",
                    ));
                }
                out.digits = true;
            }
            Some("Split") => {
                let regex = item
                    .get("pattern")
                    .and_then(|p| p.get("Regex"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| unsupported("pre_tokenizer Split without a Regex pattern"))?;
                let behavior = s(item, "behavior").unwrap_or("Isolated");
                let invert = item.get("invert").and_then(Value::as_bool).unwrap_or(false);
                if behavior != "Isolated" || invert {
                    return Err(unsupported(format!(
                        "pre_tokenizer Split with behavior {behavior}, invert {invert}"
                    )));
                }
                out.pattern = Pattern::from_regex(regex)
                    .ok_or_else(|| unsupported(format!("pre_tokenizer Split regex {regex:?}")))?;
            }
            Some("Metaspace") => {
                if s(item, "replacement") != Some("\u{2581}") {
                    return Err(unsupported("Metaspace with a replacement other than U+2581"));
                }
                if item.get("split").and_then(Value::as_bool).unwrap_or(true) {
                    return Err(unsupported("Metaspace with split: true"));
                }
                out.metaspace = true;
                out.prefix = match s(item, "prepend_scheme") {
                    Some("first") => Prefix::IfNoSpaceFirst,
                    Some("never") => Prefix::Never,
                    _ if item.get("add_prefix_space").and_then(Value::as_bool) == Some(false) => {
                        Prefix::Never
                    }
                    _ => Prefix::IfNoSpace,
                };
            }
            other => return Err(unsupported(format!("pre_tokenizer {}", other.unwrap_or("?")))),
        }
    }
    if out.digits && out.pattern != Pattern::Gpt2Digits {
        return Err(unsupported("pre_tokenizer Digits not followed by ByteLevel with use_regex"));
    }
    Ok(out)
}

/// Applies the normalizer section to `norm`.
fn normalizer(v: &Value, norm: &mut Normalizer) -> Result<(), LoadError> {
    let items: Vec<&Value> = match s(v, "type") {
        None if v.is_null() => return Ok(()),
        Some("Sequence") => v
            .get("normalizers")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        Some(_) => vec![v],
        None => return Err(json_err("normalizer has no type")),
    };
    for item in items {
        match s(item, "type") {
            Some("NFC") => norm.nfc = true,
            Some("Prepend") if s(item, "prepend") == Some("\u{2581}") => {
                norm.prefix = Prefix::Always
            }
            Some("Replace")
                if item.get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str)
                    == Some(" ")
                    && s(item, "content") == Some("\u{2581}") =>
            {
                norm.metaspace = true;
            }
            other => return Err(unsupported(format!("normalizer {}", other.unwrap_or("?")))),
        }
    }
    Ok(())
}

impl Tokenizer {
    /// Loads a Hugging Face `tokenizer.json` whose model is BPE (byte-level
    /// or SentencePiece-style with `byte_fallback`). Added tokens become
    /// special tokens.
    ///
    /// Errors name the token or merge at fault, or the unsupported component
    /// (another model type, an unknown split regex, a normalizer other than
    /// NFC / `Prepend("▁")` / `Replace(" ", "▁")`).
    pub fn from_tokenizer_json(json: &[u8]) -> Result<Tokenizer, LoadError> {
        let root: Value =
            serde_json::from_slice(json).map_err(|e| json_err(format!("not valid JSON: {e}")))?;
        Tokenizer::from_tokenizer_value(&root)
    }

    /// [`from_tokenizer_json`](Tokenizer::from_tokenizer_json) on the parsed
    /// document (the GGUF loader describes its vocabulary this way).
    pub(crate) fn from_tokenizer_value(root: &Value) -> Result<Tokenizer, LoadError> {
        let model = root.get("model").ok_or_else(|| json_err("no `model`"))?;
        if let Some(t) = s(model, "type")
            && t != "BPE"
        {
            return Err(unsupported(format!("model type {t}")));
        }
        for key in ["continuing_subword_prefix", "end_of_word_suffix"] {
            if s(model, key).is_some_and(|v| !v.is_empty()) {
                return Err(unsupported(format!("model.{key}")));
            }
        }
        if model.get("dropout").and_then(Value::as_f64).is_some_and(|d| d > 0.0) {
            return Err(unsupported("model.dropout"));
        }
        let pre = pre_tokenizer(root.get("pre_tokenizer").unwrap_or(&Value::Null))?;
        let mut norm =
            Normalizer { metaspace: pre.metaspace, prefix: pre.prefix, ..Normalizer::default() };
        normalizer(root.get("normalizer").unwrap_or(&Value::Null), &mut norm)?;
        let byte_level = pre.byte_level;
        let byte_fallback = model.get("byte_fallback").and_then(Value::as_bool).unwrap_or(false);
        let ignore_merges = model.get("ignore_merges").and_then(Value::as_bool).unwrap_or(false);

        let vocab = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or_else(|| json_err("no `model.vocab` object"))?;
        let decoder = if byte_level { byte_level_decoder() } else { FxHashMap::default() };

        // Added tokens: id -> content.
        let mut added: FxHashMap<u32, String> = FxHashMap::default();
        for (i, t) in root
            .get("added_tokens")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let id = t
                .get("id")
                .and_then(Value::as_u64)
                .ok_or_else(|| json_err(format!("added_tokens[{i}] has no id")))?;
            let content = s(t, "content")
                .ok_or_else(|| json_err(format!("added_tokens[{i}] has no content")))?;
            let id = u32::try_from(id).ok().filter(|&i| i <= MAX_ID).ok_or_else(|| {
                LoadError::Token {
                    token: content.to_owned(),
                    message: format!("id {id} exceeds the limit {MAX_ID}"),
                }
            })?;
            if content.is_empty() {
                return Err(LoadError::Token {
                    token: content.to_owned(),
                    message: "empty added token".into(),
                });
            }
            if added.insert(id, content.to_owned()).is_some() {
                return Err(LoadError::Token {
                    token: content.to_owned(),
                    message: format!("two added tokens have id {id}"),
                });
            }
        }

        // Vocabulary: id -> bytes.
        let mut owned: Vec<(u32, Vec<u8>, Kind)> = Vec::with_capacity(vocab.len() + added.len());
        let mut id_of: FxHashMap<&str, u32> = FxHashMap::default();
        let mut fallback = [u32::MAX; 256];
        let mut is_fallback: Vec<u32> = Vec::new();
        for (token, id) in vocab {
            let id = id
                .as_u64()
                .and_then(|i| u32::try_from(i).ok())
                .filter(|&i| i <= MAX_ID)
                .ok_or_else(|| LoadError::Token {
                    token: token.clone(),
                    message: format!("id {id} is not an integer from 0 to {MAX_ID}"),
                })?;
            id_of.insert(token.as_str(), id);
            if added.contains_key(&id) {
                continue;
            }
            let bytes: Vec<u8> = if byte_level {
                token
                    .chars()
                    .map(|c| decoder.get(&c).copied())
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| LoadError::Token {
                        token: token.clone(),
                        message: "a character is not in the byte-level alphabet".into(),
                    })?
            } else if let Some(b) = fallback_byte(token).filter(|_| byte_fallback) {
                fallback[b as usize] = id;
                is_fallback.push(id);
                vec![b]
            } else {
                token.replace('\u{2581}', " ").into_bytes()
            };
            if bytes.is_empty() {
                return Err(LoadError::Token {
                    token: token.clone(),
                    message: "empty token".into(),
                });
            }
            owned.push((id, bytes, Kind::Normal));
        }
        {
            let mut ids: Vec<u32> = owned.iter().map(|e| e.0).collect();
            ids.sort_unstable();
            if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
                let names: Vec<&str> = vocab
                    .iter()
                    .filter(|(_, v)| v.as_u64() == Some(u64::from(w[0])))
                    .map(|(k, _)| k.as_str())
                    .collect();
                return Err(LoadError::Token {
                    token: names.join(" / "),
                    message: format!("two tokens have id {}", w[0]),
                });
            }
        }
        if owned.is_empty() {
            // Every text would encode to nothing (or only to special
            // tokens): a broken file, not a tokenizer.
            return Err(json_err(if vocab.is_empty() {
                "`model.vocab` is empty".to_owned()
            } else {
                format!("`model.vocab` has only added tokens ({} of them)", vocab.len())
            }));
        }
        for (&id, content) in &added {
            owned.push((id, content.as_bytes().to_vec(), Kind::Special));
        }
        // Before any per-id table: the ids may not be much sparser than
        // the tokens (`vocab::max_id_span`).
        if let Some(last) = owned.iter().max_by_key(|e| e.0)
            && let Err(message) = crate::vocab::check_id_span(owned.len(), last.0)
        {
            let token = String::from_utf8_lossy(&last.1).into_owned();
            return Err(LoadError::Token { token, message });
        }
        let mut entries: Vec<(u32, &[u8], Kind)> =
            owned.iter().map(|(id, b, k)| (*id, b.as_slice(), *k)).collect();
        let tokens = Tokens::new(&mut entries);
        let ordinary: Vec<u32> = owned
            .iter()
            .filter(|e| e.2 == Kind::Normal && !is_fallback.contains(&e.0))
            .map(|e| e.0)
            .collect();
        // Duplicate bytes (possible in SentencePiece vocabularies, e.g. a
        // token with a literal space next to its `▁` twin) keep the first id
        // for lookups; merges still name both by id.
        let (map, _duplicates) = ByteMap::new(&tokens, ordinary.iter().copied(), ordinary.len());

        // Merges: (left, right) -> (priority, result).
        let merges = model
            .get("merges")
            .and_then(Value::as_array)
            .ok_or_else(|| json_err("no `model.merges` list"))?;
        let mut pairs: FxHashMap<u64, (u32, u32)> = FxHashMap::default();
        pairs.reserve(merges.len());
        let mut joined = String::new();
        for (index, m) in merges.iter().enumerate() {
            let merr = |message: String| LoadError::Merge { index, message };
            let (a, b) = match m {
                Value::String(line) => {
                    let mut it = line.split(' ');
                    match (it.next(), it.next(), it.next()) {
                        (Some(a), Some(b), None) => (a, b),
                        _ => {
                            return Err(merr(format!(
                                "{line:?} is not two tokens separated by a space"
                            )));
                        }
                    }
                }
                Value::Array(pair) if pair.len() == 2 => match (pair[0].as_str(), pair[1].as_str())
                {
                    (Some(a), Some(b)) => (a, b),
                    _ => return Err(merr("not a pair of strings".into())),
                },
                _ => return Err(merr("not a string or a pair of strings".into())),
            };
            let get = |t: &str| {
                id_of
                    .get(t)
                    .copied()
                    .ok_or_else(|| merr(format!("token {t:?} is not in the vocabulary")))
            };
            let (ia, ib) = (get(a)?, get(b)?);
            joined.clear();
            joined.push_str(a);
            joined.push_str(b);
            let ir = get(&joined)?;
            // A later duplicate replaces an earlier one, as in Hugging Face.
            pairs.insert((u64::from(ia) << 32) | u64::from(ib), (index as u32, ir));
        }

        let unk = || match s(model, "unk_token") {
            Some(name) => id_of.get(name).copied().map(Some).ok_or_else(|| LoadError::Token {
                token: name.to_owned(),
                message: "the unknown token is not in the vocabulary".into(),
            }),
            None => Ok(None),
        };
        let fuse_unk = model.get("fuse_unk").and_then(Value::as_bool).unwrap_or(false);
        let mut gaps = None;
        let symbols = if byte_level {
            let mut ids = Box::new([NO_TOKEN; 256]);
            for b in 0..=255u8 {
                if let Some(id) = map.get(&tokens, &[b]) {
                    ids[b as usize] = id;
                }
            }
            if ids.contains(&NO_TOKEN) {
                // Before the unknown token, Hugging Face tries the
                // byte-fallback tokens `<0xNN>` of the UTF-8 bytes of the
                // byte's character, which here spell six characters each,
                // not a byte: not supported.
                for (&c, &b) in &decoder {
                    let mut utf8 = [0u8; 4];
                    if byte_fallback
                        && ids[b as usize] == NO_TOKEN
                        && c.encode_utf8(&mut utf8)
                            .bytes()
                            .all(|u| id_of.contains_key(format!("<0x{u:02X}>").as_str()))
                    {
                        return Err(unsupported(format!(
                            "byte_fallback tokens for byte 0x{b:02X} of a byte-level vocabulary \
                             that has no token for it"
                        )));
                    }
                }
                gaps = Some(Gaps { unk: unk()?, fuse_unk });
            }
            Symbols::Bytes(ids)
        } else {
            let fallback = byte_fallback.then(|| Box::new(fallback));
            Symbols::Chars { fallback, unk: unk()?, fuse_unk }
        };
        // SentencePiece-style files have no split pattern, so BPE would run
        // on the whole text; when no token holds a space after another
        // character, no merge crosses the start of a space run, and the
        // text is split there (exactly; see `Pattern::SentencePiece`).
        let mut pattern = pre.pattern;
        if pattern == Pattern::Whole
            && !byte_level
            && owned.iter().all(|(_, b, kind)| {
                *kind != Kind::Normal || !b.windows(2).any(|w| w[0] != b' ' && w[1] == b' ')
            })
        {
            pattern = Pattern::SentencePiece;
        }
        let model = Model {
            symbols,
            gaps,
            rules: Rules::Pairs(pairs),
            whole_piece: ignore_merges,
            map,
            known_monotone: false,
            backtrack: Default::default(),
        };
        Tokenizer::assemble(tokens, model, pattern, norm)
    }
}
