//! Cache-aware scheduling: in which order to run a waiting queue.
//!
//! [`schedule`] orders the waiting requests by a [`SchedulePolicy`] and,
//! optionally, defers requests that share a long prefix with an earlier
//! waiting one ([`InBatchSharing`]), so that they run after it and hit the
//! cache. [`admit`] then takes requests in that order while their KV cache
//! fits, locking their prefixes: the continuous-batching loop of the
//! RadixAttention paper (appendix), with the `current_size += req.size()`
//! that its pseudo-code leaves out.
//!
//! No policy is switched off above some queue length. Longest-prefix-match
//! costs one read-only match per waiting request per call; a caller that
//! cannot afford it may set [`SchedulerConfig::lpm_fcfs_above`], and the
//! fallback is then reported in [`Schedule::fell_back_to_fcfs`].

use crate::{Error, LockId, Namespace, RadixCache};

/// A waiting request as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting<'a> {
    /// The namespace its prefix lives in.
    pub namespace: Namespace,
    /// Its prompt's token ids.
    pub tokens: &'a [u32],
    /// Extra KV tokens to reserve when admitting it (its output budget).
    pub reserve: usize,
}

/// The order policy of [`schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum SchedulePolicy {
    /// First come, first served: the queue's order.
    Fcfs,
    /// Longest cached prefix first (ties: queue order). For an offline batch
    /// this is a depth-first order of the batch's radix tree.
    #[default]
    LongestPrefixMatch,
    /// Depth-first order of the waiting requests' own radix tree: subtrees
    /// with a longer cached prefix first, then heavier ones (more requests);
    /// a request that is a prefix of others runs before them.
    DfsWeight,
}

/// Defer a request whose cached prefix is short but which shares a long
/// prefix with a request scheduled before it (SGLang's in-batch prefix
/// caching): it then runs after that request and hits the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InBatchSharing {
    /// Only requests with fewer cached tokens than this are checked.
    pub check_below: usize,
    /// A checked request sharing at least this many tokens with an earlier
    /// waiting request is deferred to the end of the order.
    pub defer_at_least: usize,
}

impl Default for InBatchSharing {
    fn default() -> InBatchSharing {
        InBatchSharing { check_below: 32, defer_at_least: 32 }
    }
}

impl InBatchSharing {
    /// Sets [`check_below`](Self::check_below).
    pub fn with_check_below(mut self, tokens: usize) -> InBatchSharing {
        self.check_below = tokens;
        self
    }

    /// Sets [`defer_at_least`](Self::defer_at_least).
    pub fn with_defer_at_least(mut self, tokens: usize) -> InBatchSharing {
        self.defer_at_least = tokens;
        self
    }
}

/// The configuration of [`schedule`]: `SchedulerConfig::default()`
/// (longest-prefix-match, no in-batch sharing, no fallback), then the
/// `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SchedulerConfig {
    /// The order policy.
    pub policy: SchedulePolicy,
    /// `Some` to defer requests that can share a prefix within the queue.
    pub in_batch_sharing: Option<InBatchSharing>,
    /// Use FCFS instead of longest-prefix-match when more requests than this
    /// are waiting; `None` (the default) never falls back.
    pub lpm_fcfs_above: Option<usize>,
}

impl SchedulerConfig {
    /// Sets [`policy`](Self::policy).
    pub fn with_policy(mut self, policy: SchedulePolicy) -> SchedulerConfig {
        self.policy = policy;
        self
    }

    /// Sets [`in_batch_sharing`](Self::in_batch_sharing).
    pub fn with_in_batch_sharing(mut self, sharing: Option<InBatchSharing>) -> SchedulerConfig {
        self.in_batch_sharing = sharing;
        self
    }

    /// Sets [`lpm_fcfs_above`](Self::lpm_fcfs_above).
    pub fn with_lpm_fcfs_above(mut self, above: Option<usize>) -> SchedulerConfig {
        self.lpm_fcfs_above = above;
        self
    }
}

/// The result of [`schedule`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Schedule {
    /// Indices into the waiting slice, in the order to run them.
    pub order: Vec<usize>,
    /// Cached-prefix length per waiting request, when the policy computed it.
    pub cached: Option<Vec<usize>>,
    /// How many requests in-batch sharing moved to the end of `order`.
    pub deferred: usize,
    /// Whether longest-prefix-match fell back to FCFS (see
    /// [`SchedulerConfig::lpm_fcfs_above`]).
    pub fell_back_to_fcfs: bool,
}

/// Orders `waiting` for running. Read-only on the cache.
///
/// Cost, with N = waiting requests and T = their tokens: FCFS O(N);
/// longest-prefix-match O(T + N log N) (one match each, then a sort);
/// DFS-weight O(T log N) (a sort of the token sequences); in-batch sharing
/// adds O(T) (a scratch radix tree of the queue).
pub fn schedule<V: Clone>(
    cache: &RadixCache<V>,
    waiting: &[Waiting<'_>],
    config: &SchedulerConfig,
) -> Schedule {
    let n = waiting.len();
    let mut out = Schedule::default();
    let mut policy = config.policy;
    if policy == SchedulePolicy::LongestPrefixMatch && config.lpm_fcfs_above.is_some_and(|m| n > m)
    {
        policy = SchedulePolicy::Fcfs;
        out.fell_back_to_fcfs = true;
    }
    let needs_cached = policy != SchedulePolicy::Fcfs
        || (config.in_batch_sharing.is_some() && !out.fell_back_to_fcfs);
    if needs_cached {
        out.cached =
            Some(waiting.iter().map(|w| cache.prefix_len_in(w.namespace, w.tokens)).collect());
    }
    out.order = match policy {
        SchedulePolicy::Fcfs => (0..n).collect(),
        SchedulePolicy::LongestPrefixMatch => {
            let cached = out.cached.as_deref().unwrap_or(&[]);
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(cached.get(i).copied().unwrap_or(0)));
            order
        }
        SchedulePolicy::DfsWeight => dfs_weight_order(waiting, out.cached.as_deref()),
    };
    if let (Some(sharing), Some(cached)) = (config.in_batch_sharing, out.cached.as_deref()) {
        let mut scratch: RadixCache<()> = RadixCache::new();
        let mut kept = Vec::with_capacity(n);
        let mut deferred = Vec::new();
        for &i in &out.order {
            let w = &waiting[i];
            if cached[i] < sharing.check_below {
                let shared = scratch.prefix_len_in(w.namespace, w.tokens);
                if shared >= sharing.defer_at_least {
                    deferred.push(i);
                    continue;
                }
                // `()` values: the vector allocates nothing. The insert cannot
                // fail: the lengths agree and the queue's sequences are short
                // enough to be waiting at all.
                let _ = scratch.insert_with(w.namespace, w.tokens, &vec![(); w.tokens.len()], 0);
            }
            kept.push(i);
        }
        out.deferred = deferred.len();
        kept.extend(deferred);
        out.order = kept;
    }
    out
}

/// A node of the waiting requests' radix tree, built from their sorted order.
#[derive(Debug, Default)]
struct QNode {
    depth: usize,
    children: Vec<usize>,
    requests: Vec<usize>,
    /// Requests in the subtree.
    weight: usize,
    /// The longest cached prefix of a request in the subtree.
    cached: usize,
}

/// The depth-first order of the waiting requests' radix tree. Children are
/// visited by their longest cached prefix first (so that the order stays on
/// the path the cache holds when it is recomputed after each step), then by
/// weight (more requests first), then in token order.
fn dfs_weight_order(waiting: &[Waiting<'_>], cached: Option<&[usize]>) -> Vec<usize> {
    let mut sorted: Vec<usize> = (0..waiting.len()).collect();
    sorted.sort_by(|&a, &b| {
        let (x, y) = (&waiting[a], &waiting[b]);
        (x.namespace, x.tokens).cmp(&(y.namespace, y.tokens))
    });
    // Build the tree from the sorted sequences and their common prefixes:
    // the stack holds the path to the previous sequence.
    let mut nodes = vec![QNode::default()];
    let mut stack = vec![0usize];
    for (k, &r) in sorted.iter().enumerate() {
        let w = &waiting[r];
        let d = match k.checked_sub(1).map(|j| &waiting[sorted[j]]) {
            Some(prev) if prev.namespace == w.namespace => {
                crate::node::common_prefix(prev.tokens, w.tokens)
            }
            _ => 0,
        };
        let mut popped = None;
        while let Some(&top) = stack.last() {
            if nodes[top].depth <= d {
                break;
            }
            popped = stack.pop();
        }
        let top = *stack.last().unwrap_or(&0);
        if nodes[top].depth < d {
            // `popped` is `top`'s last child: put a node at depth d between.
            let mid = nodes.len();
            nodes.push(QNode { depth: d, ..QNode::default() });
            if let Some(p) = popped {
                nodes[top].children.pop();
                nodes[mid].children.push(p);
            }
            nodes[top].children.push(mid);
            stack.push(mid);
        }
        let top = *stack.last().unwrap_or(&0);
        if w.tokens.len() == d {
            nodes[top].requests.push(r);
        } else {
            let leaf = nodes.len();
            nodes.push(QNode { depth: w.tokens.len(), requests: vec![r], ..QNode::default() });
            nodes[top].children.push(leaf);
            stack.push(leaf);
        }
    }
    // Weights, children before parents (iterative post-order).
    let mut post = Vec::with_capacity(nodes.len());
    let mut todo = vec![0usize];
    while let Some(v) = todo.pop() {
        post.push(v);
        todo.extend(nodes[v].children.iter().copied());
    }
    let cached_of = |r: usize| cached.and_then(|c| c.get(r)).copied().unwrap_or(0);
    for &v in post.iter().rev() {
        let node = &nodes[v];
        let w = node.requests.len() + node.children.iter().map(|&c| nodes[c].weight).sum::<usize>();
        let best = node
            .requests
            .iter()
            .map(|&r| cached_of(r))
            .chain(node.children.iter().map(|&c| nodes[c].cached))
            .max()
            .unwrap_or(0);
        nodes[v].weight = w;
        nodes[v].cached = best;
    }
    let mut order = Vec::with_capacity(waiting.len());
    let mut todo = vec![0usize];
    while let Some(v) = todo.pop() {
        order.extend(nodes[v].requests.iter().copied());
        let mut kids = std::mem::take(&mut nodes[v].children);
        // Stable: among equal weights the lexicographic order stays; pushed
        // in reverse so the heaviest is popped first.
        kids.sort_by_key(|&c| std::cmp::Reverse((nodes[c].cached, nodes[c].weight)));
        todo.extend(kids.into_iter().rev());
    }
    order
}

/// A request [`admit`] took: its cached prefix, locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted<V> {
    /// Its index in the waiting slice.
    pub index: usize,
    /// Its cached prefix length.
    pub prefix_len: usize,
    /// The values of the cached prefix.
    pub values: Vec<V>,
    /// The lock on the prefix; unlock it when the request finishes.
    pub lock: LockId,
    /// The KV tokens it needs beyond the prefix (prompt rest + reserve).
    pub size: usize,
}

/// Takes requests in `order` while their KV cache fits, and locks their
/// prefixes: `available` starts as the evictable tokens plus `free_tokens`
/// (the pool's free slots) and shrinks as locking makes cached tokens
/// unevictable; `current` grows by each admitted request's size (the line
/// missing from the paper's pseudo-code). A request that does not fit is
/// skipped and later smaller ones may still be taken.
pub fn admit<V: Clone>(
    cache: &mut RadixCache<V>,
    waiting: &[Waiting<'_>],
    order: &[usize],
    free_tokens: usize,
) -> Result<Vec<Admitted<V>>, Error> {
    let mut available = cache.evictable_tokens() + free_tokens;
    let mut current = 0usize;
    let mut out = Vec::new();
    for &index in order {
        let Some(w) = waiting.get(index) else { continue };
        let m = cache.match_prefix_in(w.namespace, w.tokens);
        let size = w.tokens.len() - m.len + w.reserve;
        if current + size > available {
            continue;
        }
        let before = cache.evictable_tokens();
        let lock = cache.lock(&m.handle)?;
        available -= before - cache.evictable_tokens();
        current += size;
        out.push(Admitted { index, prefix_len: m.len, values: m.values, lock, size });
    }
    Ok(out)
}
