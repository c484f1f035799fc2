//! The targets: what one input runs and which properties it checks.

use std::sync::OnceLock;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use structgen::bpe::{Pattern, Tokenizer};
use structgen::toktrie::TokenId;
use structgen::{CompileOptions, Grammar, GrammarSpec, Matcher, MatcherError, Vocabulary};

use crate::Target;

/// The limits every execution compiles with: a few thousand lexer
/// states, a bounded Earley step and lexer fuel, 64 KiB of source, so an
/// input costs milliseconds whatever it is.
pub fn limits() -> CompileOptions {
    let lexer = structgen::lexer::LexerLimits::default()
        .with_max_states(4_000)
        .with_max_exprs(200_000)
        .with_relevance_fuel(20_000)
        .with_build_fuel(100_000)
        .with_step_fuel(60_000);
    let parser = structgen::earley::Limits::default()
        .with_lexer(lexer)
        .with_max_rules(20_000)
        .with_max_symbols(20_000)
        .with_max_items_per_row(20_000)
        .with_max_items_per_step(200_000);
    let front = structgen::grammar::Limits::default()
        .with_max_source_bytes(64 << 10)
        .with_max_repeat(1_000)
        .with_max_terminal_nodes(50_000);
    CompileOptions::default().with_parser_limits(parser).with_front_end_limits(front)
}

/// The separator between a matcher input's grammar and its token stream.
const SEPARATOR: u8 = 0xFF;

pub(crate) fn run(target: Target, input: &[u8]) -> Result<bool, String> {
    match target {
        Target::Lark => grammar(GrammarSpec::Lark(text(input)), input),
        Target::Gbnf => grammar(GrammarSpec::Gbnf(text(input)), input),
        Target::Regex => grammar(GrammarSpec::Regex(text(input)), input),
        Target::JsonSchema => match serde_json::from_slice(input) {
            Ok(schema) => grammar(GrammarSpec::json_schema(schema), input),
            Err(_) => Ok(false),
        },
        Target::TokenizerJson => match Tokenizer::from_tokenizer_json(input) {
            Ok(t) => round_trip(&t, false).map(|()| true),
            Err(_) => Ok(false),
        },
        Target::Tiktoken => match Tokenizer::from_tiktoken(input, Pattern::Cl100k, &[]) {
            Ok(t) => round_trip(&t, true).map(|()| true),
            Err(_) => Ok(false),
        },
        Target::Matcher => matcher(input),
        Target::Trace => trace(input),
    }
}

/// Reads a Mooncake trace under small limits; on success simulates it
/// with a small cache (paged or not, by the input's length) and the slot
/// audit on, and checks the report's totals.
fn trace(input: &[u8]) -> Result<bool, String> {
    use structgen_cli::cache_sim::{
        SimConfig, SimError, TraceLimits, mooncake_workload, parse_mooncake, simulate,
    };
    let limits = TraceLimits::default()
        .with_max_input_length(16 << 10)
        .with_max_requests(64)
        .with_max_total_tokens(64 << 10);
    let Ok(trace) = parse_mooncake(input, &limits) else { return Ok(false) };
    let workload = mooncake_workload("fuzz", &trace);
    let page = if input.len().is_multiple_of(3) { 16 } else { 1 };
    let cache = structgen::radix_cache::CacheConfig::default().with_page_size(page);
    let config = SimConfig::default()
        .with_capacity(Some(4_096 + 512 * (input.len() % 8)))
        .with_cache(cache)
        .with_window(1 + input.len() % 16)
        .with_batch(1 + input.len() % 4)
        .with_timing(false)
        .with_audit(true);
    let report = match simulate(&workload, &config) {
        Ok(r) => r,
        Err(e @ SimError::Audit(_)) => return Err(format!("simulation: {e}")),
        Err(_) => return Ok(true),
    };
    let prompt: u64 = trace.iter().map(|r| r.input_length as u64).sum();
    if report.requests != trace.len()
        || report.prompt_tokens != prompt
        || report.hit_tokens > report.prompt_tokens
    {
        return Err(format!(
            "report of {} requests: {} requests, {} prompt tokens (expected {prompt}), {} hits",
            trace.len(),
            report.requests,
            report.prompt_tokens,
            report.hit_tokens
        ));
    }
    Ok(true)
}

fn text(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}

/// Compiles `spec`; on success, checks acceptance of a few texts made of
/// the input's bytes and one mask, both of which may fail only with an
/// error.
fn grammar(spec: GrammarSpec, input: &[u8]) -> Result<bool, String> {
    let Ok(g) = Grammar::compile(&spec, &limits()) else { return Ok(false) };
    for probe in [&input[..input.len().min(8)], b"a", b"{\"a\": 1}", b"0"] {
        let _ = g.earley().accepts(probe);
    }
    let mut m = match Matcher::new(vocabulary(), &g) {
        Ok(m) => m,
        Err(_) => return Ok(true),
    };
    let _ = m.compute_mask();
    Ok(true)
}

/// Encodes texts that exercise pre-tokenization and merges; a byte-level
/// vocabulary (tiktoken) must decode them back exactly.
fn round_trip(t: &Tokenizer, exact: bool) -> Result<(), String> {
    for text in ["hello world", "  a\n\n1234 éé 😀", "aaaaaaaaaaaaaaaaaaaaaaaa", ""] {
        let ids = t.encode(text);
        if t.count(text) != ids.len() {
            return Err(format!("count {} != encode {} on {text:?}", t.count(text), ids.len()));
        }
        if exact {
            match t.decode(&ids) {
                Ok(bytes) if bytes == text.as_bytes() => {}
                Ok(bytes) => {
                    return Err(format!("decode(encode({text:?})) = {:?}", text_of(&bytes)));
                }
                Err(e) => return Err(format!("decode(encode({text:?})) failed: {e}")),
            }
        }
    }
    Ok(())
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The matcher's vocabulary: every byte, some multi-byte tokens that cut
/// across JSON and Lark lexemes, and a stop token.
pub(crate) fn vocabulary() -> &'static Vocabulary {
    static VOCAB: OnceLock<Vocabulary> = OnceLock::new();
    VOCAB.get_or_init(|| {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in [
            "ab", "abc", "a b", "  ", "\n\n", "{\"", "\":", "\": ", "\",", "\"}", "true", "null",
            "12", "123", "0.", "e+", "\\u", "\\\"", "xyz", "aaaa", "ba", " a", "é", "😀",
        ] {
            tokens.push(t.as_bytes().to_vec());
        }
        let eos = TokenId(tokens.len() as u32);
        Vocabulary::builder()
            .token_list(&tokens)
            .special(eos, "<|eos|>")
            .stop_tokens([eos])
            .build()
            .expect("the fuzz vocabulary builds")
    })
}

/// A Lark grammar, `0xFF`, then token choices: each byte either picks one
/// of the allowed tokens, tries a disallowed one, or rolls back. Checks
/// that the mask and `consume_token` agree on every tried token, and that
/// after a rollback the mask is the one computed at that position before.
fn matcher(input: &[u8]) -> Result<bool, String> {
    let (grammar_text, stream) = match input.iter().position(|&b| b == SEPARATOR) {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => (input, &[][..]),
    };
    let Ok(g) = Grammar::compile(&GrammarSpec::Lark(text(grammar_text)), &limits()) else {
        return Ok(false);
    };
    let vocab = vocabulary();
    let Ok(mut m) = Matcher::new(vocab, &g) else { return Ok(true) };
    // masks[i]: the mask at position i (i tokens consumed), when exact.
    let mut masks: Vec<Option<structgen::toktrie::TokenSet>> = Vec::new();
    let mut rng = SmallRng::seed_from_u64(stream.len() as u64);
    for &b in stream.iter().take(64) {
        let pos = m.num_tokens();
        if b % 8 == 0 && pos > 0 {
            let back = 1 + usize::from(b / 8) % pos;
            m.rollback(back);
            if m.error().is_some() {
                return Ok(true);
            }
            let before = masks.get(pos - back).cloned().flatten();
            let refusals = m.fuel_refusals();
            let Ok(now) = m.compute_mask().cloned() else { return Ok(true) };
            if let Some(before) = before
                && refusals == m.fuel_refusals()
                && before != now
            {
                return Err(format!(
                    "after rollback({back}) to position {}: {} tokens allowed, {} before",
                    pos - back,
                    now.count(),
                    before.count()
                ));
            }
            masks.truncate(pos - back);
            continue;
        }
        let refusals = m.fuel_refusals();
        let mask = match m.compute_mask() {
            Ok(mask) => mask.clone(),
            Err(_) => return Ok(true),
        };
        masks.truncate(pos);
        masks.push((refusals == m.fuel_refusals()).then(|| mask.clone()));
        let allowed: Vec<TokenId> = mask.iter().collect();
        let token = if b % 8 < 6 && !allowed.is_empty() {
            allowed[usize::from(b) % allowed.len()]
        } else {
            TokenId(rng.random_range(0..vocab.trie().vocab_size() as u32))
        };
        let in_mask = mask.contains(token);
        let mut probe = m.clone();
        let result = probe.consume_token(token);
        let consumed = result.is_ok();
        let exact = refusals == probe.fuel_refusals();
        if consumed != in_mask && exact && !matches!(result, Err(MatcherError::Parse(_))) {
            return Err(format!(
                "token {} at position {pos}: in the mask {in_mask}, consume_token {result:?}",
                token.0
            ));
        }
        if consumed {
            m = probe;
        } else if !in_mask {
            // A rejected token leaves `probe` in its sticky error; `m` goes on.
        } else {
            return Ok(true);
        }
        if m.is_stopped() {
            return Ok(true);
        }
    }
    Ok(true)
}

pub(crate) fn builtin_seeds(target: Target) -> Vec<Vec<u8>> {
    let texts: &[&str] = match target {
        Target::Lark => &[
            "start: \"a\"+ \"b\"?",
            "start: list\nlist: \"[\" (INT (\",\" INT)*)? \"]\"\n%import common.INT\n%ignore \" \"",
            "start: A | B\nA: /[a-z]+/\nB: /[0-9]{1,3}/",
            "start: %json {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}",
            "start: x{2,5}\nx: \"ab\" | \"a\"",
            "start: <[1-3]> \"x\" <|eos|>",
            "start: T\nT: /(a|b)*c/ & /.{0,6}/",
            "start: s\ns[lazy]: /.*/ \"!\"",
        ],
        Target::Gbnf => &[
            "root ::= [a-z]+ \"!\"",
            "root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"x\"",
            "root ::= r0\nr0 ::= r1 \"x\" | \"a\"\nr1 ::= \"b\" | root",
            "root ::= \"a\"{2,4} [^\\n]* .",
        ],
        Target::Regex => &[
            "[a-z]+@[a-z]+\\.com",
            "(a|b)*c{2,3}",
            "\\d{1,5}(\\.\\d+)?",
            "((a*){3}){3}b",
            "[\\p{L}\\s]{0,20}",
            "(?i)hello|world",
        ],
        Target::JsonSchema => &[
            "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"maxLength\": 5}}, \"required\": [\"a\"]}",
            "{\"type\": \"array\", \"items\": {\"type\": \"integer\", \"minimum\": -3, \"maximum\": 300}}",
            "{\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"number\", \"multipleOf\": 0.5}]}",
            "{\"type\": \"string\", \"pattern\": \"^[a-z]{2,4}$\"}",
            "{\"$defs\": {\"a\": {\"type\": \"boolean\"}}, \"$ref\": \"#/$defs/a\"}",
            "{\"allOf\": [{\"type\": \"string\", \"pattern\": \"a\"}, {\"pattern\": \"b\"}]}",
            "{\"enum\": [1, \"x\", null, [true]]}",
        ],
        Target::TokenizerJson => &[],
        Target::Tiktoken => &["IA== 0\nYQ== 1\nYg== 2\nYWI= 3\n"],
        Target::Trace => &[
            "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}\n\
             {\"timestamp\": 3, \"input_length\": 1500, \"output_length\": 9, \"hash_ids\": [0, 1, 2]}\n\
             {\"timestamp\": 1, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0]}\n",
            "{\"timestamp\": 7, \"input_length\": 0, \"output_length\": 0, \"hash_ids\": []}\n\n",
        ],
        Target::Matcher => &[
            "start: \"a\"+ \"b\"?\u{FF}\u{1}\u{2}\u{3}",
            "start: %json {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}\u{FF}\u{9}\u{11}\u{21}\u{0}\u{31}",
            "start: A (\" \" A)*\nA: /[a-z]{1,4}/\u{FF}\u{5}\u{5}\u{40}\u{5}\u{2}",
        ],
    };
    let mut seeds: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
    if target == Target::Tiktoken {
        seeds.push(byte_ranks());
    }
    if target == Target::TokenizerJson {
        seeds.push(tiny_tokenizer_json().into_bytes());
    }
    if target == Target::Matcher {
        // `\u{FF}` in a &str is two bytes; the separator is the raw byte.
        for s in &mut seeds {
            if let Some(i) = s.windows(2).position(|w| w == "\u{FF}".as_bytes()) {
                s.splice(i..i + 2, [SEPARATOR]);
            }
        }
    }
    seeds
}

/// A tiktoken file with every single byte and a few merges.
fn byte_ranks() -> Vec<u8> {
    let mut out = Vec::new();
    let mut rank = 0;
    let mut add = |bytes: &[u8], rank: &mut u32| {
        out.extend_from_slice(base64(bytes).as_bytes());
        out.extend_from_slice(format!(" {rank}\n").as_bytes());
        *rank += 1;
    };
    for b in 0..=255u8 {
        add(&[b], &mut rank);
    }
    for m in [&b"he"[..], b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld", b" world", b"aa"]
    {
        add(m, &mut rank);
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A byte-level BPE `tokenizer.json`: the 256 byte symbols (GPT-2's
/// byte-to-character map) and a handful of merges.
fn tiny_tokenizer_json() -> String {
    let mut symbols = Vec::with_capacity(256);
    let mut next = 256u32;
    for b in 0..=255u32 {
        let printable = (33..=126).contains(&b) || (161..=172).contains(&b) || b >= 174;
        let c = if printable {
            b
        } else {
            next += 1;
            next - 1
        };
        symbols.push(char::from_u32(c).unwrap_or('?').to_string());
    }
    let mut vocab = serde_json::Map::new();
    for (i, s) in symbols.iter().enumerate() {
        vocab.insert(s.clone(), i.into());
    }
    let merges = ["h e", "l l", "he ll", "hell o", "\u{120} w", "o r", "\u{120}w or"];
    for (i, m) in merges.iter().enumerate() {
        vocab.insert(m.replace(' ', ""), (256 + i).into());
    }
    serde_json::json!({
        "added_tokens": [{"id": 300, "content": "<|eos|>", "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "byte_fallback": false, "vocab": vocab, "merges": merges},
    })
    .to_string()
}
