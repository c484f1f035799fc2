//! Sampling a token from (masked) logits: greedy at temperature 0, else
//! softmax at a temperature with nucleus (top-p) truncation, from a seeded
//! generator so a run repeats exactly.

use rand::Rng;
use rand::rngs::SmallRng;

/// What [`sample`] picked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    /// The token.
    pub token: u32,
    /// The gap between the best and the second-best logit (infinite when
    /// only one token is allowed): how near a tie the greedy choice was.
    pub gap: f32,
}

/// Applies the repetition penalty to `logits`: each token of `recent`
/// (repeats counted once) has its logit divided by `penalty` when positive,
/// multiplied when negative, so `penalty > 1` makes it less likely either
/// way. Masked logits stay negative infinity; ids past the logits are
/// ignored.
pub fn penalize(logits: &mut [f32], recent: impl Iterator<Item = u32>, penalty: f32) {
    let mut seen: Vec<u32> = recent.collect();
    seen.sort_unstable();
    seen.dedup();
    for t in seen {
        if let Some(l) = logits.get_mut(t as usize) {
            *l = if *l > 0.0 { *l / penalty } else { *l * penalty };
        }
    }
}

/// Picks a token from `logits` (masked tokens are negative infinity);
/// `None` when every logit is masked.
///
/// Greedy (`temperature <= 0`) takes the highest logit, the lowest id
/// among equals. Otherwise the logits are divided by the temperature,
/// the smallest set of the most likely tokens whose probability reaches
/// `top_p` is kept, and one is drawn in proportion to its probability.
///
/// O(V) greedy; O(V + k log k) sampling for the `k` finite logits.
pub fn sample(logits: &[f32], temperature: f32, top_p: f32, rng: &mut SmallRng) -> Option<Pick> {
    let (mut best, mut second) = (None::<(u32, f32)>, f32::NEG_INFINITY);
    for (i, &l) in logits.iter().enumerate() {
        if l == f32::NEG_INFINITY || l.is_nan() {
            continue;
        }
        match best {
            Some((_, b)) if l <= b => second = second.max(l),
            _ => {
                if let Some((_, b)) = best {
                    second = second.max(b);
                }
                best = Some((i as u32, l));
            }
        }
    }
    let (top, top_logit) = best?;
    let gap = top_logit - second;
    if temperature <= 0.0 {
        return Some(Pick { token: top, gap });
    }
    let mut cands: Vec<(u32, f32)> = logits
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_finite())
        .map(|(i, &l)| (i as u32, (l - top_logit) / temperature))
        .collect();
    cands.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut probs: Vec<f64> = cands.iter().map(|c| f64::from(c.1).exp()).collect();
    let total: f64 = probs.iter().sum();
    let mut kept = 0;
    let mut mass = 0.0;
    for p in &probs {
        kept += 1;
        mass += p / total;
        if mass >= f64::from(top_p.clamp(0.0, 1.0)) {
            break;
        }
    }
    probs.truncate(kept);
    let kept_total: f64 = probs.iter().sum();
    let mut x = rng.random::<f64>() * kept_total;
    for (c, p) in cands.iter().zip(&probs) {
        if x < *p {
            return Some(Pick { token: c.0, gap });
        }
        x -= p;
    }
    Some(Pick { token: cands[kept - 1].0, gap })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn greedy_takes_the_best_allowed_token_and_reports_the_gap() {
        let mut rng = SmallRng::seed_from_u64(0);
        let logits = [1.0, f32::NEG_INFINITY, 3.0, 2.5, 3.0];
        let p = sample(&logits, 0.0, 1.0, &mut rng).unwrap();
        assert_eq!((p.token, p.gap), (2, 0.0));
        let p = sample(&[f32::NEG_INFINITY, 4.0], 0.0, 1.0, &mut rng).unwrap();
        assert_eq!((p.token, p.gap), (1, f32::INFINITY));
        assert_eq!(sample(&[f32::NEG_INFINITY; 3], 0.7, 0.9, &mut rng), None);
    }

    #[test]
    fn the_repetition_penalty_lowers_recent_tokens_once_each() {
        let mut logits = [2.0, -2.0, 3.0, f32::NEG_INFINITY, 1.0];
        penalize(&mut logits, [0, 1, 0, 3, 99].into_iter(), 2.0);
        assert_eq!(logits, [1.0, -4.0, 3.0, f32::NEG_INFINITY, 1.0]);
        let mut rng = SmallRng::seed_from_u64(0);
        let mut logits = [3.0, 2.0];
        penalize(&mut logits, [0].into_iter(), 1.6);
        assert_eq!(sample(&logits, 0.0, 1.0, &mut rng).unwrap().token, 1);
    }

    #[test]
    fn sampling_follows_the_probabilities_and_top_p() {
        let mut rng = SmallRng::seed_from_u64(7);
        let logits = [0.0, 2f32.ln(), f32::NEG_INFINITY, 1f32.ln() - 20.0];
        let mut counts = [0usize; 4];
        for _ in 0..30_000 {
            counts[sample(&logits, 1.0, 1.0, &mut rng).unwrap().token as usize] += 1;
        }
        // Probabilities 1/3, 2/3, 0, ~0.
        assert!((9_000..11_000).contains(&counts[0]), "{counts:?}");
        assert_eq!(counts[2], 0);
        // With top-p 0.5 only the most likely token stays.
        for _ in 0..100 {
            assert_eq!(sample(&logits, 1.0, 0.5, &mut rng).unwrap().token, 1);
        }
    }
}
