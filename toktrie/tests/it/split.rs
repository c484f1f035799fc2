//! Split masks against the per-token oracle: a recognizer whose state is a
//! context and an inner DFA state; inner steps follow a random subset of
//! the DFA's transitions, every other byte goes through a context-dependent
//! table. A split made at one start is reused at starts with the same inner
//! state and other contexts, as the matcher reuses it at other positions.

use proptest::prelude::*;
use toktrie::{
    Derived, Recognizer, Split, SplitLimits, SplitRecognizer, StateRecognizer, TokTrie, TokenId,
    TokenKind, TokenSet,
};

use crate::props::{ALPHABET, Entry, build, entry};

const STATES: u32 = 4;
const CONTEXTS: u32 = 3;

/// The full state: `(context, inner)`.
type Full = (u32, u32);

#[derive(Clone, Debug)]
struct Machine {
    /// `inner[s][k]`: the inner step from `s` on `ALPHABET[k]`, if any.
    inner: Vec<Option<u32>>,
    /// `outer[c][s][k]`: the full step when there is no inner step.
    outer: Vec<Option<Full>>,
    /// Special tokens allowed in context `c` (bit `c` of the value).
    specials: Vec<u8>,
}

impl Machine {
    fn step(&self, (c, s): Full, b: u8) -> Option<Full> {
        // Bytes outside the alphabet (in no trie) loop on every state, so
        // that a byte group's loops depend on the alphabet's bytes alone.
        let Some(k) = ALPHABET.iter().position(|&a| a == b) else { return Some((c, s)) };
        match self.inner[s as usize * ALPHABET.len() + k] {
            Some(j) => Some((c, j)),
            None => self.outer[((c * STATES + s) as usize) * ALPHABET.len() + k],
        }
    }

    fn oracle(&self, trie: &TokTrie, start: Full, len: usize) -> TokenSet {
        let mut mask = TokenSet::new(len.max(trie.vocab_size()));
        for id in 0..trie.vocab_size() as u32 {
            let id = TokenId(id);
            let allowed = match trie.kind(id) {
                TokenKind::Ordinary => {
                    let bytes = trie.token_bytes(id).unwrap();
                    !bytes.is_empty()
                        && bytes.iter().try_fold(start, |s, &b| self.step(s, b)).is_some()
                }
                TokenKind::Special => self.special(id, start.0),
                _ => false,
            };
            if allowed {
                mask.insert(id);
            }
        }
        mask
    }

    fn special(&self, id: TokenId, context: u32) -> bool {
        self.specials.get(id.index()).is_some_and(|bits| bits & (1 << context) != 0)
    }
}

struct Run<'a> {
    m: &'a Machine,
    start: Full,
    inner_steps: usize,
    /// Whether `inner_loops` answers (else `None`, as by default).
    loops: bool,
}

impl StateRecognizer for Run<'_> {
    type State = Full;

    fn start(&mut self) -> Full {
        self.start
    }

    fn step(&mut self, state: Full, byte: u8) -> Option<Full> {
        self.m.step(state, byte)
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        self.m.special(token, self.start.0)
    }
}

impl SplitRecognizer for Run<'_> {
    type Inner = u32;

    fn inner(&mut self, state: Full) -> u32 {
        state.1
    }

    fn inner_step(&mut self, inner: u32, byte: u8) -> Option<u32> {
        self.inner_steps += 1;
        let Some(k) = ALPHABET.iter().position(|&a| a == byte) else { return Some(inner) };
        self.m.inner[inner as usize * ALPHABET.len() + k]
    }

    fn lift(&mut self, start: Full, inner: u32) -> Full {
        (start.0, inner)
    }

    fn inner_loops(&mut self, inner: u32) -> Option<[u64; 4]> {
        if !self.loops {
            return None;
        }
        // Every byte outside the alphabet loops (see `Machine::step`).
        let mut set = [!0u64; 4];
        for (k, &b) in ALPHABET.iter().enumerate() {
            if self.m.inner[inner as usize * ALPHABET.len() + k] != Some(inner) {
                set[b as usize / 64] &= !(1 << (b % 64));
            }
        }
        Some(set)
    }

    fn inner_rejects(&mut self, inner: u32, byte: u8) -> bool {
        // Rejected in every context: no inner step and no outer one.
        let Some(k) = ALPHABET.iter().position(|&a| a == byte) else { return false };
        let cell = inner as usize * ALPHABET.len() + k;
        self.m.inner[cell].is_none()
            && (0..CONTEXTS).all(|c| {
                self.m.outer[((c * STATES + inner) as usize) * ALPHABET.len() + k].is_none()
            })
    }
}

/// The machine behind the byte-by-byte protocol: a stack of full states.
struct Pushed<'a> {
    m: &'a Machine,
    stack: Vec<Full>,
    /// Refuses every byte past this many pushes (to test giving up).
    max_depth: usize,
}

impl Recognizer for Pushed<'_> {
    fn try_push_byte(&mut self, byte: u8) -> bool {
        if self.stack.len() > self.max_depth {
            return false;
        }
        let top = *self.stack.last().unwrap();
        match self.m.step(top, byte) {
            Some(s) => {
                self.stack.push(s);
                true
            }
            None => false,
        }
    }

    fn pop_bytes(&mut self, n: usize) {
        self.stack.truncate(self.stack.len() - n);
    }

    fn special_allowed(&mut self, token: TokenId) -> bool {
        self.m.special(token, self.stack[0].0)
    }
}

fn machine(vocab: usize) -> impl Strategy<Value = Machine> {
    let cells = STATES as usize * ALPHABET.len();
    (
        prop::collection::vec(prop::option::weighted(0.6, 0..STATES), cells),
        prop::collection::vec(
            prop::option::weighted(0.5, (0..CONTEXTS, 0..STATES)),
            cells * CONTEXTS as usize,
        ),
        prop::collection::vec(any::<u8>(), vocab),
    )
        .prop_map(|(inner, outer, specials)| Machine { inner, outer, specials })
}

fn case() -> impl Strategy<Value = (Vec<Entry>, Machine, u32, usize)> {
    prop::collection::vec(entry(), 0..40).prop_flat_map(|entries| {
        let n = entries.len();
        (Just(entries), machine(n), 0..STATES, 0usize..70)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn split_mask_equals_oracle_at_every_context((entries, m, inner, pad) in case()) {
        let trie = build(&entries);
        let len = trie.vocab_size() + pad;
        let mut r = Run { m: &m, start: (0, inner), inner_steps: 0, loops: false };
        let limits = SplitLimits::for_trie(&trie);
        let split: Split<u32> = trie.split(&mut r, inner, &limits).unwrap();
        // At most one inner step a node.
        prop_assert!(r.inner_steps < trie.num_nodes().max(1));
        // The same split taking looping subtrees whole (below).
        let mut looping = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        prop_assert_eq!(&trie.split(&mut looping, inner, &limits).unwrap(), &split);
        prop_assert!(split.frontier_len() < trie.num_nodes().max(1));
        for c in 0..CONTEXTS {
            let mut r = Run { m: &m, start: (c, inner), inner_steps: 0, loops: true };
            let mut mask = TokenSet::full(len);
            trie.compute_mask_split(&mut r, &split, &mut mask);
            prop_assert_eq!(&mask, &m.oracle(&trie, (c, inner), len), "context {}", c);
        }
    }

    #[test]
    fn split_masks_by_bytes_equal_the_oracle((entries, m, inner, pad) in case()) {
        // The same split, its frontier walked by pushes and pops (as the
        // matcher does among distinct members); a recognizer refusing the
        // paths makes it give up, with every push popped.
        let trie = build(&entries);
        let len = trie.vocab_size() + pad;
        let mut maker = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let split = trie.split(&mut maker, inner, &SplitLimits::for_trie(&trie)).unwrap();
        for c in 0..CONTEXTS {
            let mut r = Pushed { m: &m, stack: vec![(c, inner)], max_depth: usize::MAX };
            let mut mask = TokenSet::full(len);
            prop_assert!(trie.compute_mask_split_by_bytes(&mut r, &split, &mut mask));
            prop_assert_eq!(r.stack.len(), 1);
            prop_assert_eq!(&mask, &m.oracle(&trie, (c, inner), len), "context {}", c);
            let mut shallow = Pushed { m: &m, stack: vec![(c, inner)], max_depth: 0 };
            let mut mask = TokenSet::full(len);
            let done = trie.compute_mask_split_by_bytes(&mut shallow, &split, &mut mask);
            prop_assert_eq!(shallow.stack.len(), 1);
            if done {
                // Only frontier nodes at the root, none below: the mask
                // holds the inside tokens and the accepted root bytes.
                prop_assert!(mask.iter().all(|t| m.oracle(&trie, (c, inner), len).contains(t)));
            }
        }
    }

    #[test]
    fn localized_split_masks_equal_the_oracle((entries, m, inner, pad) in case()) {
        // A split made by one recognizer, rebuilt by another (another
        // context, the same inner steps): as a matcher's split serves the
        // grammar's other matchers.
        let trie = build(&entries);
        let len = trie.vocab_size() + pad;
        let mut maker = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let split = trie.split(&mut maker, inner, &SplitLimits::for_trie(&trie)).unwrap();
        for c in 0..CONTEXTS {
            let mut r = Run { m: &m, start: (c, inner), inner_steps: 0, loops: true };
            let local = split.localize(&mut r, inner).expect("the same inner steps");
            prop_assert_eq!(local.frontier_len(), split.frontier_len());
            let mut mask = TokenSet::full(len);
            trie.compute_mask_split(&mut r, &local, &mut mask);
            prop_assert_eq!(&mask, &m.oracle(&trie, (c, inner), len), "context {}", c);
        }
    }

    #[test]
    fn localize_gives_up_where_the_inner_steps_differ((entries, m, inner, _pad) in case()) {
        // Another machine whose inner steps all give up: every frontier
        // parent below the root is unreachable, so localizing fails
        // exactly when one exists.
        let trie = build(&entries);
        let mut maker = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let split = trie.split(&mut maker, inner, &SplitLimits::for_trie(&trie)).unwrap();
        let mut blocked = m.clone();
        blocked.inner.iter_mut().for_each(|c| *c = None);
        let mut r = Run { m: &blocked, start: (0, inner), inner_steps: 0, loops: true };
        let local = split.localize(&mut r, inner);
        prop_assert_eq!(local.is_none(), r.inner_steps > 0);
    }

    #[test]
    fn split_over_looping_subtrees_equals_the_stepped_one(
        (entries, mut m, inner, _pad) in case(),
        looping in prop::collection::vec(any::<bool>(), ALPHABET.len()),
    ) {
        // The subtrees whose bytes all loop on the start, taken whole, give
        // the split that stepping every node gives, in fewer inner steps.
        // (The start loops on a random half of the alphabet.)
        for (k, _) in looping.iter().enumerate().filter(|(_, l)| **l) {
            m.inner[inner as usize * ALPHABET.len() + k] = Some(inner);
        }
        let trie = build(&entries);
        let limits = SplitLimits::for_trie(&trie);
        let mut stepped = Run { m: &m, start: (0, inner), inner_steps: 0, loops: false };
        let want = trie.split(&mut stepped, inner, &limits).unwrap();
        let mut looping = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let got = trie.split(&mut looping, inner, &limits).unwrap();
        prop_assert_eq!(&got, &want);
        // No more steps than a node each, beyond the start's 256 (how many
        // bytes it takes: whether to take subtrees whole) and 256 for each
        // state whose loops are asked.
        let states = STATES as usize;
        prop_assert!(looping.inner_steps <= stepped.inner_steps + 256 * (1 + states));
    }

    #[test]
    fn derived_split_equals_the_direct_one((entries, m, inner, _pad) in case()) {
        // From a split at every other inner state: the same split as made
        // directly, whichever base it came from; a base localized from
        // another context serves alike.
        let trie = build(&entries);
        let limits = SplitLimits::for_trie(&trie);
        let mut r = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let direct = trie.split(&mut r, inner, &limits).unwrap();
        for base_start in 0..STATES {
            let base = trie.split(&mut r, base_start, &limits).unwrap();
            let mut other = Run { m: &m, start: (1, base_start), inner_steps: 0, loops: true };
            let base = base.localize(&mut other, base_start).unwrap();
            r.inner_steps = 0;
            match trie.split_from(&mut r, &base, base_start, inner, &limits, usize::MAX) {
                Derived::Split(derived) => prop_assert_eq!(&derived, &direct, "base {}", base_start),
                other => prop_assert!(false, "base {}: {:?}", base_start, other),
            }
            // At most two inner steps a node (one per start).
            prop_assert!(r.inner_steps <= 2 * trie.num_nodes());
            if base_start == inner {
                // Every root byte meets at once or leaves from both.
                prop_assert!(r.inner_steps <= 2 * ALPHABET.len());
            }
        }
    }

    #[test]
    fn derived_split_past_its_limits_or_budget((entries, m, inner, base_start) in
        case().prop_flat_map(|c| (Just(c.0), Just(c.1), Just(c.2), 0..STATES))) {
        let trie = build(&entries);
        let mut r = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let limits = SplitLimits::for_trie(&trie);
        let full = trie.split(&mut r, inner, &limits).unwrap();
        let base = trie.split(&mut r, base_start, &limits).unwrap();
        let mut tight = limits;
        tight.max_frontier = full.frontier_len().saturating_sub(1);
        let refused = matches!(trie.split_from(&mut r, &base, base_start, inner, &tight, usize::MAX), Derived::Refused);
        prop_assert_eq!(refused, full.frontier_len() > 0);
        let mut tight = limits;
        tight.max_outside_words = full.outside_words().saturating_sub(1);
        let refused = matches!(trie.split_from(&mut r, &base, base_start, inner, &tight, usize::MAX), Derived::Refused);
        prop_assert_eq!(refused, full.outside_words() > 0);
        // Whatever the budget: the split or giving up, never another split.
        for budget in [0, 1, 3, 10] {
            match trie.split_from(&mut r, &base, base_start, inner, &limits, budget) {
                Derived::Split(s) => prop_assert_eq!(&s, &full),
                Derived::GaveUp => {}
                Derived::Refused => prop_assert!(false, "refused within the limits"),
            }
        }
    }

    #[test]
    fn split_past_its_limits_is_refused((entries, m, inner, _pad) in case()) {
        let trie = build(&entries);
        let mut r = Run { m: &m, start: (0, inner), inner_steps: 0, loops: true };
        let full = trie.split(&mut r, inner, &SplitLimits::for_trie(&trie)).unwrap();
        let mut tight = SplitLimits::for_trie(&trie);
        tight.max_frontier = full.frontier_len().saturating_sub(1);
        let refused = trie.split(&mut r, inner, &tight).is_none();
        prop_assert_eq!(refused, full.frontier_len() > 0);
    }
}
