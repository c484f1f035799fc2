//! The slicer on real vocabularies and schemas: at every step of valid
//! instances of a bounded subset of MaskBench dev and of Lark grammars from
//! the corpus, on Llama-3, our mask with the default slicer equals our mask
//! without it, and equals llguidance's with its default slicer wherever
//! llguidance's mask without slices equals ours (the grammars agree).

use std::io::BufRead;
use std::sync::Arc;

use serde_json::Value;

use structgen::{Matcher, SlicerStats};
use toktrie::{TokenId, TokenSet};

/// Every `STRIDE`-th schema of the dev split, its first `INSTANCES` valid
/// instances, at most `MAX_STEPS` masks each: a few minutes on two cores.
const STRIDE: usize = 400;
const INSTANCES: usize = 2;
const MAX_STEPS: usize = 120;

struct Setup {
    tokenizer: Arc<bpe::Tokenizer>,
    /// With the JSON slicer.
    vocab: structgen::Vocabulary,
    /// Without a slicer: the plain walk from the first mask on.
    plain_vocab: structgen::Vocabulary,
    plain: llguidance::ParserFactory,
    sliced: llguidance::ParserFactory,
}

fn setup(what: &str) -> Option<Setup> {
    compare::shared::data_dir_or_skip(what)?;
    let json = compare::shared::read("tokenizers/llama3.tokenizer.json.gz").unwrap();
    let tokenizer = Arc::new(bpe::Tokenizer::from_tokenizer_json(&json).unwrap());
    let (vocab, eos) = compare::peer::vocabulary(&tokenizer, true).unwrap();
    let (plain_vocab, _) = compare::peer::vocabulary(&tokenizer, false).unwrap();
    let env = compare::peer::llg_tok_env(&tokenizer, eos);
    let factory = |slices: &[String]| compare::peer::llg_factory(&env, slices).unwrap();
    let plain = factory(&[]);
    let sliced = factory(&llguidance::earley::SlicedBiasComputer::general_slices());
    Some(Setup { tokenizer, vocab, plain_vocab, plain, sliced })
}

fn same(ours: &TokenSet, theirs: &peer_toktrie::SimpleVob, vocab: usize) -> bool {
    (0..vocab as u32).all(|id| {
        ours.contains(TokenId(id)) == ((id as usize) < theirs.len() && theirs.is_allowed(id))
    })
}

/// What one walk found.
#[derive(Default)]
struct Walk {
    steps: usize,
    /// Steps where llguidance (slices off) agreed with us, so its sliced
    /// mask was compared too.
    compared: usize,
    stats: SlicerStats,
}

/// Walks `text`, asserting at every step that the slicer changes nothing.
fn walk(s: &Setup, case: &str, ours: &earley::Grammar, peer: Option<Peer>, text: &str) -> Walk {
    let tokens = s.tokenizer.encode(text);
    let ours = structgen::Grammar::from_earley(ours.clone());
    let mut plain = Matcher::new(&s.plain_vocab, &ours).unwrap();
    let mut sliced = Matcher::new(&s.vocab, &ours).unwrap();
    let mut peer = peer;
    let vocab = s.tokenizer.vocab_size();
    let mut w = Walk::default();
    for step in 0..=tokens.len().min(MAX_STEPS) {
        let (a, b) = match (plain.compute_mask(), sliced.compute_mask()) {
            (Ok(a), Ok(b)) => (a.clone(), b.clone()),
            (a, b) => {
                assert_eq!(a.is_ok(), b.is_ok(), "{case}: step {step}: one side failed");
                break;
            }
        };
        assert!(
            a == b,
            "{case}: step {step}: the slicer changed the mask ({} vs {})",
            a.count(),
            b.count()
        );
        w.steps += 1;
        if let Some(p) = &mut peer {
            match (p.plain.compute_mask_or_eos(), p.sliced.compute_mask_or_eos()) {
                (Ok(their_plain), Ok(their_sliced)) if same(&a, &their_plain, vocab) => {
                    assert!(
                        same(&b, &their_sliced, vocab),
                        "{case}: step {step}: llguidance's sliced mask differs from ours"
                    );
                    w.compared += 1;
                }
                // The grammars disagree here: stop comparing with llguidance.
                _ => peer = None,
            }
        }
        let Some(&t) = tokens.get(step) else { break };
        if !a.contains(TokenId(t)) {
            break;
        }
        plain.consume_token(TokenId(t)).unwrap();
        sliced.consume_token(TokenId(t)).unwrap();
        if let Some(p) = &mut peer
            && (p.plain.consume_token(t).is_err() || p.sliced.consume_token(t).is_err())
        {
            peer = None;
        }
    }
    w.stats = sliced.slicer_stats().unwrap();
    w
}

/// llguidance's matchers without and with its slicer.
struct Peer {
    plain: llguidance::Matcher,
    sliced: llguidance::Matcher,
}

fn peer(s: &Setup, grammar: llguidance::api::TopLevelGrammar) -> Option<Peer> {
    let plain = llguidance::Matcher::new(s.plain.create_parser(grammar.clone()));
    let sliced = llguidance::Matcher::new(s.sliced.create_parser(grammar));
    (plain.get_error().is_none() && sliced.get_error().is_none()).then_some(Peer { plain, sliced })
}

#[test]
fn maskbench_masks_with_and_without_the_slicer() {
    let Some(s) = setup("slicer differential on MaskBench") else { return };
    let lines = compare::shared::read("maskbench/dev.jsonl.gz").unwrap();
    let (mut walks, mut steps, mut compared) = (0, 0, 0);
    let mut stats = SlicerStats::default();
    for line in lines.lines().step_by(STRIDE) {
        let rec: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let name = rec["name"].as_str().unwrap_or("");
        let options = jsonschema::Options::llguidance_compat();
        let Ok(c) = jsonschema::compile(&rec["schema"], &options) else { continue };
        let Ok(ours) = c.grammar.to_earley(earley::Limits::default()) else { continue };
        let valid = rec["tests"].as_array().into_iter().flatten().filter(|t| t["valid"] == true);
        for t in valid.take(INSTANCES) {
            let text = serde_json::to_string(&t["data"]).unwrap();
            let grammar = llguidance::api::TopLevelGrammar::from_json_schema(rec["schema"].clone());
            let w = walk(&s, name, &ours, peer(&s, grammar), &text);
            walks += 1;
            steps += w.steps;
            compared += w.compared;
            stats.masks += w.stats.masks;
            stats.masks_sliced += w.stats.masks_sliced;
        }
    }
    println!(
        "slicer on MaskBench: {walks} instances, {steps} steps equal, {compared} also equal to \
         llguidance's sliced masks; {} of {} masks used a slice",
        stats.masks_sliced, stats.masks
    );
    assert!(walks >= 10 && steps > 200, "too little was checked");
    assert!(compared * 2 > steps, "llguidance agreed on too few steps: {compared} of {steps}");
    assert!(stats.masks_sliced > 0, "no mask used a slice");
}

#[test]
fn lark_masks_with_and_without_the_slicer() {
    let Some(s) = setup("slicer differential on Lark grammars") else { return };
    let read = |p: &str| {
        String::from_utf8(compare::shared::read(&format!("grammars/lark/{p}")).unwrap()).unwrap()
    };
    let json = r#"{"name": "structgen", "tags": ["fast", "exact"], "version": 1.5, "ok": true, "deps": {"derivre": "0.3", "x": null}}"#;
    let cases = [
        ("syncode json", read("syncode/json_grammar.lark"), json.to_string()),
        ("syncode calc", read("syncode/calc_grammar.lark"), "1 + 2 * (3 - 4.5) / 6".to_string()),
        ("llguidance rfc", read("llguidance/rfc.lark"), read("llguidance/rfc.xml")),
    ];
    for (case, lark, input) in cases {
        let ours = grammar::lark::compile(&lark, &grammar::Config::default()).unwrap();
        let grammar = llguidance::api::TopLevelGrammar::from_lark(lark.clone());
        let w = walk(&s, case, &ours, peer(&s, grammar), &input);
        println!("slicer on {case}: {} steps, {} compared with llguidance", w.steps, w.compared);
        assert!(w.steps > 10, "{case}: too few steps");
    }
}

/// The two shapes the slicer proves since issue #7, at the Matcher level:
/// a key other than the many known names (names excluded outside the
/// quotes) and a string with an unanchored pattern (proved by its parts).
/// Masks equal with and without the slicer at every step, and the slices
/// answer the key starts and the pattern string.
#[test]
fn keys_and_unanchored_patterns_use_slices() {
    let Some(s) = setup("slicer on keys and unanchored patterns") else { return };
    let mut properties = serde_json::Map::new();
    for i in 0..40 {
        properties.insert(format!("option_{i}"), serde_json::json!({"type": "integer"}));
    }
    properties.insert(
        "url".into(),
        serde_json::json!({"type": "string", "pattern": "/api/v[0-9]+/items/"}),
    );
    let schema = serde_json::json!({"type": "object", "properties": properties});
    let c = jsonschema::compile(&schema, &jsonschema::Options::llguidance_compat()).unwrap();
    let ours = c.grammar.to_earley(earley::Limits::default()).unwrap();
    let text = r#"{"option_3":1,"url":"https://example.com/api/v2/items/42?x=1","zzz_extra":"a long free text value"}"#;
    let grammar = llguidance::api::TopLevelGrammar::from_json_schema(schema.clone());
    let w = walk(&s, "keys and patterns", &ours, peer(&s, grammar), text);
    assert_eq!(w.steps, s.tokenizer.encode(text).len() + 1, "the instance was not accepted");
    // Key starts (3), the pattern string and the free text value.
    assert!(w.stats.masks_sliced >= 6, "{} masks used a slice", w.stats.masks_sliced);
}
