//! The [`Matcher`]'s slicer hook: masks answered slice by slice from a
//! shared [`slicer::Slicer`].
//!
//! For each slice, the lexer state of the lexeme in progress is asked
//! whether it continues with every word of the slice's regex
//! (`lexer::Lexer::state_contains_prefixes`, cached per state and slice in
//! the lexer). Proven: the slice's precomputed mask is OR-ed in. Not proven:
//! the slice's sub-trie is walked with the parser. The leftover sub-trie is
//! always walked. The union equals the plain walk of the whole trie because
//! the walk decides each token on its own bytes, whatever trie holds it,
//! and a proven slice's tokens are all allowed.

use std::sync::Arc;

use lexer::ProbeId;
use slicer::Slicer;

use crate::Matcher;

/// Counters of the slicer's work in one matcher.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlicerStats {
    /// Masks computed through the slicer (cache hits of the matcher's
    /// per-position mask are not counted).
    pub masks: u64,
    /// Masks where at least one slice was answered from its precomputed mask.
    pub masks_sliced: u64,
    /// Masks where some slices but not all were answered from their masks
    /// (the others walked).
    pub masks_partial: u64,
    /// Slices answered from their precomputed masks, over all masks.
    pub slices_proven: u64,
    /// Slices whose sub-trie was walked, over all masks (the leftover
    /// slice not counted).
    pub slices_walked: u64,
}

/// A matcher's handle on a shared slicer: the slicer and the ids of its
/// slices' probes in this matcher's lexer.
#[derive(Clone, Debug)]
pub(crate) struct SlicerHook {
    slicer: Arc<Slicer>,
    /// `probes[i]` is slice `i`'s probe in the parser's lexer.
    probes: Vec<ProbeId>,
    stats: SlicerStats,
}

impl SlicerHook {
    /// The shared slicer.
    pub(crate) fn slicer(&self) -> &Arc<Slicer> {
        &self.slicer
    }
}

impl Matcher {
    /// This matcher with `slicer` answering its masks (`None`: the plain
    /// walk of the whole trie). Masks are the same either way; only the time
    /// to compute them changes.
    ///
    /// A slicer built for another vocabulary (see [`Slicer::fits`]) is
    /// not used.
    pub fn with_slicer(mut self, slicer: Option<Arc<Slicer>>) -> Matcher {
        let slicer = slicer.filter(|s| s.fits(&self.trie));
        let same = match (&self.slicer, &slicer) {
            (Some(h), Some(s)) => Arc::ptr_eq(&h.slicer, s),
            (None, None) => true,
            _ => false,
        };
        if same {
            // Its probes are in the lexer already.
            return self;
        }
        self.slicer = slicer.map(|slicer| {
            let (_, lexer) = self.parser.lexer_state_mut();
            let probes = slicer.slices().iter().map(|s| lexer.add_probe(s.probe())).collect();
            SlicerHook { slicer, probes, stats: SlicerStats::default() }
        });
        // A mask cached before the switch is still right; keep it.
        self
    }

    /// The slicer's counters, when a slicer is on.
    pub fn slicer_stats(&self) -> Option<SlicerStats> {
        self.slicer.as_ref().map(|h| h.stats)
    }

    /// Computes the mask through the slicer into `self.mask` (special tokens
    /// included, EOS left to the caller); `false` when no slicer is on.
    pub(crate) fn sliced_mask(&mut self) -> bool {
        let Some(hook) = self.slicer.as_mut() else { return false };
        let slices = hook.slicer.slices();
        // At most 64 slices are tried; more are walked (a u64 of flags keeps
        // the lexer borrow short and allocation-free).
        let mut proven = 0u64;
        {
            let fuel = hook.slicer.fuel();
            let (state, lexer) = self.parser.lexer_state_mut();
            // The widest slices come last in the usual orders (`{1,10}`,
            // `{1,30}`, `+`): asking from the end lets one proof of `+`
            // settle the slices it covers without asking about them.
            for (i, &probe) in hook.probes.iter().enumerate().take(64).rev() {
                if proven & (1 << i) == 0
                    && lexer.state_contains_prefixes(state, probe, fuel) == Some(true)
                {
                    proven |= (1 << i) | slices[i].covers();
                }
            }
        }
        if proven == 0 {
            // Nothing to skip: one walk of the whole trie visits each shared
            // prefix once, where a walk per slice would visit it per slice
            // (measured: 2x slower on the rfc grammar; DESIGN.md). In free
            // text (a lazy lexeme, never proven) a split answers instead.
            if !self.splits.mask(&self.trie, &mut self.parser, &mut self.mask) {
                self.trie.compute_mask_by_state(&mut self.parser, &mut self.mask);
            }
            hook.stats.masks += 1;
            hook.stats.slices_walked += slices.len() as u64;
            return true;
        }
        self.mask.clear();
        for (i, slice) in slices.iter().enumerate() {
            if i < 64 && proven & (1 << i) != 0 {
                self.mask.union_with(slice.mask());
            } else if !slice.mask().is_empty() {
                slice.trie().add_to_mask_by_state(&mut self.parser, &mut self.mask);
            }
        }
        hook.slicer.leftover().add_to_mask_by_state(&mut self.parser, &mut self.mask);
        let n = proven.count_ones() as u64;
        hook.stats.masks += 1;
        hook.stats.masks_sliced += (n > 0) as u64;
        hook.stats.masks_partial += (n > 0 && n < slices.len() as u64) as u64;
        hook.stats.slices_proven += n;
        hook.stats.slices_walked += slices.len() as u64 - n;
        true
    }
}
