//! Generated workloads: shared prefix, multi-turn chat, few-shot, tree of
//! thought. Token ids are drawn from a seeded generator, so a workload is a
//! pure function of its parameters.
//!
//! Every generator first computes, with checked arithmetic, how many
//! requests and tokens its parameters ask for, and refuses them
//! ([`WorkloadError`]) past the [`WorkloadLimits`] before allocating
//! anything: `--groups 1e9` or `--system-len 1e12` is an error naming the
//! limit, not an abort on memory.

use std::fmt;

use radix_cache::Namespace;

/// Limits on what a generator may materialize: `WorkloadLimits::default()`,
/// then the `with_*` setters. The defaults are those of
/// [`TraceLimits`](super::trace::TraceLimits): 2^22 requests, 2^28 tokens
/// (prompts and outputs, about 1 GiB of token ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkloadLimits {
    /// The most requests (default 2^22).
    pub max_requests: u64,
    /// The most tokens over all prompts and outputs (default 2^28).
    pub max_total_tokens: u64,
}

impl Default for WorkloadLimits {
    fn default() -> WorkloadLimits {
        WorkloadLimits { max_requests: 1 << 22, max_total_tokens: 1 << 28 }
    }
}

impl WorkloadLimits {
    /// Sets [`max_requests`](Self::max_requests).
    pub fn with_max_requests(mut self, requests: u64) -> WorkloadLimits {
        self.max_requests = requests;
        self
    }

    /// Sets [`max_total_tokens`](Self::max_total_tokens).
    pub fn with_max_total_tokens(mut self, tokens: u64) -> WorkloadLimits {
        self.max_total_tokens = tokens;
        self
    }
}

/// Generator parameters that cannot be honoured.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WorkloadError {
    /// The workload would exceed a limit (`None` needed: more than `u64`
    /// holds).
    Limit {
        /// The workload's name (`shared-prefix`, `chat`, ...).
        workload: &'static str,
        /// The limit's name (`max_requests`, `max_total_tokens`).
        limit: &'static str,
        /// The limit's value.
        value: u64,
        /// What the parameters ask for, when it fits in a `u64`.
        needed: Option<u64>,
    },
    /// The Zipf exponent of the group sizes is not a finite number `>= 0`.
    Zipf(f64),
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Limit { workload, limit, value, needed } => {
                let what = if *limit == "max_requests" { "requests" } else { "tokens" };
                match needed {
                    Some(n) => write!(f, "the {workload} workload needs {n} {what}")?,
                    None => write!(f, "the {workload} workload needs more than 2^64 {what}")?,
                }
                write!(f, ", over the limit {limit} = {value}")
            }
            WorkloadError::Zipf(s) => {
                write!(f, "the Zipf exponent must be a finite number >= 0, got {s}")
            }
        }
    }
}

impl std::error::Error for WorkloadError {}

/// Checks `requests` and `tokens` (`None`: overflowed) against `limits`.
fn check(
    workload: &'static str,
    requests: Option<u64>,
    tokens: Option<u64>,
    limits: &WorkloadLimits,
) -> Result<(), WorkloadError> {
    for (limit, value, needed) in [
        ("max_requests", limits.max_requests, requests),
        ("max_total_tokens", limits.max_total_tokens, tokens),
    ] {
        if needed.is_none_or(|n| n > value) {
            return Err(WorkloadError::Limit { workload, limit, value, needed });
        }
    }
    Ok(())
}

/// `a * b`, `None` on overflow (or when either is `None`).
fn mul(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a?.checked_mul(b?)
}

/// `a + b`, `None` on overflow (or when either is `None`).
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a?.checked_add(b?)
}

/// A parameter as a `u64` (`usize` is at most 64 bits on every target).
fn n(x: usize) -> Option<u64> {
    Some(x as u64)
}

/// A prompt: explicit tokens, or Mooncake-style block ids expanded on demand
/// (block id `h` stands for the tokens `h * block + j`, `j < block`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// The token ids.
    Tokens(Vec<u32>),
    /// Block ids and the prompt length (the last block may be partial).
    Blocks {
        /// One id per block of `block` tokens.
        ids: Vec<u32>,
        /// Tokens per block.
        block: u32,
        /// The prompt length in tokens.
        len: usize,
    },
}

impl Prompt {
    /// The prompt length in tokens.
    pub fn len(&self) -> usize {
        match self {
            Prompt::Tokens(t) => t.len(),
            Prompt::Blocks { len, .. } => *len,
        }
    }

    /// Whether the prompt is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the prompt's token ids to `out`.
    pub fn expand_into(&self, out: &mut Vec<u32>) {
        match self {
            Prompt::Tokens(t) => out.extend_from_slice(t),
            Prompt::Blocks { ids, block, len } => {
                let start = out.len();
                for &id in ids {
                    out.extend((0..*block).map(|j| id.wrapping_mul(*block).wrapping_add(j)));
                }
                out.truncate(start + len);
            }
        }
    }
}

/// One request of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimRequest {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its prompt.
    pub prompt: Prompt,
    /// The tokens it generates (cached after it finishes when the simulation
    /// caches outputs).
    pub output: Vec<u32>,
    /// A request that must finish before this one arrives (the previous
    /// turn of a conversation, the parent thought).
    pub after: Option<usize>,
    /// Its priority (for [`EvictionPolicy::Priority`](radix_cache::EvictionPolicy)).
    pub priority: i32,
}

/// Requests in arrival order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workload {
    /// A short description.
    pub name: String,
    /// The requests, in arrival order; `after` points backwards.
    pub requests: Vec<SimRequest>,
}

/// How group sizes are drawn in [`shared_prefix`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupSizes {
    /// Every group has `prompts_per_group` prompts.
    Uniform,
    /// The `groups * prompts_per_group` prompts are spread over the groups
    /// with weights `1 / (g + 1)^s` (largest remainder, at least one each).
    Zipf(f64),
}

/// The generated-shared-prefix workload (SGLang's `bench_serving`
/// `generated-shared-prefix`): groups of prompts sharing a system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedPrefix {
    /// Number of groups (distinct system prompts).
    pub groups: usize,
    /// Prompts per group (on average, with Zipf sizes).
    pub prompts_per_group: usize,
    /// System-prompt tokens.
    pub system_len: usize,
    /// Question tokens.
    pub question_len: usize,
    /// Output tokens.
    pub output_len: usize,
    /// Group sizes.
    pub sizes: GroupSizes,
    /// The seed of the token ids and the arrival order.
    pub seed: u64,
}

impl Default for SharedPrefix {
    fn default() -> SharedPrefix {
        SharedPrefix {
            groups: 64,
            prompts_per_group: 16,
            system_len: 2048,
            question_len: 128,
            output_len: 256,
            sizes: GroupSizes::Uniform,
            seed: 1,
        }
    }
}

/// SplitMix64: a tiny seeded generator, enough for synthetic token ids.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix(u64);

impl SplitMix {
    pub(crate) fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// `n` token ids from a 128k vocabulary.
    pub(crate) fn tokens(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.below(128_000) as u32).collect()
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// Group sizes summing to `total`, each at least one (when `total >=
/// groups`).
fn sizes(groups: usize, per_group: usize, sizes: GroupSizes) -> Vec<usize> {
    let total = groups * per_group;
    match sizes {
        GroupSizes::Uniform => vec![per_group; groups],
        GroupSizes::Zipf(s) => {
            let w: Vec<f64> = (0..groups).map(|g| 1.0 / ((g + 1) as f64).powf(s)).collect();
            let sum: f64 = w.iter().sum();
            let spare = total.saturating_sub(groups);
            let exact: Vec<f64> = w.iter().map(|x| x / sum * spare as f64).collect();
            let mut out: Vec<usize> = exact.iter().map(|x| 1 + x.floor() as usize).collect();
            let mut left = total.saturating_sub(out.iter().sum());
            let mut by_rest: Vec<usize> = (0..groups).collect();
            by_rest.sort_by(|&a, &b| {
                let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
                rb.total_cmp(&ra).then(a.cmp(&b))
            });
            for g in by_rest {
                if left == 0 {
                    break;
                }
                out[g] += 1;
                left -= 1;
            }
            out
        }
    }
}

/// Generates the shared-prefix workload; requests arrive shuffled.
pub fn shared_prefix(p: &SharedPrefix, limits: &WorkloadLimits) -> Result<Workload, WorkloadError> {
    if let GroupSizes::Zipf(s) = p.sizes
        && !(s.is_finite() && s >= 0.0)
    {
        return Err(WorkloadError::Zipf(s));
    }
    // Requests, and the groups themselves (each one a system prompt and a
    // size, even when empty).
    let requests = mul(n(p.groups), n(p.prompts_per_group)).map(|r| r.max(p.groups as u64));
    let per_request = add(add(n(p.system_len), n(p.question_len)), n(p.output_len));
    let tokens = add(mul(requests, per_request), mul(n(p.groups), n(p.system_len)));
    check("shared-prefix", requests, tokens, limits)?;
    let mut rng = SplitMix::new(p.seed);
    let mut requests = Vec::new();
    for (g, n) in sizes(p.groups, p.prompts_per_group, p.sizes).into_iter().enumerate() {
        let system = rng.tokens(p.system_len);
        for _ in 0..n {
            let mut prompt = system.clone();
            prompt.extend(rng.tokens(p.question_len));
            requests.push(SimRequest {
                namespace: Namespace::NONE,
                prompt: Prompt::Tokens(prompt),
                output: rng.tokens(p.output_len),
                after: None,
                priority: (g % 4) as i32,
            });
        }
    }
    rng.shuffle(&mut requests);
    Ok(Workload { name: format!("shared-prefix {}x{}", p.groups, p.prompts_per_group), requests })
}

/// Multi-turn chat: each turn's prompt is the previous prompt, the previous
/// answer and a new user message, so caching generated tokens pays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chat {
    /// Conversations.
    pub conversations: usize,
    /// Turns per conversation.
    pub turns: usize,
    /// System-prompt tokens (one system prompt shared by all).
    pub system_len: usize,
    /// Tokens per user message.
    pub user_len: usize,
    /// Tokens per answer.
    pub output_len: usize,
    /// The seed.
    pub seed: u64,
}

impl Default for Chat {
    fn default() -> Chat {
        Chat {
            conversations: 64,
            turns: 8,
            system_len: 512,
            user_len: 128,
            output_len: 256,
            seed: 1,
        }
    }
}

/// Generates the chat workload: turn `t` of every conversation (in a
/// shuffled order) before turn `t + 1` of any.
pub fn chat(p: &Chat, limits: &WorkloadLimits) -> Result<Workload, WorkloadError> {
    let turns = n(p.turns);
    let requests = mul(n(p.conversations), turns).map(|r| r.max(p.conversations as u64));
    // Per conversation: the prompts (turn t holds the system prompt, t + 1
    // user messages and t answers), the answers, and the history.
    let pairs = mul(turns, add(turns, Some(1))).map(|x| x / 2);
    let prompts = add(
        add(mul(turns, n(p.system_len)), mul(pairs, n(p.user_len))),
        mul(pairs.and_then(|x| x.checked_sub(p.turns as u64)), n(p.output_len)),
    );
    let history = add(n(p.system_len), mul(turns, add(n(p.user_len), n(p.output_len))));
    let per_conversation = add(add(prompts, mul(turns, n(p.output_len))), history);
    check("chat", requests, mul(n(p.conversations), per_conversation), limits)?;
    let mut rng = SplitMix::new(p.seed);
    let system = rng.tokens(p.system_len);
    let mut history: Vec<Vec<u32>> = vec![system; p.conversations];
    let mut last: Vec<Option<usize>> = vec![None; p.conversations];
    let mut requests = Vec::new();
    for _ in 0..p.turns {
        let mut order: Vec<usize> = (0..p.conversations).collect();
        rng.shuffle(&mut order);
        for c in order {
            history[c].extend(rng.tokens(p.user_len));
            let output = rng.tokens(p.output_len);
            requests.push(SimRequest {
                namespace: Namespace::NONE,
                prompt: Prompt::Tokens(history[c].clone()),
                output: output.clone(),
                after: last[c],
                priority: 0,
            });
            last[c] = Some(requests.len() - 1);
            history[c].extend(output);
        }
    }
    Ok(Workload { name: format!("chat {}x{}", p.conversations, p.turns), requests })
}

/// Few-shot prompting: one instruction, then `shots` examples of which the
/// first half is shared by a family of tasks and the second half is the
/// task's own, then a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FewShot {
    /// Task families.
    pub families: usize,
    /// Tasks per family.
    pub tasks_per_family: usize,
    /// Questions per task.
    pub questions: usize,
    /// Examples per prompt.
    pub shots: usize,
    /// Tokens per example.
    pub example_len: usize,
    /// Instruction tokens (shared by all).
    pub instruction_len: usize,
    /// Question tokens.
    pub question_len: usize,
    /// Output tokens.
    pub output_len: usize,
    /// The seed.
    pub seed: u64,
}

impl Default for FewShot {
    fn default() -> FewShot {
        FewShot {
            families: 8,
            tasks_per_family: 4,
            questions: 16,
            shots: 8,
            example_len: 96,
            instruction_len: 256,
            question_len: 64,
            output_len: 32,
            seed: 1,
        }
    }
}

/// Generates the few-shot workload; requests arrive shuffled.
pub fn few_shot(p: &FewShot, limits: &WorkloadLimits) -> Result<Workload, WorkloadError> {
    let tasks = mul(n(p.families), n(p.tasks_per_family));
    let requests = mul(tasks, n(p.questions)).zip(tasks).map(|(r, t)| r.max(t));
    let prefix = add(n(p.instruction_len), mul(n(p.shots), n(p.example_len)));
    let per_request = add(add(prefix, n(p.question_len)), n(p.output_len));
    let tokens = add(mul(requests, per_request), mul(tasks, prefix));
    check("few-shot", requests, tokens, limits)?;
    let mut rng = SplitMix::new(p.seed);
    let instruction = rng.tokens(p.instruction_len);
    let half = p.shots / 2;
    let mut requests = Vec::new();
    for _ in 0..p.families {
        let mut family = instruction.clone();
        family.extend(rng.tokens(half * p.example_len));
        for _ in 0..p.tasks_per_family {
            let mut task = family.clone();
            task.extend(rng.tokens((p.shots - half) * p.example_len));
            for _ in 0..p.questions {
                let mut prompt = task.clone();
                prompt.extend(rng.tokens(p.question_len));
                requests.push(SimRequest {
                    namespace: Namespace::NONE,
                    prompt: Prompt::Tokens(prompt),
                    output: rng.tokens(p.output_len),
                    after: None,
                    priority: 0,
                });
            }
        }
    }
    rng.shuffle(&mut requests);
    Ok(Workload {
        name: format!("few-shot {}x{}x{}", p.families, p.tasks_per_family, p.questions),
        requests,
    })
}

/// Tree of thought: for each problem a complete `branching`-ary tree of
/// thoughts of the given depth; the request for a thought has the problem
/// and the thoughts above it as prompt and the thought as output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeOfThought {
    /// Problems (independent trees).
    pub problems: usize,
    /// Children per thought.
    pub branching: usize,
    /// Thought levels below the problem.
    pub depth: usize,
    /// Problem-statement tokens.
    pub problem_len: usize,
    /// Tokens per thought.
    pub thought_len: usize,
    /// The seed.
    pub seed: u64,
}

impl Default for TreeOfThought {
    fn default() -> TreeOfThought {
        TreeOfThought {
            problems: 8,
            branching: 3,
            depth: 4,
            problem_len: 1024,
            thought_len: 128,
            seed: 1,
        }
    }
}

/// Generates the tree-of-thought workload: level by level (breadth first),
/// problems interleaved.
pub fn tree_of_thought(
    p: &TreeOfThought,
    limits: &WorkloadLimits,
) -> Result<Workload, WorkloadError> {
    // Level d holds branching^d thoughts per problem, each a request whose
    // prompt is the problem and d - 1 thoughts, and a child prefix one
    // thought longer. Stop counting once a limit is passed (a deep tree of
    // branching 1 would otherwise loop for long).
    let (mut requests, mut tokens) = (n(p.problems), mul(n(p.problems), n(p.problem_len)));
    let mut width = Some(1u64);
    for d in 0..p.depth as u64 {
        width = mul(width, n(p.branching));
        let level = mul(n(p.problems), width);
        let prompt = add(n(p.problem_len), mul(Some(d), n(p.thought_len)));
        let per_request = add(add(prompt, prompt), mul(Some(3), n(p.thought_len)));
        requests = add(requests, level);
        tokens = add(tokens, mul(level, per_request));
        if requests.is_none_or(|r| r > limits.max_requests)
            || tokens.is_none_or(|t| t > limits.max_total_tokens)
            || width == Some(0)
        {
            break;
        }
    }
    check("tree-of-thought", requests, tokens, limits)?;
    let mut rng = SplitMix::new(p.seed);
    // Per problem, the frontier: (request that produced the prefix, prefix).
    let mut frontier: Vec<Vec<(Option<usize>, Vec<u32>)>> =
        (0..p.problems).map(|_| vec![(None, rng.tokens(p.problem_len))]).collect();
    let mut requests = Vec::new();
    for _ in 0..p.depth {
        let mut next: Vec<Vec<(Option<usize>, Vec<u32>)>> = vec![Vec::new(); p.problems];
        let width = frontier.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..width {
            for (problem, nodes) in frontier.iter().enumerate() {
                let Some((after, prefix)) = nodes.get(i) else { continue };
                for _ in 0..p.branching {
                    let thought = rng.tokens(p.thought_len);
                    requests.push(SimRequest {
                        namespace: Namespace::NONE,
                        prompt: Prompt::Tokens(prefix.clone()),
                        output: thought.clone(),
                        after: *after,
                        priority: 0,
                    });
                    let mut child = prefix.clone();
                    child.extend(thought);
                    next[problem].push((Some(requests.len() - 1), child));
                }
            }
        }
        frontier = next;
    }
    Ok(Workload {
        name: format!("tree-of-thought {}x{}^{}", p.problems, p.branching, p.depth),
        requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_sizes_sum_to_the_total_and_decrease() {
        let s = sizes(64, 16, GroupSizes::Zipf(1.0));
        assert_eq!(s.iter().sum::<usize>(), 1024);
        assert!(s.iter().all(|&n| n >= 1));
        assert!(s[0] > s[63]);
        assert_eq!(sizes(3, 5, GroupSizes::Uniform), vec![5, 5, 5]);
    }

    #[test]
    fn workloads_have_the_documented_shapes() {
        let limits = WorkloadLimits::default();
        let w = shared_prefix(&SharedPrefix::default(), &limits).unwrap();
        assert_eq!(w.requests.len(), 64 * 16);
        assert!(w.requests.iter().all(|r| r.prompt.len() == 2048 + 128 && r.output.len() == 256));
        let c = chat(&Chat { conversations: 3, turns: 2, ..Chat::default() }, &limits).unwrap();
        assert_eq!(c.requests.len(), 6);
        let second = c.requests.iter().position(|r| r.after.is_some()).unwrap();
        assert!(second >= 3);
        let t = tree_of_thought(
            &TreeOfThought { problems: 2, branching: 2, depth: 3, ..Default::default() },
            &limits,
        )
        .unwrap();
        assert_eq!(t.requests.len(), 2 * (2 + 4 + 8));
        assert!(t.requests.iter().all(|r| r.after.is_none_or(|a| a < t.requests.len())));
    }

    /// The counts the limits check are the counts the generators make.
    #[test]
    fn the_checked_counts_are_exact_enough() {
        let tokens = |w: &Workload| {
            w.requests.iter().map(|r| (r.prompt.len() + r.output.len()) as u64).sum::<u64>()
        };
        let chat_p = Chat { conversations: 3, turns: 4, ..Chat::default() };
        let w = chat(&chat_p, &WorkloadLimits::default()).unwrap();
        let need = tokens(&w);
        // The history is counted on top, so the prompts and outputs alone fit.
        let tight = WorkloadLimits::default().with_max_total_tokens(need - 1);
        assert!(matches!(chat(&chat_p, &tight), Err(WorkloadError::Limit { .. })));
        let tight = WorkloadLimits::default().with_max_requests(11);
        assert!(matches!(chat(&chat_p, &tight), Err(WorkloadError::Limit { .. })));
        let tree = TreeOfThought { problems: 2, branching: 3, depth: 3, ..Default::default() };
        let w = tree_of_thought(&tree, &WorkloadLimits::default()).unwrap();
        let tight = WorkloadLimits::default().with_max_total_tokens(tokens(&w) - 1);
        assert!(tree_of_thought(&tree, &tight).is_err());
    }

    #[test]
    fn block_prompts_expand_to_block_ids() {
        let p = Prompt::Blocks { ids: vec![2, 5], block: 4, len: 6 };
        let mut out = Vec::new();
        p.expand_into(&mut out);
        assert_eq!(out, vec![8, 9, 10, 11, 20, 21]);
    }
}
