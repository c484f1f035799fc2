//! Special tokens (`<|eom_id|>`, `<tool_call>` as one token): consuming
//! one, and whether one may come next.

use toktrie::TokenId;

use super::{Frame, Parser, RowKey};
use crate::error::ParseError;
use crate::grammar::{END, SymbolKind};

impl Parser {
    /// Consumes a special token. Returns `Ok(false)` (changing nothing) when
    /// the grammar does not allow it here.
    ///
    /// # Errors
    /// A limit exceeded.
    pub fn try_consume_special(&mut self, token: TokenId) -> Result<bool, ParseError> {
        self.check()?;
        let Some(row) = self.boundary_row() else { return Ok(false) };
        let Some(special) = self.special_index_allowed(row, token) else { return Ok(false) };
        self.boundary = self.text.len() as u32;
        let Some(r) = self.push_row(row, RowKey::Special(special)) else {
            self.check()?;
            return Ok(false);
        };
        let state = self.rows[r].lexer_start;
        self.frames.push(Frame::new(state, r as u32, true));
        self.sync_text();
        self.check()?;
        Ok(true)
    }

    /// Whether special token `token` may come next.
    pub fn special_token_allowed(&mut self, token: TokenId) -> bool {
        // A grammar without special tokens (most): the mask walk asks for
        // each of the vocabulary's (256 for Llama-3), and each question
        // would scan the row.
        if self.specials.is_empty() {
            return false;
        }
        match self.boundary_row() {
            Some(row) => self.special_index_allowed(row, token).is_some(),
            None => false,
        }
    }

    /// Whether any special token of the grammar may come next (cheap check
    /// before asking about every special token).
    pub fn any_special_allowed(&mut self) -> bool {
        let Some(row) = self.boundary_row() else { return false };
        let r = self.rows[row];
        (r.start..r.end).any(|i| {
            let sym = self.next_symbol(self.items[i as usize]);
            sym & END == 0 && matches!(self.g.kinds[sym as usize], SymbolKind::Special(_))
        })
    }

    /// The index of the grammar's special token that `token` is, when row
    /// `row` expects it.
    fn special_index_allowed(&self, row: usize, token: TokenId) -> Option<u32> {
        let r = self.rows[row];
        for i in r.start..r.end {
            let sym = self.next_symbol(self.items[i as usize]);
            if sym & END != 0 {
                continue;
            }
            if let SymbolKind::Special(s) = self.g.kinds[sym as usize]
                && self.specials[s as usize].iter().any(|&(a, b)| a <= token.0 && token.0 <= b)
            {
                return Some(s);
            }
        }
        None
    }
}
