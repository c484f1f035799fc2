//! Loading tiktoken rank files (`BASE64(bytes) RANK` per line) and the
//! built-in OpenAI vocabularies.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::LoadError;
use crate::model::{Model, Rules, Symbols};
use crate::pretok::Pattern;
use crate::tokenizer::{Normalizer, Tokenizer};
use crate::vocab::{ByteMap, Kind, Tokens};

/// tiktoken's special tokens of `o200k_base`.
pub const O200K_SPECIALS: &[(&str, u32)] =
    &[("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)];

/// tiktoken's special tokens of `cl100k_base`.
pub const CL100K_SPECIALS: &[(&str, u32)] = &[
    ("<|endoftext|>", 100_257),
    ("<|fim_prefix|>", 100_258),
    ("<|fim_middle|>", 100_259),
    ("<|fim_suffix|>", 100_260),
    ("<|endofprompt|>", 100_276),
];

/// tiktoken's special tokens of `p50k_base` and `r50k_base`.
pub const P50K_SPECIALS: &[(&str, u32)] = &[("<|endoftext|>", 50_256)];

/// One line of a rank file: its rank, the span of its decoded bytes, and
/// its 1-based line number (blank lines are skipped, so entries and lines
/// differ).
#[derive(Debug, Clone, Copy)]
struct Entry {
    rank: u32,
    start: u32,
    end: u32,
    line: usize,
}

/// The decoded token bytes, and the entries pointing into them.
type Parsed = (Vec<u8>, Vec<Entry>);

/// Parses a rank file into `(rank, bytes)` in file order.
fn parse(file: &[u8]) -> Result<Parsed, LoadError> {
    let mut raw = Vec::with_capacity(file.len() * 3 / 4);
    let mut entries = Vec::with_capacity(file.len() / 10);
    for (i, line) in file.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let err = |message: String| LoadError::Tiktoken { line: i + 1, message };
        let space = line
            .iter()
            .position(|&b| b == b' ')
            .ok_or_else(|| err("expected `BASE64 RANK`".into()))?;
        let (b64, rank) = (&line[..space], &line[space + 1..]);
        let rank: u32 = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| err(format!("bad rank {:?}", String::from_utf8_lossy(rank))))?;
        if rank > crate::vocab::MAX_ID {
            return Err(err(format!("rank {rank} exceeds the limit {}", crate::vocab::MAX_ID)));
        }
        let start = raw.len();
        STANDARD.decode_vec(b64, &mut raw).map_err(|e| err(format!("bad base64: {e}")))?;
        if raw.len() == start {
            return Err(err("empty token".into()));
        }
        entries.push(Entry { rank, start: start as u32, end: raw.len() as u32, line: i + 1 });
    }
    Ok((raw, entries))
}

impl Tokenizer {
    /// Loads a tiktoken rank file with its split pattern and special tokens
    /// `(name, id)`. Ranks are the ids and the merge priorities.
    ///
    /// Errors name the line (malformed, duplicate rank or bytes), the special
    /// token (id taken), or the missing single byte.
    pub fn from_tiktoken(
        file: &[u8],
        pattern: Pattern,
        specials: &[(&str, u32)],
    ) -> Result<Tokenizer, LoadError> {
        let (raw, parsed) = parse(file)?;
        if parsed.is_empty() {
            return Err(LoadError::Tiktoken { line: 1, message: "the file has no ranks".into() });
        }
        // Before any per-id table: the ids may not be much sparser than
        // the tokens (a lone rank near the cap would cost gigabytes).
        let largest = parsed.iter().max_by_key(|e| e.rank).map_or(0, |e| e.rank);
        let largest_special = specials.iter().map(|s| s.1).max().unwrap_or(0);
        let count = parsed.len() + specials.len();
        if largest_special > largest {
            if let Err(message) = crate::vocab::check_id_span(count, largest_special) {
                let token = specials.iter().find(|s| s.1 == largest_special).map_or("", |s| s.0);
                return Err(LoadError::Token { token: token.to_owned(), message });
            }
        } else if let Err(message) = crate::vocab::check_id_span(count, largest) {
            let line = parsed.iter().find(|e| e.rank == largest).map_or(1, |e| e.line);
            return Err(LoadError::Tiktoken { line, message });
        }
        // The line where each rank first appears (0: not yet).
        let mut seen_rank =
            vec![0usize; parsed.iter().map(|e| e.rank as usize + 1).max().unwrap_or(0)];
        for e in &parsed {
            let first = std::mem::replace(&mut seen_rank[e.rank as usize], e.line);
            if first != 0 {
                return Err(LoadError::Tiktoken {
                    line: e.line,
                    message: format!("rank {} appears twice (first on line {first})", e.rank),
                });
            }
        }
        let mut entries: Vec<(u32, &[u8], Kind)> = parsed
            .iter()
            .map(|e| (e.rank, &raw[e.start as usize..e.end as usize], Kind::Normal))
            .collect();
        for &(name, id) in specials {
            if id > crate::vocab::MAX_ID {
                return Err(LoadError::Token {
                    token: name.to_owned(),
                    message: format!("id {id} exceeds the limit {}", crate::vocab::MAX_ID),
                });
            }
            if seen_rank.get(id as usize).is_some_and(|&l| l != 0) {
                return Err(LoadError::Token {
                    token: name.to_owned(),
                    message: format!("special id {id} is already the rank of a token"),
                });
            }
            if name.is_empty() {
                return Err(LoadError::Token {
                    token: name.to_owned(),
                    message: "empty special token".into(),
                });
            }
            entries.push((id, name.as_bytes(), Kind::Special));
        }
        let mut ids: Vec<u32> = specials.iter().map(|s| s.1).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(LoadError::Token {
                token: format!("id {}", w[0]),
                message: "two special tokens share this id".into(),
            });
        }
        let tokens = Tokens::new(&mut entries);
        let ranks = parsed.iter().map(|e| e.rank);
        let (map, duplicates) = ByteMap::new(&tokens, ranks, parsed.len());
        if let Some(&dup) = duplicates.first() {
            // `dup` is the later of two ranks with the same bytes (ranks are
            // inserted in file order): report its line and the first one's.
            let line_of = |rank: u32| seen_rank[rank as usize];
            let first = map.get(&tokens, tokens.bytes(dup)).map_or(0, line_of);
            return Err(LoadError::Tiktoken {
                line: line_of(dup),
                message: format!(
                    "token {:?} appears twice (first on line {first})",
                    String::from_utf8_lossy(tokens.bytes(dup))
                ),
            });
        }
        let mut byte_ids = Box::new([0u32; 256]);
        for b in 0..=255u8 {
            byte_ids[b as usize] = map.get(&tokens, &[b]).ok_or_else(|| LoadError::Token {
                token: format!("<0x{b:02X}>"),
                message: "the single byte has no token, so some texts cannot be encoded".into(),
            })?;
        }
        let model = Model {
            symbols: Symbols::Bytes(byte_ids),
            gaps: None,
            rules: Rules::Ranks,
            whole_piece: true,
            map,
            known_monotone: false,
            backtrack: Default::default(),
        };
        Tokenizer::assemble(tokens, model, pattern, Normalizer::default())
    }

    /// OpenAI's `o200k_base` (GPT-4o and later), embedded: 199,998 ranks,
    /// `<|endoftext|>` = 199999, `<|endofprompt|>` = 200018. Feature `o200k`
    /// (on by default).
    #[cfg(feature = "o200k")]
    pub fn o200k_base() -> Tokenizer {
        let mut tok = Tokenizer::from_tiktoken(
            crate::data::O200K_BASE_TIKTOKEN,
            Pattern::O200k,
            O200K_SPECIALS,
        )
        .expect("the embedded o200k_base file is valid (checked by tests)");
        tok.model.known_monotone = true;
        tok
    }

    /// OpenAI's `cl100k_base` (GPT-4, GPT-3.5), embedded: 100,256 ranks and
    /// five special tokens (`<|endoftext|>` = 100257, ...). Feature `cl100k`
    /// (on by default).
    #[cfg(feature = "cl100k")]
    pub fn cl100k_base() -> Tokenizer {
        let mut tok = Tokenizer::from_tiktoken(
            crate::data::CL100K_BASE_TIKTOKEN,
            Pattern::Cl100k,
            CL100K_SPECIALS,
        )
        .expect("the embedded cl100k_base file is valid (checked by tests)");
        tok.model.known_monotone = true;
        tok
    }
}
