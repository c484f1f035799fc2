//! Building the peers' views of one of our tokenizers, so that both sides of
//! a comparison see exactly the same vocabulary.

use std::sync::Arc;

/// llguidance's token environment over the same token bytes as `tokenizer`.
///
/// Special tokens are spelled as llguidance expects them: the marker byte
/// 0xFF followed by the token's name, so ordinary text never reaches them.
pub fn llg_tok_env(tokenizer: &bpe::Tokenizer, eos: u32) -> peer_toktrie::TokEnv {
    let mut words = Vec::with_capacity(tokenizer.vocab_size());
    for id in 0..tokenizer.vocab_size() as u32 {
        if tokenizer.is_special(id) {
            let name = tokenizer.special_tokens().find(|&(i, _)| i == id).map(|x| x.1);
            let mut w = vec![0xFF];
            w.extend_from_slice(name.unwrap_or("").as_bytes());
            words.push(w);
        } else {
            words.push(tokenizer.token_bytes(id).map(<[u8]>::to_vec).unwrap_or_default());
        }
    }
    let info = peer_toktrie::TokRxInfo::new(words.len() as u32, eos);
    let trie = peer_toktrie::TokTrie::from(&info, &words);
    Arc::new(peer_toktrie::ApproximateTokEnv::new(trie))
}

/// A quiet llguidance parser factory over `env`, with `slices` (empty: its
/// slicer off; `llguidance::earley::SlicedBiasComputer::general_slices()`:
/// its default).
///
/// # Errors
/// llguidance refuses the slices.
pub fn llg_factory(
    env: &peer_toktrie::TokEnv,
    slices: &[String],
) -> anyhow::Result<llguidance::ParserFactory> {
    let caps = peer_toktrie::InferenceCapabilities::default();
    let mut factory = llguidance::ParserFactory::new(env, caps, slices)?;
    factory.quiet();
    Ok(factory)
}

/// Our vocabulary of `tokenizer` as llguidance sees it: one end-of-sequence
/// token (the first of our default stop tokens, as llguidance's token
/// environment holds one), the JSON slicer when `slicer`; and that token.
///
/// # Errors
/// The vocabulary cannot be built.
pub fn vocabulary(
    tokenizer: &Arc<bpe::Tokenizer>,
    slicer: bool,
) -> anyhow::Result<(structgen::Vocabulary, u32)> {
    let eos = tokenizer
        .special_tokens()
        .find(|(_, name)| structgen::DEFAULT_STOP_NAMES.contains(name))
        .map(|(id, _)| toktrie::TokenId(id));
    let b = structgen::Vocabulary::builder().tokenizer(tokenizer.clone()).stop_tokens(eos);
    let b = b.slicer(slicer.then(slicer::SlicerConfig::json));
    Ok((b.build()?, eos.map_or(0, |t| t.0)))
}
