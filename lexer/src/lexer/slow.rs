//! The lexer's slow path: a transition not yet in the table.
//!
//! A new transition takes the derivative of every live lexeme of the state
//! by the byte, keeps those proven non-empty, and interns the resulting
//! set as a state. A derivative is non-empty by its structure (no
//! intersection or complement in it), by a witness its lexeme learned
//! (`witness.rs`), or by derivre's fuel-bounded search; out of fuel, a
//! new witness is looked for, and failing that the lexeme is dropped from
//! the state (a *fuel refusal*). Every derivre call is charged to the
//! step's fuel. See `DESIGN.md` beside the crate's `Cargo.toml`.

use derivre::ExprRef;

use super::{DISCOVERY_BUDGET, Lexer, StateId, witness};
use crate::error::LexerErrorKind;

impl Lexer {
    #[cold]
    pub(super) fn next_slow(&mut self, state: StateId, byte: u8, idx: usize) -> StateId {
        // After an error (in particular a fault inside derivre, whose
        // expression set may then be inconsistent) no new transition is
        // computed: every uncached step is dead, and the error stays.
        if self.error.is_some() {
            return StateId::DEAD;
        }
        self.num_transitions += 1;
        self.known_transitions += 1;
        let mut pairs = Vec::new();
        let src = self.pairs_of(self.dense(state)).to_vec();
        for p in src.chunks_exact(2) {
            let e = ExprRef::new(p[1]);
            let (exprs, deriv) = (&mut self.exprs, &mut self.deriv);
            let cost = exprs.cost();
            let Ok(d) = derivre_call(|| deriv.derivative(exprs, e, byte)) else {
                return self.engine_fault(p[0]);
            };
            if d == ExprRef::NO_MATCH {
                continue;
            }
            self.charge(cost);
            let lexeme = p[0] as usize;
            let proof = if self.exprs.is_positive(d) {
                Some(witness::Witness::EMPTY)
            } else {
                match self.prove(lexeme, d) {
                    Ok(proof) => proof,
                    Err(()) => return self.engine_fault(p[0]),
                }
            };
            match proof {
                // `d` is not empty by its structure or by a witness `w`; if
                // `e` needed derivre's search, `byte` then `w` is a witness
                // for states like `e` (see `witness`).
                Some(w) => {
                    self.witness_proofs += u64::from(w != witness::Witness::EMPTY);
                    if self.searched.remove(&e.as_u32())
                        && let Some(w) = witness::Witness::new(byte, w.bytes())
                    {
                        self.witnesses[lexeme].learn(w);
                    }
                }
                None => match self.search(lexeme, d) {
                    Ok(Some(true)) => {}
                    Ok(Some(false) | None) => continue,
                    Err(()) => return self.engine_fault(p[0]),
                },
            }
            pairs.push(p[0]);
            pairs.push(d.as_u32());
        }
        if self.exprs.len() - self.base_exprs > self.limits.max_exprs {
            self.set_error(LexerErrorKind::TooManyExprs { limit: self.limits.max_exprs });
            return StateId::DEAD;
        }
        let s = self.intern_or_dead(&pairs);
        if self.error.is_none() {
            self.table[idx] = s.0;
        }
        s
    }

    /// Whether derivative `d` (not positive: it holds an intersection or
    /// a complement) matches some string: derivre's relevance check with
    /// [`LexerLimits::relevance_fuel`], within what is left of the step's
    /// [`LexerLimits::step_fuel`]. `Err` when the fuel ran out first.
    fn non_empty(&mut self, d: ExprRef) -> Result<bool, ()> {
        let fuel = self.limits.relevance_fuel.min(self.step_fuel_left);
        if fuel == 0 {
            return Err(());
        }
        let before = self.exprs.cost();
        let answer = self.relevance.is_non_empty_limited(&mut self.exprs, d, fuel);
        self.charge(before);
        answer.map_err(|_| ())
    }

    /// Whether `d`, which no kept witness proves, is non-empty by derivre's
    /// search, or when that runs out of fuel, by a newly discovered witness:
    /// `None` when neither proves it within the fuel. Then the lexeme is
    /// dropped from the state (the byte is refused for it), so masks stay a
    /// subset of the exact mask and never lead into an empty language; the
    /// parser goes on with the other lexemes. Counted in `fuel_refusals`.
    /// `Err` when derivre panicked.
    fn search(&mut self, lexeme: usize, d: ExprRef) -> Result<Option<bool>, ()> {
        let searching = self.step_fuel_left > 0;
        match self.non_empty(d) {
            Ok(non_empty) => {
                if non_empty {
                    self.searched.insert(d.as_u32());
                }
                return Ok(Some(non_empty));
            }
            // Out of fuel: look for a new witness (bounded; learned, so
            // states like `d` need no search again).
            Err(()) if searching && self.discover(lexeme, d)? => {
                self.witness_proofs += 1;
                return Ok(Some(true));
            }
            Err(()) => {}
        }
        self.fuel_refusals += 1;
        Ok(None)
    }

    /// The witness among `lexeme`'s that proves `d` non-empty, if any (none
    /// once the step's fuel is spent); `Err` when derivre panicked.
    fn prove(&mut self, lexeme: usize, d: ExprRef) -> Result<Option<witness::Witness>, ()> {
        if self.step_fuel_left == 0 {
            return Ok(None);
        }
        let (exprs, deriv, w) = (&mut self.exprs, &mut self.deriv, &mut self.witnesses[lexeme]);
        let cost = exprs.cost();
        let proof = derivre_call(|| w.prove(exprs, deriv, d))?;
        self.charge(cost);
        Ok(proof)
    }

    /// Looks for a new witness of `d` (see `witness::discover`), learned by
    /// `lexeme` when found; `Err` when derivre panicked.
    fn discover(&mut self, lexeme: usize, d: ExprRef) -> Result<bool, ()> {
        let (exprs, deriv, reps) = (&mut self.exprs, &mut self.deriv, &self.class_reps);
        let cost = exprs.cost();
        let found = derivre_call(|| witness::discover(exprs, deriv, reps, d, DISCOVERY_BUDGET))?;
        self.charge(cost);
        if let Some(w) = found {
            self.witnesses[lexeme].learn(w);
        }
        Ok(found.is_some())
    }

    /// Charges the derivre work done since the cost was `before` to the
    /// step's fuel.
    fn charge(&mut self, before: u64) {
        let spent = self.exprs.cost().saturating_sub(before);
        self.step_fuel_left = self.step_fuel_left.saturating_sub(spent);
    }
}

/// Runs `f`, a call into derivre, catching a panic: derivre can panic on
/// some regexes (a simplifier assertion), and bad input must be an error,
/// never a panic of ours (`Err` then). One panic is known and retried:
/// derivre 0.3.13 rewrites an alternation whose branches share prefixes
/// into a trie (`or_optimized`) and unwraps a `None` (`simplify.rs`,
/// `trie_rec`) when two different branches flatten to the same bytes. The
/// panic leaves that rewrite off for the expression set (its flag is
/// restored only on return), so a second call computes the same result
/// without it, as derivre's own `Regex` always runs after construction.
/// Whatever derivre returns is exact; a second panic is an `Err`.
fn derivre_call<T>(mut f: impl FnMut() -> T) -> Result<T, ()> {
    let mut call = || std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut f));
    call().or_else(|_| call()).map_err(|_| ())
}
