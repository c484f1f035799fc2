//! Completion in large rows: an index of a row's items by the symbol after
//! their dot.
//!
//! Completing `lhs` from row `o` advances the items of `o` that expect
//! `lhs`. A scan of the whole row per completion is the fastest for the
//! rows of ordinary grammars (tens of items), but in a row of `k` items
//! with `k` completions it costs `k²`: a chain of 16,000 rules that also
//! refer to the start symbol made one mask take 10 s. Rows larger than
//! [`INDEX_MIN`] items get an index, built the first time one of their
//! symbols is completed: the (symbol, item) pairs sorted by symbol, and
//! the permutation-phrase items apart (they advance on any wrapper of
//! their phrase). A completion then costs `O(log k)` plus the items it
//! advances. An index is tied to its row by the row's unique id, so a row
//! computed again (after a pop) never reads a stale index.

use super::{Item, Parser, origin_of, pos_of};

/// Rows with more items than this are completed through an index.
pub(super) const INDEX_MIN: u32 = 64;

/// The index of one row (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct RowIndex {
    /// The id of the row it indexes.
    row_id: u64,
    /// (symbol after the dot, item), sorted by symbol.
    by_symbol: Vec<(u32, Item)>,
    /// The row's permutation-phrase items.
    phrases: Vec<Item>,
}

impl Parser {
    /// [`complete_symbol`](Parser::complete_symbol) through the index of
    /// row `origin`, building it if needed.
    pub(super) fn complete_indexed(&mut self, lhs: u32, origin: u32, wrapper: bool) {
        let o = self.rows[origin as usize];
        let at = origin as usize;
        if self.row_index.len() <= at {
            self.row_index.resize_with(at + 1, RowIndex::default);
        }
        if self.row_index[at].row_id != o.id {
            let mut by_symbol = std::mem::take(&mut self.row_index[at].by_symbol);
            let mut phrases = std::mem::take(&mut self.row_index[at].phrases);
            by_symbol.clear();
            phrases.clear();
            for &it in &self.items[o.start as usize..o.end as usize] {
                match self.g.rhs.get(pos_of(it) as usize) {
                    Some(&x) => by_symbol.push((x, it)),
                    None => phrases.push(it),
                }
            }
            by_symbol.sort_unstable_by_key(|&(x, _)| x);
            self.row_index[at] = RowIndex { row_id: o.id, by_symbol, phrases };
        }
        let first = self.row_index[at].by_symbol.partition_point(|&(x, _)| x < lhs);
        let mut k = first;
        while let Some(&(x, jt)) = self.row_index[at].by_symbol.get(k) {
            if x != lhs {
                break;
            }
            self.add(super::item(pos_of(jt) + 1, origin_of(jt)));
            k += 1;
        }
        if wrapper {
            for k in 0..self.row_index[at].phrases.len() {
                let jt = self.row_index[at].phrases[k];
                if let Some(n) = self.advance_phrase(pos_of(jt), lhs, origin) {
                    self.add(super::item(n, origin_of(jt)));
                }
            }
        }
    }
}
