//! The vocabulary trie of a loaded tokenizer: every tokenizer `bpe` loads
//! (tiktoken files, byte-level and SentencePiece `tokenizer.json`) becomes a
//! [`TokTrie`] for mask computation.
//!
//! `bpe` already decodes each token to the bytes it stands for (byte-level
//! characters through the GPT-2 table, `▁` to a space, `<0xNN>` byte-fallback
//! tokens to their byte); this module hands those bytes to `toktrie`, and
//! each special (added) token by its name, marking the end-of-sequence ones.

use toktrie::{BuildError, TokTrie, TokTrieBuilder, TokenId};

/// Special-token names that end a sequence in common vocabularies: tiktoken,
/// GPT-2 and Qwen `<|endoftext|>`, Llama-3 `<|end_of_text|>`, `<|eot_id|>`
/// and `<|eom_id|>`, SentencePiece `</s>`, ChatML `<|im_end|>`, Gemma
/// `<eos>` and `<end_of_turn>`, Phi-3 `<|end|>`.
pub const EOS_NAMES: &[&str] = &[
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

/// The trie of `tokenizer`'s vocabulary, with the specials named in
/// [`EOS_NAMES`] that it has as end-of-sequence tokens.
pub fn toktrie_from_tokenizer(tokenizer: &bpe::Tokenizer) -> Result<TokTrie, BuildError> {
    toktrie_with_eos(tokenizer, EOS_NAMES)
}

/// The trie of `tokenizer`'s vocabulary; the specials it has among
/// `eos_names` are its end-of-sequence tokens (names it lacks are ignored).
///
/// O(B log V) for `B` token bytes and `V` ids (see `toktrie`'s builder).
pub fn toktrie_with_eos(
    tokenizer: &bpe::Tokenizer,
    eos_names: &[&str],
) -> Result<TokTrie, BuildError> {
    let mut builder = TokTrieBuilder::new().vocab_size(tokenizer.vocab_size());
    let ordinary = (0..tokenizer.vocab_size() as u32)
        .filter(|&id| !tokenizer.is_special(id))
        .filter_map(|id| Some((id, tokenizer.token_bytes(id)?)));
    builder = builder.tokens(ordinary);
    for (id, name) in tokenizer.special_tokens() {
        builder = builder.special(TokenId(id), name);
        if eos_names.contains(&name) {
            builder = builder.eos(TokenId(id));
        }
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o200k_and_cl100k_tries_hold_every_token() {
        for tokenizer in [bpe::Tokenizer::o200k_base(), bpe::Tokenizer::cl100k_base()] {
            let trie = toktrie_from_tokenizer(&tokenizer).unwrap();
            assert_eq!(trie.vocab_size(), tokenizer.vocab_size());
            let eos = trie.special_by_name("<|endoftext|>").unwrap();
            assert_eq!(trie.eos_tokens(), &[eos]);
            for id in 0..tokenizer.vocab_size() as u32 {
                if tokenizer.is_special(id) {
                    let name = trie.special_name(TokenId(id)).unwrap();
                    assert_eq!(Some(name.as_bytes()), tokenizer.token_bytes(id));
                } else {
                    assert_eq!(trie.token_bytes(TokenId(id)), tokenizer.token_bytes(id), "id {id}");
                }
            }
        }
    }
}
