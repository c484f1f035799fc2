//! Byte-level mutations with per-target dictionaries.

use rand::Rng;
use rand::rngs::SmallRng;

use crate::{Target, pick};

/// Mutants are cut to this many bytes (an input's cost stays small; the
/// size limits themselves are tested in the hostile suite).
pub(crate) const MAX_LEN: usize = 16 << 10;

/// `base` changed by one to four mutations; `other` is a second seed for
/// splices.
pub(crate) fn mutate(base: &[u8], other: &[u8], dict: &[&str], rng: &mut SmallRng) -> Vec<u8> {
    let mut out = base.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let len = out.len();
        let at = rng.random_range(0..=len);
        match rng.random_range(0..9u8) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] = pick(rng, b"()[]{}*+?|\\\"'/:,.-^$ \n\t0123456789az\xff\xc3\x80");
            }
            2 | 3 if !dict.is_empty() => {
                let word = pick(rng, dict).as_bytes();
                out.splice(at..at, word.iter().copied());
            }
            4 if len > 0 => {
                let end = (at + rng.random_range(1..=16)).min(len);
                out.drain(at.min(end)..end);
            }
            5 if len > 0 => {
                // Duplicate a range: repetition of a construct (deep nesting,
                // many rules) is the usual way to a limit.
                let start = rng.random_range(0..len);
                let end = (start + rng.random_range(1..=64)).min(len);
                let piece = out[start..end].to_vec();
                for _ in 0..rng.random_range(1..=8) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            6 if !other.is_empty() => {
                let start = rng.random_range(0..other.len());
                let end = (start + rng.random_range(1..=256)).min(other.len());
                out.splice(at..at, other[start..end].iter().copied());
            }
            7 => {
                let n = rng.random_range(1..=8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                out.splice(at..at, bytes);
            }
            _ => out.truncate(at),
        }
    }
    out.truncate(MAX_LEN);
    out
}

pub(crate) fn dictionary(target: Target) -> &'static [&'static str] {
    match target {
        Target::Lark | Target::Matcher => &[
            "start",
            "start: ",
            ":",
            " | ",
            "\"",
            "\"a\"",
            "/",
            "/[a-z]+/",
            "*",
            "+",
            "?",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "%ignore",
            "%ignore \" \"",
            "%import common.",
            "WS",
            "INT",
            "%json {}",
            "%json {\"type\": \"string\"}",
            "~",
            "..",
            "<[",
            "]>",
            "<[1]>",
            "<|",
            "|>",
            "\n",
            "->",
            "&",
            "!",
            "%llguidance {}",
            "lazy",
            "stop=",
            "max_tokens=",
            "%regex {\"substring_words\": \"a b\"}",
            "A: ",
            "a: ",
            "_x",
            "{1,3}",
            "{100}",
            "/(a*){9}/",
        ],
        Target::Gbnf => &[
            "root",
            "root ::= ",
            "::=",
            " | ",
            "\"",
            "\"a\"",
            "[",
            "]",
            "[^",
            "a-z",
            "*",
            "+",
            "?",
            "{",
            "}",
            "{2,5}",
            "(",
            ")",
            "<[",
            "]>",
            "<[2]>",
            "\n",
            "#",
            "r1 ::= ",
            "r1",
            ".",
            "\\n",
            "\\x41",
            "\\u00e9",
        ],
        Target::Regex => &[
            "(",
            ")",
            "*",
            "+",
            "?",
            "{",
            "}",
            "{0,",
            "100}",
            "{2,1}",
            "[",
            "]",
            "[^",
            "^",
            "$",
            "\\d",
            "\\w",
            "\\s",
            "\\b",
            "|",
            ".",
            "(?:",
            "(?i)",
            "\\p{L}",
            "\\u{10FFFF}",
            "a*",
            "(a*){5}",
            "\\",
            "-",
        ],
        Target::JsonSchema => &[
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"type\"",
            "\"string\"",
            "\"integer\"",
            "\"number\"",
            "\"object\"",
            "\"array\"",
            "\"pattern\"",
            "\"(a*){9}\"",
            "\"allOf\"",
            "\"anyOf\"",
            "\"oneOf\"",
            "\"not\"",
            "\"if\"",
            "\"then\"",
            "\"$ref\"",
            "\"#\"",
            "\"#/$defs/a\"",
            "\"$defs\"",
            "\"minimum\"",
            "\"maximum\"",
            "1e400",
            "1e-400",
            "-0",
            "0.1",
            "\"properties\"",
            "\"items\"",
            "\"prefixItems\"",
            "\"enum\"",
            "\"const\"",
            "null",
            "true",
            "false",
            "\"maxLength\"",
            "\"minLength\"",
            "\"format\"",
            "\"date-time\"",
            "\"required\"",
            "\"additionalProperties\"",
            "\"uniqueItems\"",
            "\"multipleOf\"",
            "\"minItems\"",
            "\"maxItems\"",
            "99999999",
        ],
        Target::TokenizerJson => &[
            "\"model\"",
            "\"vocab\"",
            "\"merges\"",
            "\"BPE\"",
            "\"pre_tokenizer\"",
            "\"ByteLevel\"",
            "\"Split\"",
            "\"Sequence\"",
            "\"added_tokens\"",
            "\"normalizer\"",
            "\"byte_fallback\"",
            "true",
            "null",
            ":",
            ",",
            "{",
            "}",
            "[",
            "]",
            "0",
            "4294967295",
            "-1",
            "\"a b\"",
            "\"<0x41>\"",
            "\"\u{2581}\"",
            "\"id\"",
            "\"content\"",
        ],
        Target::Trace => &[
            "{\"timestamp\": ",
            "\"input_length\": ",
            "\"output_length\": ",
            "\"hash_ids\": [",
            "]}\n",
            ", ",
            "0",
            "511",
            "512",
            "513",
            "8388607",
            "18446744073709551615",
            "-1",
            "1e3",
            "null",
            "\n",
            "{",
            "}",
        ],
        Target::Tiktoken => {
            &["YQ== 0\n", "Yg== 1\n", " ", "\n", "=", "==", "-1", "4294967295", "AA==", "/w==", "+"]
        }
    }
}
