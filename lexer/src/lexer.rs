//! The lexer: states are sets of live (lexeme, derivative) pairs, cached in a
//! flat (state × byte class) transition table.

use derivre::raw::{DerivCache, ExprSet, NextByteCache, RelevanceCache};
use derivre::{ExprRef, NextByte, RegexAst};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::byteclass::ByteClasses;
use crate::error::{LexerError, LexerErrorKind};
use crate::spec::{LexemeId, LexemeSet, LexerLimits, LexerSpec};

pub(crate) mod probe;
mod slow;
mod states;
mod witness;

/// A lexer state: the set of lexemes still alive after the bytes seen since
/// the last lexeme boundary, each with its derivative. Meaningful only for
/// the [`Lexer`] that made it.
///
/// Bit layout (so that a transition is one add and one load, and the common
/// answer "live, no lazy lexeme ends" is one bit test):
/// `(row << 1) | stop`, where `row = dense index × row width` is the offset
/// of the state's row in the transition table and `stop` says that the
/// state is dead or that a lazy lexeme matches in it.
/// [`StateId::DEAD`] (no live lexeme) is 1: row 0 with `stop` set.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct StateId(u32);

impl StateId {
    /// The state with no live lexeme: every byte is rejected.
    pub const DEAD: StateId = StateId(1);

    /// Whether this is [`StateId::DEAD`].
    #[inline]
    pub fn is_dead(self) -> bool {
        self == StateId::DEAD
    }

    /// Whether a lazy lexeme matches in this state: the lexeme ends here,
    /// with the byte that led to this state.
    #[inline]
    pub fn is_lazy_end(self) -> bool {
        self.0 & 1 != 0 && !self.is_dead()
    }

    /// Whether this state is live and no lazy lexeme ends in it: the common
    /// case of a byte inside a lexeme, one bit test.
    #[inline(always)]
    pub fn is_plain(self) -> bool {
        self.0 & 1 == 0
    }

    /// The offset of the state's row in the transition table.
    #[inline]
    fn row(self) -> usize {
        (self.0 >> 1) as usize
    }
}

/// The id of an interned set of lexemes that accept at once (see
/// [`Lexer::accepting`]); equal sets have equal ids within one lexer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct AcceptSetId(u32);

impl AcceptSetId {
    /// The id as an index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Marks a transition that has not been computed yet.
const MISSING: u32 = u32::MAX;

/// Per-lexeme compiled data.
#[derive(Clone, Debug)]
struct LexemeInfo {
    name: String,
    /// The non-empty part of the lexeme's language (`L \ {ε}`), or
    /// `ExprRef::NO_MATCH` when that part is empty.
    expr: ExprRef,
    /// Whether the lexeme's language contains the empty string.
    nullable: bool,
    lazy: bool,
    /// The lexeme's whole regex (for [`Lexer::forces_bytes`]).
    root: ExprRef,
    /// The text of a hidden stop (`stop=`) whose language is one string.
    stop_bytes: Option<Box<[u8]>>,
    ends_at_eos: bool,
    max_tokens: Option<u32>,
}

/// The table's entry after a state's byte-class columns when no lexeme
/// matches in the state.
const NO_ACCEPT: u32 = u32::MAX;

/// Derivatives one witness discovery may take (after derivre's search
/// ran out of fuel).
const DISCOVERY_BUDGET: usize = 128;

/// A lexer over the lexemes of one [`LexerSpec`].
///
/// Cloning is cheap enough to give each parser its own copy with warm caches.
#[derive(Clone)]
pub struct Lexer {
    exprs: ExprSet,
    deriv: DerivCache,
    relevance: RelevanceCache,
    lexemes: Vec<LexemeInfo>,
    classes: ByteClasses,
    /// Flattened (lexeme id, expr id) pairs of every state, sorted by
    /// lexeme, back to back. Invariant: the content of the state of dense
    /// index `i` is `state_data[state_starts[i]..state_starts[i + 1]]`
    /// ([`Lexer::pairs_of`]); state 0 is empty (the dead state). One
    /// buffer, not a box per state: a new matcher copies its grammar's
    /// lexer, and a copy of hundreds of boxes cost more than the rest.
    state_data: Vec<u32>,
    /// `state_starts.len()` is the number of states plus one.
    state_starts: Vec<u32>,
    /// Per dense state, its id.
    state_of: Vec<StateId>,
    /// Per hash of a state's content, the dense index of the last state
    /// interned with that hash; `same_hash` chains to the earlier ones
    /// (`u32::MAX` ends a chain). Plain integers, so a copy is a copy of
    /// memory.
    state_by_hash: FxHashMap<u64, u32>,
    same_hash: Vec<u32>,
    /// A row per state, `classes.len() + 1` wide. Invariant:
    /// `table[s.row() + c]` is the successor of state `s` on byte class `c`,
    /// or `MISSING` when not computed yet; `table[s.row() + classes.len()]`
    /// is the id of the set of lexemes matching in `s` (those whose
    /// derivative is nullable), or `NO_ACCEPT` (so that a lexeme end needs
    /// no division to find the state's data).
    table: Vec<u32>,
    accept_sets: Vec<Box<[LexemeId]>>,
    accept_ids: FxHashMap<Box<[LexemeId]>, AcceptSetId>,
    start_cache: FxHashMap<Vec<u64>, StateId>,
    limits: LexerLimits,
    /// The first resource error met on the hot path (sticky).
    error: Option<LexerError>,
    num_transitions: usize,
    /// Derivatives dropped because their emptiness check ran out of fuel.
    fuel_refusals: u64,
    /// What is left of [`LexerLimits::step_fuel`] in this step (reset by
    /// [`Lexer::begin_step`]; unlimited before the first step).
    step_fuel_left: u64,
    /// Probe expressions and cached containment answers (see `probe`).
    probes: probe::Probes,
    /// Per lexeme: short byte strings that proved its derivatives
    /// non-empty (see `witness`).
    witnesses: Vec<witness::Witnesses>,
    /// Derivatives found non-empty by derivre's search (no witness
    /// applied): the first transition out of one that is proven cheaply
    /// teaches its lexeme a witness.
    searched: FxHashSet<u32>,
    /// One byte per byte class, the smallest, in class order (the witness
    /// discovery's alphabet, and the forced-bytes search's).
    class_reps: Box<[u8]>,
    /// The bytes of each class as a 256-bit set, in class order.
    class_members: Box<[[u64; 4]]>,
    /// Derivatives proven non-empty by a witness (no search).
    witness_proofs: u64,
    /// Per dense state: how many of the last bytes are hidden stop text
    /// when a lazy lexeme with `stop=` ends in it (0 otherwise).
    hidden: Vec<u32>,
    /// The states and expressions this lexer started with when it was
    /// adopted as a start (see [`Lexer::adopt_as_start`]): the limits
    /// count only what was learned past them.
    base_states: usize,
    base_exprs: usize,
    /// Transitions computed by this lexer and the lexers it was copied
    /// from (not reset by [`Lexer::adopt_as_start`]).
    known_transitions: usize,
}

impl std::fmt::Debug for Lexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lexer")
            .field("lexemes", &self.lexemes.len())
            .field("byte_classes", &self.classes.len())
            .field("states", &self.num_states())
            .field("transitions", &self.num_transitions)
            .field("fuel_refusals", &self.fuel_refusals)
            .field("exprs", &self.exprs.len())
            .finish()
    }
}

impl Lexer {
    /// Compiles the lexemes of `spec`.
    ///
    /// # Errors
    /// A lexeme whose regex does not parse or is invalid ([`LexerErrorKind::Regex`]),
    /// or a limit exceeded while checking which lexemes are empty.
    pub fn new(spec: &LexerSpec, limits: LexerLimits) -> Result<Lexer, LexerError> {
        // Before any derivre work: a lexeme whose derivatives would grow
        // too wide is refused here, with its name.
        crate::width::check(spec, &limits)?;
        let (mut builder, mut parsed) = spec
            .preparsed()
            .for_asts(spec.lexemes().iter().flat_map(|l| [&l.regex].into_iter().chain(&l.stop)))
            .start();
        let mut roots = Vec::with_capacity(spec.len());
        for (i, lexeme) in spec.lexemes().iter().enumerate() {
            // A hidden stop is a look-ahead: derivre tracks how many of the
            // matched bytes it covers (`Lexer::hidden_len`).
            let with_stop;
            let regex = match &lexeme.stop {
                Some(stop) => {
                    with_stop = RegexAst::Concat(vec![
                        lexeme.regex.clone(),
                        RegexAst::LookAhead(Box::new(stop.clone())),
                    ]);
                    &with_stop
                }
                None => &lexeme.regex,
            };
            let e = crate::leaves::mk(&mut builder, &mut parsed, regex).map_err(|message| {
                LexerError::new(LexerErrorKind::Regex {
                    lexeme: LexemeId(i as u32),
                    name: lexeme.name.clone(),
                    message,
                })
            })?;
            roots.push(e);
        }
        let mut exprs = builder.into_exprset();
        let mut relevance = RelevanceCache::new();
        let mut pool = limits.build_fuel;
        let mut lexemes = Vec::with_capacity(spec.len());
        for (i, (lexeme, &e)) in spec.lexemes().iter().zip(&roots).enumerate() {
            let nullable = exprs.is_nullable(e);
            let non_empty = if nullable {
                exprs.mk_and(&mut vec![e, ExprRef::NON_EMPTY_BYTE_STRING])
            } else {
                e
            };
            let live = if non_empty == ExprRef::NO_MATCH {
                false
            } else {
                let before = exprs.cost();
                let fuel = limits.relevance_fuel.max(pool);
                let r = relevance.is_non_empty_limited(&mut exprs, non_empty, fuel);
                pool = pool.saturating_sub(exprs.cost().saturating_sub(before));
                r.map_err(|_| {
                    LexerError::new(LexerErrorKind::RelevanceFuel {
                        lexeme: Some(LexemeId(i as u32)),
                        name: lexeme.name.clone(),
                    })
                })?
            };
            lexemes.push(LexemeInfo {
                name: lexeme.name.clone(),
                expr: if live { non_empty } else { ExprRef::NO_MATCH },
                nullable,
                lazy: lexeme.lazy || lexeme.stop.is_some(),
                root: e,
                stop_bytes: match &lexeme.stop {
                    Some(RegexAst::Literal(t)) => Some(t.as_bytes().into()),
                    Some(RegexAst::Byte(b)) => Some(Box::new([*b])),
                    _ => None,
                },
                ends_at_eos: lexeme.ends_at_eos,
                max_tokens: lexeme.max_tokens,
            });
        }
        let mut deriv = DerivCache::new();
        let live: Vec<ExprRef> = lexemes.iter().flat_map(|l| [l.root, l.expr]).collect();
        let classes = ByteClasses::of_exprset(&mut exprs, &mut deriv, &live);
        let class_reps = classes.representatives().into_boxed_slice();
        let class_members = classes.members().into_boxed_slice();
        let mut lexer = Lexer {
            exprs,
            deriv,
            relevance,
            lexemes,
            classes,
            state_data: Vec::new(),
            state_starts: vec![0],
            state_of: Vec::new(),
            state_by_hash: FxHashMap::default(),
            same_hash: Vec::new(),
            table: Vec::new(),
            accept_sets: Vec::new(),
            accept_ids: FxHashMap::default(),
            start_cache: FxHashMap::default(),
            limits,
            error: None,
            num_transitions: 0,
            fuel_refusals: 0,
            step_fuel_left: u64::MAX,
            probes: probe::Probes::default(),
            witnesses: vec![witness::Witnesses::default(); spec.len()],
            searched: FxHashSet::default(),
            class_reps,
            class_members,
            witness_proofs: 0,
            hidden: Vec::new(),
            base_states: 0,
            base_exprs: 0,
            known_transitions: 0,
        };
        let dead = lexer.intern_state(&[])?;
        debug_assert_eq!(dead, StateId::DEAD);
        Ok(lexer)
    }

    /// The number of lexemes.
    pub fn num_lexemes(&self) -> usize {
        self.lexemes.len()
    }

    /// The name of lexeme `id` (as given in its [`LexemeSpec`](crate::LexemeSpec)).
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn lexeme_name(&self, id: LexemeId) -> &str {
        &self.lexemes[id.index()].name
    }

    /// Whether the language of lexeme `id` contains the empty string.
    ///
    /// The lexer itself only matches the non-empty part; the parser makes a
    /// nullable lexeme's symbol optional.
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn is_nullable(&self, id: LexemeId) -> bool {
        self.lexemes[id.index()].nullable
    }

    /// Whether lexeme `id` matches no non-empty string.
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn matches_nothing(&self, id: LexemeId) -> bool {
        self.lexemes[id.index()].expr == ExprRef::NO_MATCH
    }

    /// Whether lexeme `id` is lazy.
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn is_lazy(&self, id: LexemeId) -> bool {
        self.lexemes[id.index()].lazy
    }

    /// The text of lexeme `id`'s hidden stop when its language is one
    /// string (a literal `stop="..."`), else `None`.
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn stop_bytes(&self, id: LexemeId) -> Option<&[u8]> {
        self.lexemes[id.index()].stop_bytes.as_deref()
    }

    /// Whether an end-of-sequence token may end lexeme `id` (`stop=""`).
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn ends_at_eos(&self, id: LexemeId) -> bool {
        self.lexemes[id.index()].ends_at_eos
    }

    /// The most tokens lexeme `id` may span (`max_tokens=N`), if limited.
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn max_tokens(&self, id: LexemeId) -> Option<u32> {
        self.lexemes[id.index()].max_tokens
    }

    /// Whether some lexeme is limited in tokens (`max_tokens=N`).
    pub fn has_max_tokens(&self) -> bool {
        self.lexemes.iter().any(|l| l.max_tokens.is_some())
    }

    /// How many of the bytes that led to `state` are hidden stop text: the
    /// look-ahead length of a lazy lexeme with `stop=` ending in `state`
    /// (the longest, when several end), else 0.
    #[inline]
    pub fn hidden_len(&self, state: StateId) -> usize {
        self.hidden.get(self.dense(state)).map_or(0, |&h| h as usize)
    }

    /// Whether lexeme `id`'s regex starts with the literal `bytes` in its
    /// structure (derivre's `has_simply_forced_bytes`: a syntactic check,
    /// so `false` is possible for a regex that forces them semantically).
    ///
    /// # Panics
    /// When `id` is not a lexeme of this lexer.
    pub fn forces_bytes(&self, id: LexemeId, bytes: &[u8]) -> bool {
        self.exprs.has_simply_forced_bytes(self.lexemes[id.index()].root, bytes)
    }

    /// `state` restricted to the lexemes in `keep` (the others dropped);
    /// [`StateId::DEAD`] when none is left or a limit is exceeded.
    pub fn limit_state(&mut self, state: StateId, keep: &LexemeSet) -> StateId {
        let pairs: Vec<u32> = self
            .pairs_of(self.dense(state))
            .chunks_exact(2)
            .filter(|p| keep.contains(LexemeId(p[0])))
            .flatten()
            .copied()
            .collect();
        self.intern_or_dead(&pairs)
    }

    /// The number of byte classes (bytes no lexeme distinguishes share one).
    pub fn num_byte_classes(&self) -> usize {
        self.classes.len()
    }

    /// The class of `byte`, below [`num_byte_classes`](Lexer::num_byte_classes):
    /// bytes of one class lead every state to the same successor.
    #[inline]
    pub fn byte_class(&self, byte: u8) -> usize {
        self.classes.class(byte)
    }

    /// The smallest byte of each byte class, in class order (one byte
    /// answers for its whole class).
    pub fn class_representatives(&self) -> &[u8] {
        &self.class_reps
    }

    /// The bytes of byte class `class` (below
    /// [`num_byte_classes`](Lexer::num_byte_classes)) as a 256-bit set: bit
    /// `b % 64` of word `b / 64` is byte `b`; empty for a class out of range.
    pub fn class_members(&self, class: usize) -> [u64; 4] {
        self.class_members.get(class).copied().unwrap_or([0; 4])
    }

    /// The number of states created so far (the dead state included).
    pub fn num_states(&self) -> usize {
        self.state_starts.len() - 1
    }

    /// An estimate of the heap memory the lexer holds, in bytes: the
    /// expression set and the state table (the derivative and relevance
    /// caches are counted at a fixed cost per expression). For cache
    /// accounting, not an exact figure.
    pub fn heap_size(&self) -> usize {
        let states = 4 * self.state_data.len() + 28 * self.num_states();
        self.exprs.num_bytes()
            + 16 * self.exprs.len()
            + 4 * self.table.len()
            + states
            + self.accept_sets.iter().map(|s| 2 * 4 * s.len() + 48).sum::<usize>()
    }

    /// The number of transitions computed by the derivative engine so far
    /// (each table miss counts once).
    pub fn num_transitions(&self) -> usize {
        self.num_transitions
    }

    /// The number of transitions this lexer holds that the derivative
    /// engine computed, by it or by the lexers it was copied from (unlike
    /// [`num_transitions`](Lexer::num_transitions), not reset by
    /// [`adopt_as_start`](Lexer::adopt_as_start)).
    pub fn num_known_transitions(&self) -> usize {
        self.known_transitions
    }

    /// Whether every answer this lexer holds is exact: no derivative was
    /// refused for want of fuel and no resource error was met. Only such a
    /// lexer may be [adopted as a start](Lexer::adopt_as_start) for others.
    pub fn is_exact(&self) -> bool {
        self.fuel_refusals == 0 && self.error.is_none()
    }

    /// Makes this lexer (a copy of another's, with what that one learned) a
    /// start for new parsers: its counters (transitions, refusals, witness
    /// proofs) go back to zero, and the limits on states and expressions
    /// count from its present size, so that a parser starting from it may
    /// learn as much as one starting from the grammar's own lexer. What it
    /// learned stays: transitions, accepting sets, derivatives, witnesses,
    /// probe answers. Each is exact when [`is_exact`](Lexer::is_exact)
    /// holds (a transition is a function of the state's derivatives and
    /// the byte; a witness proves, it never decides), which is the
    /// caller's precondition: adopting a lexer that refused would pass its
    /// refusals on to parsers that never met them.
    pub fn adopt_as_start(&mut self) {
        debug_assert!(self.is_exact());
        self.num_transitions = 0;
        self.fuel_refusals = 0;
        self.witness_proofs = 0;
        self.step_fuel_left = u64::MAX;
        self.base_states = self.num_states();
        self.base_exprs = self.exprs.len();
    }

    /// Starts a step (one mask or one token): the emptiness checks until
    /// the next call share [`LexerLimits::step_fuel`]. Before the first
    /// call only [`LexerLimits::relevance_fuel`] bounds each check.
    pub fn begin_step(&mut self) {
        self.step_fuel_left = self.limits.step_fuel;
    }

    /// How many derivatives were dropped from a state because their
    /// emptiness check ran out of [`LexerLimits::relevance_fuel`] or of the
    /// step's [`LexerLimits::step_fuel`]: each is
    /// a byte refused for one lexeme where it might have continued it (the
    /// mask is then a subset of the exact one). Zero on most grammars.
    pub fn fuel_refusals(&self) -> u64 {
        self.fuel_refusals
    }

    /// How many derivatives were proven non-empty by a learned witness
    /// instead of derivre's search (see the crate manual).
    pub fn witness_proofs(&self) -> u64 {
        self.witness_proofs
    }

    /// The first resource error met by [`next`](Lexer::next) or
    /// [`start_state`](Lexer::start_state), if any. Once set, the lexer keeps
    /// answering, but the answers after the error may be too strict.
    pub fn error(&self) -> Option<&LexerError> {
        self.error.as_ref()
    }

    /// The state at a lexeme boundary when exactly the lexemes in `allowed`
    /// may come next (empty-language lexemes are dropped).
    ///
    /// Returns [`StateId::DEAD`] when nothing is allowed or when a limit is
    /// exceeded (then [`error`](Lexer::error) is set).
    pub fn start_state(&mut self, allowed: &LexemeSet) -> StateId {
        if let Some(&s) = self.start_cache.get(allowed.key()) {
            return s;
        }
        let mut pairs = Vec::new();
        for id in allowed.iter() {
            let Some(info) = self.lexemes.get(id.index()) else { continue };
            if info.expr != ExprRef::NO_MATCH {
                pairs.push(id.0);
                pairs.push(info.expr.as_u32());
            }
        }
        let s = self.intern_or_dead(&pairs);
        if self.error.is_none() {
            self.start_cache.insert(allowed.key().to_vec(), s);
        }
        s
    }

    /// The state after `byte`, or [`StateId::DEAD`] when no live lexeme
    /// continues with it. A table look-up, except on the first visit of the
    /// (state, byte class) pair.
    #[inline]
    pub fn next(&mut self, state: StateId, byte: u8) -> StateId {
        let idx = state.row() + self.classes.class(byte);
        let t = self.table[idx];
        if t != MISSING {
            return StateId(t);
        }
        self.next_slow(state, byte, idx)
    }

    /// The state after `byte` when that transition is cached and its state
    /// is plain ([`StateId::is_plain`]: live, no lazy lexeme ends), else
    /// `None` (then [`next`](Lexer::next) answers). One look-up and one bit
    /// test (a missing transition is odd, like the dead state): the fast
    /// path of the trie walk.
    #[inline(always)]
    pub fn next_plain(&self, state: StateId, byte: u8) -> Option<StateId> {
        let t = self.table[state.row() + self.classes.class(byte)];
        (t & 1 == 0).then_some(StateId(t))
    }

    /// Whether every byte leads from `state` to the dead state.
    pub fn next_is_dead_for_all(&mut self, state: StateId) -> bool {
        state.is_dead() || (0..=255u8).all(|b| self.next(state, b).is_dead())
    }

    /// The state after every byte of `bytes` (dead as soon as one is rejected).
    pub fn next_bytes(&mut self, mut state: StateId, bytes: &[u8]) -> StateId {
        for &b in bytes {
            if state.is_dead() {
                break;
            }
            state = self.next(state, b);
        }
        state
    }

    /// The lexemes that match the bytes seen since the boundary, if any
    /// (where a lazy lexeme ends, only the lazy ones).
    #[inline]
    pub fn accepting(&self, state: StateId) -> Option<AcceptSetId> {
        let a = self.table[state.row() + self.classes.len()];
        (a != NO_ACCEPT).then_some(AcceptSetId(a))
    }

    /// Whether a lazy lexeme matches in `state` (see [`StateId::is_lazy_end`]).
    #[inline]
    pub fn is_lazy_end(&self, state: StateId) -> bool {
        state.is_lazy_end()
    }

    /// The dense index of a state (0 for the dead state), below
    /// [`num_states`](Lexer::num_states).
    #[inline]
    pub fn state_index(&self, state: StateId) -> usize {
        state.row() / (self.classes.len() + 1)
    }

    #[inline]
    fn dense(&self, state: StateId) -> usize {
        self.state_index(state)
    }

    /// The lexemes of an accepting set, in increasing id order.
    ///
    /// # Panics
    /// When `id` does not come from this lexer.
    #[inline]
    pub fn accept_set(&self, id: AcceptSetId) -> &[LexemeId] {
        &self.accept_sets[id.index()]
    }

    /// Whether every live lexeme of `state` is at its end: each derivative
    /// is the empty string, so the lexeme matches here and no byte can
    /// continue it (a literal just completed). Where a greedy lexeme is
    /// final, the next byte must start the next lexeme, so a parser may end
    /// it now. `false` for the dead state.
    pub fn is_final(&self, state: StateId) -> bool {
        let pairs = self.pairs_of(self.dense(state));
        !pairs.is_empty()
            && pairs.chunks_exact(2).all(|p| ExprRef::new(p[1]) == ExprRef::EMPTY_STRING)
    }

    /// A name for the content of `state` that means the same in every
    /// lexer, whatever its other lexemes and whatever states it learned:
    /// for each live lexeme, whether it is lazy and its derivative as
    /// derivre prints it, one line each, sorted. How a state steps on a
    /// byte depends on nothing else (each derivative steps on its own; a
    /// step is plain unless a lazy lexeme matches), so two states with one
    /// key step alike on every byte, and work computed from one (a split
    /// mask) serves the other: in another clone of this lexer, or in the
    /// lexer of another grammar with the same free text. Lexeme ids are
    /// left out, being numbered per grammar.
    ///
    /// `None` for the dead state, for derivatives of more than `max_nodes`
    /// expression nodes (counted as a tree: what printing costs), and for
    /// derivatives holding a `multipleOf` remainder (whose printed form
    /// leaves out its scale, so two different ones could print alike).
    /// Equal expressions may still print differently (derivre orders the
    /// operands of `|` and `&` by expression id): that only loses sharing.
    pub fn state_key(&self, state: StateId, max_nodes: usize) -> Option<String> {
        if state.is_dead() {
            return None;
        }
        let pairs = self.pairs_of(self.dense(state));
        let mut nodes = 0usize;
        let mut todo: Vec<ExprRef> = pairs.chunks_exact(2).map(|p| ExprRef::new(p[1])).collect();
        while let Some(e) = todo.pop() {
            nodes += 1;
            if nodes > max_nodes || format!("{:?}", self.exprs.get_tag(e)) == "RemainderIs" {
                return None;
            }
            todo.extend_from_slice(self.exprs.get_args(e));
        }
        let mut lines: Vec<String> = pairs
            .chunks_exact(2)
            .map(|p| {
                let lazy = if self.lexemes[p[0] as usize].lazy { 'L' } else { 'G' };
                let d = self.exprs.expr_to_string_max_len(ExprRef::new(p[1]), usize::MAX);
                format!("{lazy}:{d}\n")
            })
            .collect();
        lines.sort_unstable();
        Some(lines.concat())
    }

    /// The lexemes still alive in `state`, in increasing id order.
    pub fn live_lexemes(&self, state: StateId) -> impl Iterator<Item = LexemeId> + '_ {
        self.pairs_of(self.dense(state)).chunks_exact(2).map(|p| LexemeId(p[0]))
    }

    /// The one byte every live lexeme of `state` must continue with, when
    /// no lexeme matches here (the lexeme cannot end) and each live
    /// derivative forces that same byte (derivre's structural `NextByte`
    /// analysis: no transition is computed). `None` when unsure; callers
    /// then try the byte classes.
    pub fn forced_byte(&self, state: StateId) -> Option<u8> {
        if state.is_dead() || self.accepting(state).is_some() {
            return None;
        }
        let mut cache = NextByteCache::new();
        let mut forced = None;
        for pair in self.pairs_of(self.dense(state)).chunks_exact(2) {
            match cache.next_byte(&self.exprs, ExprRef::new(pair[1])) {
                NextByte::ForcedByte(b) if forced.is_none_or(|f| f == b) => forced = Some(b),
                _ => return None,
            }
        }
        forced
    }

    /// Whether lexeme `id` matches `bytes` exactly (a test helper; it builds
    /// states like any other call).
    pub fn lexeme_matches(&mut self, id: LexemeId, bytes: &[u8]) -> bool {
        let mut set = LexemeSet::with_capacity(self.lexemes.len());
        set.insert(id);
        let s = self.start_state(&set);
        let s = self.next_bytes(s, bytes);
        !s.is_dead() && self.accepting(s).is_some_and(|a| self.accept_set(a).contains(&id))
    }

    /// Records that derivre panicked on `lexeme`'s expression (sticky: its
    /// expression set may be inconsistent) and returns the dead state.
    fn engine_fault(&mut self, lexeme: u32) -> StateId {
        let lexeme = LexemeId(lexeme);
        let name = self.lexemes[lexeme.index()].name.clone();
        self.set_error(LexerErrorKind::EngineFault { lexeme, name });
        StateId::DEAD
    }

    fn set_error(&mut self, kind: LexerErrorKind) {
        if self.error.is_none() {
            self.error = Some(LexerError::new(kind));
        }
    }
}
