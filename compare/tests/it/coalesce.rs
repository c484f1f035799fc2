//! Forced tokens on a bounded subset of the MaskBench dev split: replaying
//! every valid instance (its canonical tokenization) with the Matcher's
//! forced tokens, at every step the forced tokens are a prefix of the
//! canonical tokenization of the remaining text (zero non-canonical), on
//! Llama-3 and o200k, with compact and flexible whitespace.

use std::io::BufRead;
use std::sync::Arc;

use serde_json::Value;
use structgen::Matcher;
use toktrie::TokenId;

/// Every `STRIDE`-th schema of the dev split.
const STRIDE: usize = 12;

#[test]
fn maskbench_forced_tokens_are_canonical() {
    let Some(_) = compare::shared::data_dir_or_skip("coalesce on MaskBench") else { return };
    let raw = compare::shared::read("maskbench/dev.jsonl.gz").unwrap();
    let records: Vec<Value> = raw
        .lines()
        .enumerate()
        .filter(|(i, _)| i % STRIDE == 0)
        .map(|(_, l)| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let llama = compare::shared::read("tokenizers/llama3.tokenizer.json.gz").unwrap();
    let tokenizers = [
        ("llama3", Arc::new(bpe::Tokenizer::from_tokenizer_json(&llama).unwrap())),
        ("o200k", Arc::new(bpe::Tokenizer::o200k_base())),
    ];
    let compact = jsonschema::Options::compact().with_integer_zero_fraction(false);
    let options = [("compact", compact), ("flexible", jsonschema::Options::llguidance_compat())];
    for (tname, tok) in &tokenizers {
        let vocab =
            structgen::Vocabulary::builder().tokenizer(tok.clone()).slicer(None).build().unwrap();
        for (oname, opts) in &options {
            let (mut docs, mut tokens, mut forced, mut non_canonical) = (0, 0, 0, 0);
            for rec in &records {
                let Ok(c) = jsonschema::compile(&rec["schema"], opts) else { continue };
                let Ok(g) = c.grammar.to_earley(earley::Limits::default()) else { continue };
                let g = structgen::Grammar::from_earley(g);
                for t in rec["tests"].as_array().into_iter().flatten() {
                    if t["valid"] != true {
                        continue;
                    }
                    let text = serde_json::to_string(&t["data"]).unwrap();
                    let ids: Vec<TokenId> = tok.encode(&text).into_iter().map(TokenId).collect();
                    let mut m = Matcher::new(&vocab, &g).unwrap();
                    // a valid instance we reject:
                    let Ok(s) = structgen_cli::replay::replay(&mut m, &ids) else { continue };
                    docs += 1;
                    tokens += s.tokens;
                    forced += s.forced_tokens;
                    non_canonical += s.non_canonical;
                    assert_eq!(s.non_canonical, 0, "{tname} {oname} {}: {text}", rec["name"]);
                }
            }
            println!(
                "coalesce {tname} {oname}: {docs} documents, {tokens} tokens, {forced} forced ({:.1}%), {non_canonical} non-canonical",
                100.0 * forced as f64 / tokens.max(1) as f64
            );
            assert!(docs > 50, "{tname} {oname}: {docs}");
            assert!(forced > tokens / 20, "{tname} {oname}: {forced} of {tokens}");
        }
    }
}
