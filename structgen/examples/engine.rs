//! The engine loop of the README, runnable: a stand-in model (seeded
//! random logits) generates JSON under a schema through the bitmask an
//! engine would apply. `cargo run -p structgen --example engine -- PATH/tokenizer.json`

use std::sync::Arc;
use structgen::{Grammar, Matcher, Vocabulary, bpe::Tokenizer, toktrie::TokenId};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: engine PATH/tokenizer.json")?;
    let tokenizer = Tokenizer::from_tokenizer_json(&std::fs::read(path)?)?;
    let vocab = Vocabulary::from_tokenizer(Arc::new(tokenizer))?; // stop tokens: <|eot_id|>, …
    let schema = serde_json::json!({"type": "object", "required": ["ok"],
        "properties": {"ok": {"type": "boolean"}}, "additionalProperties": false});
    let mut matcher = Matcher::new(&vocab, &Grammar::json_schema(&schema)?)?;
    let mut bitmask = vec![0u32; vocab.bitmask_words()]; // one row of the batch's bitmask
    let mut output = Vec::new();
    while !matcher.is_stopped() {
        matcher.fill_bitmask(&mut bitmask)?;
        let logits = model_forward(&output, vocab.model_vocab_size()); // your model here
        let token = argmax_allowed(&logits, &bitmask);
        matcher.consume_token(token)?; // a stop token ends it where the grammar accepts
        output.push(token);
    }
    output.pop(); // the stop token
    println!("{}", String::from_utf8_lossy(&vocab.trie().decode(&output)));
    Ok(())
}

/// A stand-in for the model: logits from a seeded generator.
fn model_forward(context: &[TokenId], vocab_size: usize) -> Vec<f32> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ context.len() as u64;
    (0..vocab_size)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32
        })
        .collect()
}

/// The allowed token with the highest logit (bit `i % 32` of word `i / 32`).
fn argmax_allowed(logits: &[f32], bitmask: &[u32]) -> TokenId {
    let allowed = |i: &usize| bitmask[i / 32] >> (i % 32) & 1 == 1;
    let best = (0..logits.len()).filter(allowed).max_by(|&a, &b| logits[a].total_cmp(&logits[b]));
    TokenId(best.unwrap_or(0) as u32)
}
