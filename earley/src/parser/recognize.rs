//! What the parser answers about the lexemes in progress, and the two
//! protocols the trie walk drives it by ([`Recognizer`] byte by byte,
//! [`StateRecognizer`] with the frames kept by the walk).

use lexer::{LexemeId, StateId};
use toktrie::{Recognizer, StateRecognizer, TokenId};

use super::{Frame, Parser};

impl Parser {
    /// The lexemes the lexeme in progress may still turn out to be, in
    /// increasing id order: empty at a lexeme boundary (no byte of the next
    /// lexeme consumed yet). With [`allowed_lexemes`](Parser::allowed_lexemes),
    /// what a message saying "expected …" lists.
    pub fn lexemes_in_progress(&self) -> Vec<LexemeId> {
        match self.frames.last() {
            Some(top) if !top.fresh() && !top.state.is_dead() => {
                self.lexer.live_lexemes(top.state).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The lexemes allowed at the start of the next lexeme, when the
    /// current one ends here (for tests, debugging and messages).
    pub fn allowed_lexemes(&mut self) -> Vec<LexemeId> {
        match self.boundary_row() {
            Some(r) => {
                let s = self.rows[r].lexer_start;
                self.lexer.live_lexemes(s).collect()
            }
            None => Vec::new(),
        }
    }
}

impl Recognizer for Parser {
    fn trie_started(&mut self) {
        self.begin_step();
    }

    #[inline]
    fn try_push_byte(&mut self, byte: u8) -> bool {
        self.push_byte(byte)
    }

    #[inline]
    fn pop_bytes(&mut self, n: usize) {
        Parser::pop_bytes(self, n);
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        self.special_token_allowed(token)
    }
}

/// The mask walk's faster protocol: the walk keeps the frames, one per depth.
impl StateRecognizer for Parser {
    type State = Frame;

    fn start(&mut self) -> Frame {
        self.distinct.by_state = true;
        self.frames.last().copied().unwrap_or(Frame::new(StateId::DEAD, 0, true))
    }

    fn walk_finished(&mut self) {
        self.distinct.by_state = false;
    }

    #[inline(always)]
    fn step(&mut self, state: Frame, byte: u8) -> Option<Frame> {
        Parser::step(self, state, byte)
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        self.special_token_allowed(token)
    }
}
