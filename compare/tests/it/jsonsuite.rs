//! The official JSON-Schema-Test-Suite (draft 2020-12) side by side with
//! llguidance 1.9.1: token by token on o200k, ours must accept no invalid
//! instance and classify at least as many instances correctly as
//! llguidance, and neither engine's counts may drift from the committed
//! figures without this file being updated (so a regression fails).

use compare::jsonsuite::{Engines, Tally, load};

/// (groups compiled, instances correct, valid rejected, invalid accepted)
/// over the whole suite, optional files included: ours, then llguidance.
const OURS: (usize, usize, usize, usize) = (425, 2014, 115, 0);
const LLGUIDANCE: (usize, usize, usize, usize) = (220, 1127, 34, 40);

#[test]
fn jsonsuite_ours_at_least_llguidance() {
    let Some(data) = compare::shared::data_dir_or_skip("jsonsuite side by side") else { return };
    let groups = load(&data.join("json-schema-test-suite/tests/draft2020-12")).unwrap();
    let engines = Engines::new(jsonschema::Options::default()).unwrap();
    let (mut ours, mut theirs) = (Tally::default(), Tally::default());
    let mut accepted_invalid = Vec::new();
    for g in &groups {
        let a = engines.ours(g);
        ours.add(g, &a);
        theirs.add(g, &engines.llguidance(g));
        if let Some(v) = a.verdicts(g.tests.len()) {
            for ((_, valid, d), acc) in g.tests.iter().zip(v) {
                if acc && !valid {
                    accepted_invalid.push(format!("{} {}: {d}", g.key(), g.description));
                }
            }
        }
    }
    println!("jsonsuite: ours {ours:?}\njsonsuite: llguidance {theirs:?}");
    assert!(accepted_invalid.is_empty(), "invalid accepted:\n{}", accepted_invalid.join("\n"));
    assert!(
        ours.correct >= theirs.correct,
        "ours {} < llguidance {}",
        ours.correct,
        theirs.correct
    );
    let figures = |t: &Tally| (t.compiled, t.correct, t.valid_rejected, t.invalid_accepted);
    assert_eq!(figures(&ours), OURS, "ours changed: update OURS (and the README) if it improved");
    assert_eq!(figures(&theirs), LLGUIDANCE, "llguidance's figures changed");
}
