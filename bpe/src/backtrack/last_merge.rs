//! BPE of one token's bytes down to its last merge: how the backtracker
//! learns each token's canonical split when it builds its tables.

use crate::model::{Model, lowest_rule};
use crate::vocab::Tokens;

/// Runs BPE on `bytes` (a token's bytes) and returns the final merge
/// `(left, right, priority)` if the result is a single token.
pub(super) fn last_merge(
    model: &Model,
    tokens: &Tokens,
    byte_ids: &[u32; 256],
    bytes: &[u8],
    parts: &mut Vec<(usize, u32)>,
    rules: &mut Vec<Option<(u32, u32)>>,
) -> Option<(u32, u32, u32)> {
    parts.clear();
    parts.extend(bytes.iter().enumerate().map(|(i, &b)| (i, byte_ids[b as usize])));
    let end = |parts: &[(usize, u32)], i: usize| parts.get(i + 1).map_or(bytes.len(), |p| p.0);
    rules.clear();
    for i in 0..parts.len() - 1 {
        rules.push(model.pair(
            tokens,
            bytes,
            parts[i].0,
            parts[i].1,
            parts[i + 1].1,
            end(parts, i + 1),
        ));
    }
    loop {
        let (i, prio, result) = lowest_rule(rules)?;
        if parts.len() == 2 {
            return Some((parts[0].1, parts[1].1, prio)).filter(|_| tokens.bytes(result) == bytes);
        }
        parts[i].1 = result;
        parts.remove(i + 1);
        rules.remove(i);
        if i < rules.len() {
            rules[i] = model.pair(
                tokens,
                bytes,
                parts[i].0,
                parts[i].1,
                parts[i + 1].1,
                end(parts, i + 1),
            );
        }
        if i > 0 {
            rules[i - 1] = model.pair(
                tokens,
                bytes,
                parts[i - 1].0,
                parts[i - 1].1,
                parts[i].1,
                end(parts, i),
            );
        }
    }
}
