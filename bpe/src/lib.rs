//! Exact byte-pair encoding in linear time.
//!
//! `bpe` loads a BPE vocabulary (tiktoken rank files, Hugging Face
//! `tokenizer.json`), pre-tokenizes text exactly like the vocabulary's split
//! pattern, and encodes, counts and decodes with the ids the reference
//! implementations (tiktoken, Hugging Face `tokenizers`) produce.
//!
//! ```
//! let tok = structgen_bpe::Tokenizer::o200k_base();
//! let ids = tok.encode("Hello, world!");
//! assert_eq!(ids.len(), tok.count("Hello, world!"));
//! assert_eq!(tok.decode_to_string(&ids).unwrap(), "Hello, world!");
//! ```
//!
//! # Vocabularies
//! - [`Tokenizer::o200k_base`], [`Tokenizer::cl100k_base`]: embedded
//!   ([`data`]; MIT, see `data/LICENSE-tiktoken`), with tiktoken's special
//!   tokens ([`O200K_SPECIALS`], [`CL100K_SPECIALS`]).
//! - [`Tokenizer::from_tiktoken`]: any rank file (p50k/r50k with
//!   [`Pattern::Gpt2`] and [`P50K_SPECIALS`]).
//! - [`Tokenizer::from_tokenizer_json`]: Hugging Face BPE, byte-level
//!   (GPT-2, Llama-3, Qwen2/3, SmolLM2) or SentencePiece-style (Llama-2,
//!   Mistral).
//! - [`Tokenizer::from_gguf`]: the tokenizer in a GGUF model file's
//!   metadata (llama.cpp's `gpt2` and `llama` kinds), read from any
//!   `std::io::Read` up to the tensors; [`GgufVocab`] also gives the
//!   stop ids and the chat template.
//!
//! Token ids are plain `u32`. [`Tokenizer::token_bytes`] gives the exact
//! bytes of a token (after byte-level, `▁` and `<0xNN>` decoding).
//!
//! A byte-level vocabulary may lack the token of a byte (SmolLM2 has none
//! for 21 of the 256: six control characters and bytes never or rarely in
//! UTF-8; [`Tokenizer::byte_has_token`] tells). Encoding then does what
//! Hugging Face `tokenizers` does: the byte is dropped from its piece (its
//! neighbours may merge: `!\x04!` encodes as `!!`), or becomes the unknown
//! token when the file names one (fused with `fuse_unk`). So
//! `decode(encode(text))` is `text` without those bytes, and no token
//! sequence spells them. The restarting encoders below agree.
//!
//! # Special tokens
//! tiktoken semantics: [`Tokenizer::encode`] treats special-token names as
//! ordinary text; [`Tokenizer::encode_with_specials`] turns the names of
//! [`Allowed`] specials into their ids and reports any other special name as
//! an [`EncodeError`]. Hugging Face added tokens are special tokens here.
//!
//! # Algorithm
//! Text is cut into pieces by the pre-tokenizer ([`Pattern`], hand-written
//! and tested equal to the reference regexes). A piece that is itself a token
//! is emitted directly (tiktoken, and Hugging Face with `ignore_merges`);
//! short pieces run the merge loop; long pieces run the backtracking encoder
//! (linear; see `DESIGN.md`) when the vocabulary admits it, else a
//! priority-queue BPE.
//!
//! # Budgets and incremental encoding
//! [`Tokenizer::count_till_limit`] (exact, stops early),
//! [`Tokenizer::split_at_tokens`] (the longest char-boundary prefix with at
//! most `n` tokens, exact), [`Tokenizer::chunks`] (consecutive chunks of at
//! most `n` tokens, optionally cut after newlines or whitespace),
//! [`AppendingEncoder`] and [`PrependableEncoder`] (the exact tokens of a
//! text growing at the end or at the front, re-encoding only the open piece:
//! the word being typed), and [`IntervalEncoding`] (the count of any range of
//! a preprocessed text in a few lookups, long whitespace runs included).
//! All of them equal [`Tokenizer::encode`] / [`Tokenizer::count`] of the
//! text in question (property-tested); `DESIGN.md` says why.
//!
//! ```
//! let tok = structgen_bpe::Tokenizer::o200k_base();
//! let text = format!("A title.{}Some prose after a run of spaces.", " ".repeat(10_000));
//! let iv = structgen_bpe::IntervalEncoding::new(&tok, &text);
//! assert_eq!(iv.count(3..9_000), tok.count(&text[3..9_000]));
//!
//! let mut enc = structgen_bpe::AppendingEncoder::new(&tok);
//! enc.push("Hello, wor");
//! enc.push("ld!");
//! assert_eq!(enc.count(), tok.count("Hello, world!"));
//! ```
//!
//! # Complexity
//! `n` = input bytes, `L` = longest token (bytes). Encoding and counting are
//! `O(n * L)` in the worst case with the backtracking encoder (tiktoken's
//! vocabularies and every shared `tokenizer.json`, Llama-3's non-monotone
//! merges and SentencePiece-style characters included; see `DESIGN.md`),
//! `O(n log n)` with the priority-queue fallback for a vocabulary it does not
//! admit ([`Tokenizer::has_linear_encoder`] tells). Memory while encoding is
//! linear in the longest piece (a few bytes per byte: 100 MB of one letter
//! through Llama-3 peaks at about 65 MB above the text).
//! Loading is linear in the file size (ids may span at most twice the
//! tokens plus 65,536, so per-id tables stay proportional to the file: a
//! sparser vocabulary is a [`LoadError`]); the first long piece adds the trie
//! build, `O(V log V)` (and, for a vocabulary that is not embedded, settling
//! every token: `O(V * L)` lookups). `split_at_tokens` reads at most
//! `(n_tokens + 1) * L` bytes and re-encodes the last pieces, except inside a
//! long piece, where cuts within a run of one character class are counted
//! from a prefix table: linear on runs, SentencePiece-style tokenizers
//! (Llama-2, Mistral) included (see `DESIGN.md`, "Budgets"). The incremental encoders cost `O(1)`
//! amortized per appended or prepended byte plus the open word when read;
//! inside one huge open piece each settling re-scans it. Interval counting:
//! `O(n)` preprocessing (long pieces: a table step per byte), then a few
//! lookups per range, whitespace runs of any length included.
//!
//! # Memory
//! Token bytes in one buffer plus a 4-byte-per-slot hash table and a
//! 10-bit-per-token Bloom filter (about 6 MB for o200k). The backtracking
//! encoder's trie (about 5 MB for o200k) is built on the first long piece
//! (20-40 ms); its per-token records (32 bytes each: validity, canonical
//! split, next prefix) are filled on first use of each token for the
//! embedded vocabularies, and all at that build for others (which are then
//! checked to admit the encoder). Encoding long pieces keeps a 128 KiB cache
//! of pair answers per thread.
//! [`IntervalEncoding`] keeps 12 bytes per text byte plus 12 per piece.
//!
//! # Panics
//! None on any input, except [`IntervalEncoding::count`] on a range that is
//! out of bounds or not on char boundaries (like slicing a `str`;
//! [`IntervalEncoding::try_count`] returns `None`). [`Tokenizer::o200k_base`] and
//! [`Tokenizer::cl100k_base`] would panic only if the embedded files were
//! corrupt; a test loads them.
//!
//! # Features
//! All on by default: `rayon` (`Tokenizer::encode_batch` and `count_batch`
//! on rayon's pool), `o200k` and `cl100k` (the embedded rank files behind
//! [`Tokenizer::o200k_base`] and [`Tokenizer::cl100k_base`], 3.6 and 1.7 MB
//! of the binary). An engine that loads its model's `tokenizer.json` turns
//! them off with `default-features = false`.
//!
//! # Boundaries
//! Knows nothing about grammars or tries; does no file I/O (callers hand it
//! bytes).
#![forbid(unsafe_code)]

mod appending;
mod backtrack;
#[cfg(feature = "rayon")]
mod batch;
mod chunk;
pub mod data;
mod error;
mod gguf;
mod hf;
mod incremental;
mod interval;
mod model;
mod prepending;
mod pretok;
mod runs;
mod tiktoken;
mod tokenizer;
mod trie;
mod unicode;
mod vocab;

pub use appending::AppendingEncoder;
pub use chunk::{Boundary, Chunk};
pub use error::{DecodeError, EncodeError, LoadError};
pub use gguf::{GgufLimits, GgufVocab};
pub use interval::IntervalEncoding;
pub use prepending::PrependableEncoder;
pub use pretok::{Pattern, Pieces};
pub use tiktoken::{CL100K_SPECIALS, O200K_SPECIALS, P50K_SPECIALS};
pub use tokenizer::{Allowed, Tokenizer};

#[cfg(test)]
mod tests {
    #[test]
    fn public_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<super::Tokenizer>();
        check::<super::IntervalEncoding<'static>>();
        check::<super::AppendingEncoder<'static>>();
        check::<super::PrependableEncoder<'static>>();
        check::<super::LoadError>();
    }
}
