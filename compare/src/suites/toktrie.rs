//! `cargo xtask bench toktrie`: the full mask walk of our `toktrie` against
//! llguidance's `toktrie` 1.9.1 (`peer_toktrie`), on the same vocabularies
//! with the same recognizer logic.
//!
//! Vocabularies: o200k and cl100k (embedded in `bpe`), Llama-3 (from
//! `../shared/data/tokenizers`, skipped with a note when absent). Recognizers:
//! accept-everything, digits `[0-9]+`, short words `[a-z ]{0,20}`, and the
//! inside of a JSON string `[^"\\\x00-\x1f]*"`, each a table DFA driven
//! through a stack of states by one shared struct that implements both
//! crates' `Recognizer` traits, so only the walks differ.
//!
//! Both tries hold the ordinary tokens only (special tokens never match
//! text); every case first asserts that both masks are equal and that both
//! walks visit the same nodes, then times one full mask (clearing included)
//! in interleaved batches and reports the median.

use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use base64::Engine;
use compare::report::Report;
use serde_json::{Value, json};

/// A vocabulary: the bytes of every id (empty for specials and holes) and
/// the special tokens by id and name.
struct Vocab {
    name: &'static str,
    tokens: Vec<Vec<u8>>,
    specials: Vec<(u32, String)>,
    eos: u32,
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("the toktrie suite takes no arguments");
    }
    let mut report = Report::new(
        "toktrie",
        &[
            "vocabulary",
            "recognizer",
            "allowed",
            "visited nodes",
            "ours µs",
            "peer µs",
            "ratio",
            "ours ns/node",
            "peer ns/node",
        ],
    );
    let mut vocabs = vec![
        tiktoken(
            "o200k",
            bpe::data::O200K_BASE_TIKTOKEN,
            &[(199_999, "<|endoftext|>"), (200_018, "<|endofprompt|>")],
        )?,
        tiktoken(
            "cl100k",
            bpe::data::CL100K_BASE_TIKTOKEN,
            &[
                (100_257, "<|endoftext|>"),
                (100_258, "<|fim_prefix|>"),
                (100_259, "<|fim_middle|>"),
                (100_260, "<|fim_suffix|>"),
                (100_276, "<|endofprompt|>"),
            ],
        )?,
    ];
    match compare::shared::data_dir() {
        Some(_) => vocabs.push(llama3()?),
        None => report.note("Llama-3 skipped: ../shared/data is absent."),
    }
    let mut sizes = Vec::new();
    for vocab in &vocabs {
        let ours = ours_trie(vocab)?;
        let peer = peer_trie(vocab);
        let peer_nodes = peer.root().subtree_size();
        ensure!(ours.num_nodes() == peer_nodes, "{}: node counts differ", vocab.name);
        sizes.push(json!({
            "vocabulary": vocab.name,
            "ids": ours.vocab_size(),
            "nodes": ours.num_nodes(),
            "nodes per id": ours.num_nodes() as f64 / ours.vocab_size() as f64,
            "ours bytes/node": toktrie::TokTrie::node_size_bytes(),
            "peer bytes/node": std::mem::size_of::<peer_toktrie::TrieNode>(),
        }));
        for (rname, dfa) in recognizers() {
            let case = format!("{} / {rname}", vocab.name);
            let depth = ours.max_token_len();
            let mut mask = ours.token_set();
            let mut peer_mask = peer.alloc_token_set();
            let mut r = Walker::new(&dfa, ours.max_token_len());
            ours.compute_mask(&mut r, &mut mask);
            let visited = r.pushes_tried;
            let mut r = Walker::new(&dfa, ours.max_token_len());
            peer.add_bias(&mut r, &mut peer_mask, &[]);
            ensure!(r.pushes_tried == visited, "{case}: the walks visit different nodes");
            let peer_ids: Vec<u32> = peer_mask.to_list();
            let our_ids: Vec<u32> = mask.iter().map(|t| t.0).collect();
            ensure!(our_ids == peer_ids, "{case}: masks differ");
            ensure!(!our_ids.is_empty(), "{case}: empty mask");

            let (ours_ns, peer_ns) = time_pair(
                || {
                    let mut r = Walker::new(&dfa, depth);
                    ours.compute_mask(&mut r, &mut mask);
                },
                || {
                    let mut r = Walker::new(&dfa, depth);
                    peer_mask.set_all(false);
                    peer.add_bias(&mut r, &mut peer_mask, &[]);
                },
            );
            report.row(vec![
                json!(vocab.name),
                json!(rname),
                json!(our_ids.len()),
                json!(visited),
                json!(ours_ns / 1e3),
                json!(peer_ns / 1e3),
                json!(ours_ns / peer_ns),
                json!(ours_ns / visited as f64),
                json!(peer_ns / visited as f64),
            ]);
        }
    }
    for s in &sizes {
        report.note(format!(
            "{}: {} ids, {} nodes ({:.2} per id), {} bytes/node ours, {} bytes/node peer.",
            s["vocabulary"].as_str().unwrap_or(""),
            s["ids"],
            s["nodes"],
            s["nodes per id"].as_f64().unwrap_or(0.0),
            s["ours bytes/node"],
            s["peer bytes/node"],
        ));
    }
    report.extra("tries", Value::Array(sizes));

    let o200k = &vocabs[0];
    let (ours_build, peer_build) = time_pair(
        || {
            std::hint::black_box(ours_trie(o200k).ok());
        },
        || {
            std::hint::black_box(peer_trie(o200k));
        },
    );
    report.note(format!(
        "o200k trie build: ours {:.1} ms, peer {:.1} ms (ratio {:.2}).",
        ours_build / 1e6,
        peer_build / 1e6,
        ours_build / peer_build
    ));
    report.extra("o200k build ms", json!({"ours": ours_build / 1e6, "peer": peer_build / 1e6}));
    report.note("µs: one full mask (clearing included), fastest of 150 interleaved batches of ~0.5 ms; ratio = ours / peer (lower is better).");
    report.note(format!("machine: {}", compare::report::machine()));
    report.finish()?;
    Ok(())
}

/// The recognizers: a name and a DFA.
fn recognizers() -> Vec<(&'static str, Dfa)> {
    vec![
        ("everything", Dfa::from_fn(1, |_, _| Some(0))),
        ("digits [0-9]+", Dfa::from_fn(1, |_, b| b.is_ascii_digit().then_some(0))),
        (
            "words [a-z ]{0,20}",
            Dfa::from_fn(21, |s, b| {
                (s < 20 && (b.is_ascii_lowercase() || b == b' ')).then_some(s + 1)
            }),
        ),
        (
            "JSON string",
            Dfa::from_fn(2, |s, b| match (s, b) {
                (0, b'"') => Some(1),
                (0, b'\\' | 0x00..=0x1f) => None,
                (0, _) => Some(0),
                _ => None,
            }),
        ),
    ]
}

/// The dead state.
const DEAD: u32 = u32::MAX;

/// A byte DFA: `table[state * 256 + byte]` is the next state or [`DEAD`].
struct Dfa {
    table: Vec<u32>,
}

impl Dfa {
    fn from_fn(states: u32, next: impl Fn(u32, u8) -> Option<u32>) -> Dfa {
        let mut table = vec![DEAD; states as usize * 256];
        for s in 0..states {
            for b in 0..=255u8 {
                table[s as usize * 256 + b as usize] = next(s, b).unwrap_or(DEAD);
            }
        }
        Dfa { table }
    }
}

/// The DFA driven by a stack of states: the one recognizer both walks use.
struct Walker<'a> {
    table: &'a [u32],
    /// `stack[..=top]` are the states after each pushed byte; one more
    /// entry than the longest token, so it never grows.
    stack: Box<[u32]>,
    top: usize,
    /// Calls of `try_push_byte` (the visited nodes), for the untimed check.
    pushes_tried: usize,
}

impl Walker<'_> {
    fn new(dfa: &Dfa, max_depth: usize) -> Walker<'_> {
        let stack = vec![0; max_depth + 1].into_boxed_slice();
        Walker { table: &dfa.table, stack, top: 0, pushes_tried: 0 }
    }

    #[inline(always)]
    fn push(&mut self, byte: u8) -> bool {
        self.pushes_tried += 1;
        let state = self.stack[self.top];
        let next = self.table[state as usize * 256 + byte as usize];
        if next == DEAD {
            return false;
        }
        self.top += 1;
        self.stack[self.top] = next;
        true
    }
}

impl toktrie::Recognizer for Walker<'_> {
    #[inline(always)]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.push(byte)
    }
    #[inline(always)]
    fn pop_bytes(&mut self, n: usize) {
        self.top -= n;
    }
}

impl peer_toktrie::Recognizer for Walker<'_> {
    #[inline(always)]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.push(byte)
    }
    #[inline(always)]
    fn pop_bytes(&mut self, n: usize) {
        self.top -= n;
    }
    fn collapse(&mut self) {
        self.stack[0] = self.stack[self.top];
        self.top = 0;
    }
    fn trie_finished(&mut self) {}
}

fn ours_trie(vocab: &Vocab) -> Result<toktrie::TokTrie> {
    let mut b = toktrie::TokTrieBuilder::new().vocab_size(vocab.tokens.len());
    let special: std::collections::HashSet<u32> = vocab.specials.iter().map(|s| s.0).collect();
    b = b.tokens(
        vocab
            .tokens
            .iter()
            .enumerate()
            .filter(|(i, t)| !t.is_empty() && !special.contains(&(*i as u32)))
            .map(|(i, t)| (i as u32, t.as_slice())),
    );
    for (id, name) in &vocab.specials {
        b = b.special(toktrie::TokenId(*id), name);
    }
    Ok(b.eos(toktrie::TokenId(vocab.eos)).build()?)
}

fn peer_trie(vocab: &Vocab) -> peer_toktrie::TokTrie {
    let info = peer_toktrie::TokRxInfo::new(vocab.tokens.len() as u32, vocab.eos);
    peer_toktrie::TokTrie::from(&info, &vocab.tokens)
}

/// A tiktoken rank file plus its special tokens.
fn tiktoken(name: &'static str, file: &[u8], specials: &[(u32, &str)]) -> Result<Vocab> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut pairs = Vec::new();
    for (n, line) in file.split(|&b| b == b'\n').enumerate().filter(|l| !l.1.is_empty()) {
        let text = std::str::from_utf8(line).with_context(|| format!("{name} line {}", n + 1))?;
        let (b, rank) = text.split_once(' ').with_context(|| format!("{name} line {}", n + 1))?;
        pairs.push((rank.parse::<u32>()?, b64.decode(b)?));
    }
    let size =
        specials.iter().map(|s| s.0 + 1).chain(pairs.iter().map(|p| p.0 + 1)).max().unwrap_or(0);
    let mut tokens = vec![Vec::new(); size as usize];
    for (rank, bytes) in pairs {
        tokens[rank as usize] = bytes;
    }
    Ok(Vocab {
        name,
        tokens,
        specials: specials.iter().map(|(id, n)| (*id, (*n).to_owned())).collect(),
        eos: specials[0].0,
    })
}

/// Llama-3's `tokenizer.json`: byte-level BPE vocabulary plus added tokens.
fn llama3() -> Result<Vocab> {
    let raw = compare::shared::read("tokenizers/llama3.tokenizer.json.gz")?;
    let json: Value = serde_json::from_slice(&raw)?;
    let vocab = json["model"]["vocab"].as_object().context("model.vocab")?;
    let unbyte = byte_level_decoder();
    let mut pairs = Vec::new();
    for (text, id) in vocab {
        let id = id.as_u64().context("vocab id")? as u32;
        let bytes: Option<Vec<u8>> = text.chars().map(|c| unbyte.get(&c).copied()).collect();
        pairs.push((id, bytes.with_context(|| format!("token {text:?} is not byte-level"))?));
    }
    let mut specials = Vec::new();
    for added in json["added_tokens"].as_array().context("added_tokens")? {
        let id = added["id"].as_u64().context("added id")? as u32;
        specials.push((id, added["content"].as_str().context("added content")?.to_owned()));
    }
    let size =
        pairs.iter().map(|p| p.0 + 1).chain(specials.iter().map(|s| s.0 + 1)).max().unwrap_or(0);
    let mut tokens = vec![Vec::new(); size as usize];
    for (id, bytes) in pairs {
        tokens[id as usize] = bytes;
    }
    let eos = specials.iter().find(|s| s.1 == "<|end_of_text|>").context("no <|end_of_text|>")?.0;
    Ok(Vocab { name: "llama3", tokens, specials, eos })
}

/// GPT-2's byte-level alphabet, reversed: printable bytes stand for
/// themselves, the others for the code points from U+0100 on, in byte order.
fn byte_level_decoder() -> std::collections::HashMap<char, u8> {
    let mut map = std::collections::HashMap::new();
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let c = if printable {
            char::from(b)
        } else {
            next += 1;
            char::from_u32(next - 1).unwrap_or('\0')
        };
        map.insert(c, b);
    }
    map
}

/// The time of one call of `ours` and of `peer`, in nanoseconds: the
/// fastest of 150 interleaved batches of about half a millisecond each. On a
/// shared machine other processes only ever add time, and a short batch is
/// more likely than a long one to run undisturbed, so the minimum over many
/// short batches is the steadiest estimate of the undisturbed cost.
fn time_pair(mut ours: impl FnMut(), mut peer: impl FnMut()) -> (f64, f64) {
    const ROUNDS: usize = 150;
    let calls = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed().as_micros() < 500 || n < 1 {
            f();
            n += 1;
        }
        n
    };
    let n_ours = calls(&mut ours);
    let n_peer = calls(&mut peer);
    let batch = |f: &mut dyn FnMut(), n: u64| {
        let start = Instant::now();
        for _ in 0..n {
            f();
        }
        start.elapsed().as_nanos() as f64 / n as f64
    };
    let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..ROUNDS {
        a = a.min(batch(&mut ours, n_ours));
        b = b.min(batch(&mut peer, n_peer));
    }
    (a, b)
}
