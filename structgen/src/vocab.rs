//! [`Vocabulary`]: the one way a tokenizer enters structgen, with its stop
//! tokens, the model's (possibly padded) vocabulary size, and what is
//! built once per vocabulary and shared by every matcher (the trie, the
//! slicer, the forced-token coalescer, the free-text split masks).

use std::sync::Arc;

use coalesce::Coalescer;
use slicer::{Slicer, SlicerConfig};
use toktrie::{TokTrie, TokTrieBuilder, TokenId};

use crate::error::{Error, ErrorKind};
use crate::matcher::split::SharedSplits;

/// Special-token names that end a turn or a text in common vocabularies,
/// the default stop set of [`Vocabulary::from_tokenizer`]: tiktoken, GPT-2
/// and Qwen `<|endoftext|>`, Llama-3 `<|end_of_text|>`, `<|eot_id|>` and
/// `<|eom_id|>`, SentencePiece `</s>`, ChatML `<|im_end|>`, Gemma `<eos>`
/// and `<end_of_turn>`, Phi-3 `<|end|>`, Mistral v7 `</s>`.
pub const DEFAULT_STOP_NAMES: &[&str] = &[
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "</s>",
    "<|im_end|>",
    "<eos>",
    "<end_of_turn>",
    "<|end|>",
];

/// A tokenizer's vocabulary as matchers see it: built once, shared by
/// [`Arc`] (cloning is a reference count), `Send + Sync`.
///
/// It holds the vocabulary trie, the default stop tokens (which end a
/// sequence when the grammar accepts; a matcher may override them per
/// request), the model's vocabulary size (at least the tokenizer's: models
/// pad their embedding, and a bitmask row covers the model's size), and,
/// when built from a [`bpe::Tokenizer`], the tokenizer for forced tokens in
/// its canonical tokenization. The JSON slicer (precomputed masks for
/// unconstrained contexts) is built here once, when enabled.
///
/// ```
/// use structgen::{Vocabulary, toktrie::TokenId};
///
/// // An engine that only has id -> bytes:
/// let vocab = Vocabulary::builder()
///     .token(TokenId(0), b"a")
///     .token(TokenId(1), b"b")
///     .special(TokenId(2), "<eos>")
///     .stop_tokens([TokenId(2)])
///     .model_vocab_size(64)
///     .build()
///     .unwrap();
/// assert_eq!(vocab.stop_tokens(), &[TokenId(2)]);
/// assert_eq!(vocab.model_vocab_size(), 64);
/// assert_eq!(vocab.bitmask_words(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Vocabulary {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    trie: Arc<TokTrie>,
    /// Invariant: every id is below `trie.vocab_size()`.
    stop: Vec<TokenId>,
    tokenizer: Option<Arc<bpe::Tokenizer>>,
    /// The coalescer of `tokenizer`, when it supports forced tokens.
    coalescer: Option<Coalescer>,
    slicer: Option<Arc<Slicer>>,
    /// The split masks of free text, learned by its matchers.
    splits: Arc<SharedSplits>,
}

impl Vocabulary {
    /// Whether two handles share one vocabulary.
    pub fn ptr_eq(&self, other: &Vocabulary) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The vocabulary of `tokenizer`: its ordinary tokens by their bytes,
    /// its special tokens by name, the specials named in
    /// [`DEFAULT_STOP_NAMES`] as stop tokens, forced tokens in its
    /// canonical tokenization (when [`coalesce`] supports it), and the JSON
    /// slicer.
    ///
    /// # Errors
    /// A vocabulary the trie cannot hold ([`ErrorKind::Vocabulary`]).
    pub fn from_tokenizer(tokenizer: Arc<bpe::Tokenizer>) -> Result<Vocabulary, Error> {
        Vocabulary::builder().tokenizer(tokenizer).build()
    }

    /// A builder, for vocabularies given token by token or with settings
    /// other than the defaults.
    pub fn builder() -> VocabularyBuilder {
        VocabularyBuilder::default()
    }

    /// The vocabulary trie.
    pub fn trie(&self) -> &Arc<TokTrie> {
        &self.inner.trie
    }

    /// The tokenizer, when the vocabulary was built from one.
    pub fn tokenizer(&self) -> Option<&Arc<bpe::Tokenizer>> {
        self.inner.tokenizer.as_ref()
    }

    /// The default stop tokens of matchers over this vocabulary.
    pub fn stop_tokens(&self) -> &[TokenId] {
        &self.inner.stop
    }

    /// The model's vocabulary size: the number of ids a mask and a bitmask
    /// row cover (ids past the tokenizer's are never allowed).
    pub fn model_vocab_size(&self) -> usize {
        self.inner.trie.vocab_size()
    }

    /// The number of 32-bit words in one bitmask row: `ceil(model_vocab_size / 32)`.
    pub fn bitmask_words(&self) -> usize {
        toktrie::TokenSet::bitmask_words(self.model_vocab_size())
    }

    /// The JSON slicer, when enabled.
    pub fn slicer(&self) -> Option<&Arc<Slicer>> {
        self.inner.slicer.as_ref()
    }

    /// How many free-text split masks the matchers of this vocabulary
    /// share (see [`Matcher`](crate::Matcher)'s split masks): at most
    /// [`MAX_SHARED_SPLITS`](crate::MAX_SHARED_SPLITS).
    pub fn shared_splits_len(&self) -> usize {
        self.inner.splits.len()
    }

    /// Forgets the free-text split masks the matchers of this vocabulary
    /// learned (a benchmark's cold start; memory is bounded without it).
    /// Masks are the same; the next request in free text makes its splits
    /// again (a split of each text's start, derived ones after it).
    pub fn clear_shared_splits(&self) {
        self.inner.splits.clear();
    }

    /// The store of shared split masks.
    pub(crate) fn shared_splits(&self) -> Arc<SharedSplits> {
        self.inner.splits.clone()
    }

    /// Whether matchers over this vocabulary compute forced tokens
    /// ([`Matcher::forced_tokens`](crate::Matcher::forced_tokens)): built
    /// from a tokenizer whose canonical tokenization [`coalesce`] supports,
    /// without [`VocabularyBuilder::no_forcing`].
    pub fn supports_forced_tokens(&self) -> bool {
        self.inner.coalescer.is_some()
    }

    /// The forced-token coalescer, when the tokenizer supports forced
    /// tokens.
    pub(crate) fn coalescer(&self) -> Option<&Coalescer> {
        self.inner.coalescer.as_ref()
    }

    /// Checks that every id of `tokens` is in the vocabulary.
    pub(crate) fn check_ids(&self, tokens: &[TokenId]) -> Result<(), Error> {
        match tokens.iter().find(|t| t.index() >= self.model_vocab_size()) {
            Some(t) => Err(Error::new(
                ErrorKind::Vocabulary,
                format!(
                    "stop token {} is not in the vocabulary ({} ids)",
                    t.0,
                    self.model_vocab_size()
                ),
            )),
            None => Ok(()),
        }
    }
}

/// Which slicer a [`VocabularyBuilder`] builds.
#[derive(Clone, Debug, Default)]
enum SlicerChoice {
    /// The JSON slicer when the vocabulary has at least
    /// [`MIN_SLICED_VOCAB`] tokens (below that a walk is cheap anyway).
    #[default]
    Json,
    Off,
    Custom(SlicerConfig),
}

/// Vocabularies smaller than this get no slicer by default.
const MIN_SLICED_VOCAB: usize = 4096;

/// Builds a [`Vocabulary`] from a tokenizer or token by token.
///
/// Without [`stop_tokens`](VocabularyBuilder::stop_tokens), the stop
/// tokens are the specials named in [`DEFAULT_STOP_NAMES`].
#[derive(Clone, Debug, Default)]
pub struct VocabularyBuilder {
    tokenizer: Option<Arc<bpe::Tokenizer>>,
    tokens: Vec<(TokenId, Vec<u8>)>,
    specials: Vec<(TokenId, String)>,
    stop: Option<Vec<TokenId>>,
    model_vocab_size: Option<usize>,
    slicer: SlicerChoice,
    forcing: bool,
}

impl VocabularyBuilder {
    /// Takes every token of `tokenizer` (ordinary tokens by their bytes,
    /// specials by name) and uses it for forced tokens.
    pub fn tokenizer(mut self, tokenizer: Arc<bpe::Tokenizer>) -> VocabularyBuilder {
        self.tokenizer = Some(tokenizer);
        self.forcing = true;
        self
    }

    /// Adds an ordinary token: `id` stands for `bytes`.
    pub fn token(mut self, id: TokenId, bytes: &[u8]) -> VocabularyBuilder {
        self.tokens.push((id, bytes.to_vec()));
        self
    }

    /// Adds ordinary tokens `0..n` from a list indexed by id (an engine's
    /// id → bytes table); use [`special`](VocabularyBuilder::special) for
    /// the ids that are special tokens instead.
    pub fn token_list<B: AsRef<[u8]>>(mut self, tokens: &[B]) -> VocabularyBuilder {
        let n = self.tokens.len();
        self.tokens.reserve(tokens.len());
        for (i, b) in tokens.iter().enumerate() {
            self.tokens.push((TokenId(i as u32), b.as_ref().to_vec()));
        }
        debug_assert!(self.tokens.len() == n + tokens.len());
        self
    }

    /// Adds a special token (matched by id, never by text), named `name`
    /// for grammars that mention it (`<|eom_id|>`).
    pub fn special(mut self, id: TokenId, name: &str) -> VocabularyBuilder {
        self.specials.push((id, name.to_owned()));
        self
    }

    /// The stop tokens (replacing the default set): they end a sequence,
    /// allowed exactly when the grammar accepts.
    pub fn stop_tokens(mut self, stop: impl IntoIterator<Item = TokenId>) -> VocabularyBuilder {
        self.stop = Some(stop.into_iter().collect());
        self
    }

    /// The model's vocabulary size, when larger than the tokenizer's
    /// (padded embeddings); ids past the tokenizer's are never allowed.
    pub fn model_vocab_size(mut self, n: usize) -> VocabularyBuilder {
        self.model_vocab_size = Some(n);
        self
    }

    /// The slicer: `None` for none, `Some(config)` for a custom one; by
    /// default the JSON slicer for vocabularies of 4,096 tokens or more.
    /// Masks are the same with or without it; only their cost changes.
    pub fn slicer(mut self, config: Option<SlicerConfig>) -> VocabularyBuilder {
        self.slicer = match config {
            Some(c) => SlicerChoice::Custom(c),
            None => SlicerChoice::Off,
        };
        self
    }

    /// Turns forced tokens off even when a tokenizer is given.
    pub fn no_forcing(mut self) -> VocabularyBuilder {
        self.forcing = false;
        self
    }

    /// Builds the trie (and the slicer, when enabled).
    ///
    /// Takes O(B log V) for `B` token bytes and `V` tokens, plus the
    /// slicer's construction (tens of milliseconds on 128k-token
    /// vocabularies).
    ///
    /// # Errors
    /// [`ErrorKind::Vocabulary`]: an id given twice, an id past the model's
    /// vocabulary size, a stop token that is not in the vocabulary, a
    /// vocabulary the trie cannot hold, a slicer that cannot be built.
    pub fn build(self) -> Result<Vocabulary, Error> {
        let vocab_err = |m: String| Error::new(ErrorKind::Vocabulary, m);
        let own_size = self.tokenizer.as_ref().map_or(0, |t| t.vocab_size());
        let given = self
            .tokens
            .iter()
            .map(|t| t.0.index() + 1)
            .chain(self.specials.iter().map(|s| s.0.index() + 1))
            .max()
            .unwrap_or(0);
        let needed = own_size.max(given);
        let size = match self.model_vocab_size {
            Some(n) if n < needed => {
                return Err(vocab_err(format!(
                    "the model vocabulary size {n} is smaller than the tokenizer's ({needed} ids)"
                )));
            }
            Some(n) => n,
            None => needed,
        };
        let mut b = TokTrieBuilder::new().vocab_size(size);
        let mut specials: Vec<(TokenId, String)> = Vec::new();
        if let Some(tok) = &self.tokenizer {
            let ordinary = (0..tok.vocab_size() as u32)
                .filter(|&id| !tok.is_special(id))
                .filter_map(|id| Some((id, tok.token_bytes(id)?)));
            b = b.tokens(ordinary);
            specials.extend(tok.special_tokens().map(|(id, n)| (TokenId(id), n.to_owned())));
        }
        for (id, bytes) in &self.tokens {
            b = b.token(*id, bytes);
        }
        specials.extend(self.specials);
        for (id, name) in &specials {
            b = b.special(*id, name);
        }
        let stop = match self.stop {
            Some(stop) => stop,
            None => specials
                .iter()
                .filter(|(_, n)| DEFAULT_STOP_NAMES.contains(&n.as_str()))
                .map(|(id, _)| *id)
                .collect(),
        };
        if let Some(t) = stop.iter().find(|t| t.index() >= size) {
            return Err(vocab_err(format!(
                "stop token {} is not in the vocabulary ({size} ids)",
                t.0
            )));
        }
        // The trie's end-of-sequence tokens are the default stop tokens.
        for &t in &stop {
            b = b.eos(t);
        }
        let trie = Arc::new(b.build().map_err(|e| vocab_err(format!("bad vocabulary: {e}")))?);
        // Now rather than in the first free-text mask (a few ms).
        trie.prepare_split_summaries();
        let coalescer = match (&self.tokenizer, self.forcing) {
            (Some(tok), true) => {
                let c = Coalescer::new(tok.clone()).with_trie(trie.clone());
                c.is_supported().then_some(c)
            }
            _ => None,
        };
        let slicer_config = match self.slicer {
            SlicerChoice::Json if size >= MIN_SLICED_VOCAB => Some(SlicerConfig::json()),
            SlicerChoice::Json | SlicerChoice::Off => None,
            SlicerChoice::Custom(c) => Some(c),
        };
        let slicer = match slicer_config {
            Some(c) => Some(Arc::new(
                Slicer::new(&trie, &c)
                    .map_err(|e| vocab_err(format!("cannot build the slicer: {e}")))?,
            )),
            None => None,
        };
        Ok(Vocabulary {
            inner: Arc::new(Inner {
                trie,
                stop,
                tokenizer: self.tokenizer,
                coalescer,
                slicer,
                splits: Arc::default(),
            }),
        })
    }
}
