//! The trace simulator behind `structgen cache-sim`: replay a [`Workload`]
//! through a [`RadixCache`] of a given capacity with a scheduler, and report
//! the token hit rate, its infinite-capacity bound, evictions, and the
//! latency of every cache operation; [`simulate_observed`] also hands the
//! cache's KV-cache events of every step to a caller (`cache-sim --publish`).
//!
//! The model of the serving engine: requests arrive in order into a waiting
//! queue of at most `window` requests (a request whose `after` has not
//! finished waits outside); each step the scheduler orders the queue and the
//! first `batch` requests run together: each matches and locks its cached
//! prefix, then each, in turn, makes room (evicting down to the capacity),
//! caches its prompt (and output, if `cache_output`) with fresh KV slots,
//! frees the slots the cache did not take, and unlocks. Requests of one
//! batch do not see each other's prompts (they run concurrently).
//!
//! No file I/O here: workloads come from [`workload`](super::workload)
//! generators or from [`parse_mooncake`](super::trace::parse_mooncake) over
//! bytes the caller read.

use std::fmt;
use std::time::Instant;

use radix_cache::sched::{SchedulerConfig, Waiting, schedule};
use radix_cache::{CacheConfig, CacheEvent, Error, RadixCache};

use super::workload::Workload;

/// The simulation's parameters: `SimConfig::default()`, then the `with_*`
/// setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimConfig {
    /// The cache capacity in tokens; `None` is unlimited.
    pub capacity: Option<usize>,
    /// Page size, eviction policy, and the events [`simulate_observed`]
    /// hands out ([`simulate`] turns them off).
    pub cache: CacheConfig,
    /// The waiting-queue order.
    pub scheduler: SchedulerConfig,
    /// The most requests waiting at once (at least 1).
    pub window: usize,
    /// Requests run per step (at least 1).
    pub batch: usize,
    /// Cache each request's output after its prompt.
    pub cache_output: bool,
    /// Match at most `len - 1` prompt tokens (an engine must compute the
    /// last token to get logits); off by default.
    pub leave_last_token: bool,
    /// Time every operation (match, insert, lock, evict, schedule).
    pub timing: bool,
    /// Check that every KV slot is freed exactly once (a bitmap over slots).
    pub audit: bool,
    /// Compute [`SimReport::bound`] (a second pass with an unlimited cache).
    pub compute_bound: bool,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            capacity: None,
            cache: CacheConfig::default(),
            scheduler: SchedulerConfig::default(),
            window: 256,
            batch: 8,
            cache_output: true,
            leave_last_token: false,
            timing: true,
            audit: false,
            compute_bound: true,
        }
    }
}

impl SimConfig {
    /// Sets [`capacity`](Self::capacity).
    pub fn with_capacity(mut self, capacity: Option<usize>) -> SimConfig {
        self.capacity = capacity;
        self
    }

    /// Sets [`cache`](Self::cache).
    pub fn with_cache(mut self, cache: CacheConfig) -> SimConfig {
        self.cache = cache;
        self
    }

    /// Sets [`scheduler`](Self::scheduler).
    pub fn with_scheduler(mut self, scheduler: SchedulerConfig) -> SimConfig {
        self.scheduler = scheduler;
        self
    }

    /// Sets [`window`](Self::window).
    pub fn with_window(mut self, window: usize) -> SimConfig {
        self.window = window;
        self
    }

    /// Sets [`batch`](Self::batch).
    pub fn with_batch(mut self, batch: usize) -> SimConfig {
        self.batch = batch;
        self
    }

    /// Sets [`cache_output`](Self::cache_output).
    pub fn with_cache_output(mut self, on: bool) -> SimConfig {
        self.cache_output = on;
        self
    }

    /// Sets [`leave_last_token`](Self::leave_last_token).
    pub fn with_leave_last_token(mut self, on: bool) -> SimConfig {
        self.leave_last_token = on;
        self
    }

    /// Sets [`timing`](Self::timing).
    pub fn with_timing(mut self, on: bool) -> SimConfig {
        self.timing = on;
        self
    }

    /// Sets [`audit`](Self::audit).
    pub fn with_audit(mut self, on: bool) -> SimConfig {
        self.audit = on;
        self
    }

    /// Sets [`compute_bound`](Self::compute_bound).
    pub fn with_compute_bound(mut self, on: bool) -> SimConfig {
        self.compute_bound = on;
        self
    }
}

/// Why a simulation stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum SimError {
    /// The cache refused an operation (a bad configuration, a sequence too
    /// long to address).
    Cache(Error),
    /// Request `request` waits for a request that never finishes before it
    /// (its `after` points forwards or out of the workload).
    WaitsForLater {
        /// The index of the waiting request.
        request: usize,
    },
    /// More than `u32::MAX` KV slots were handed out.
    TooManySlots,
    /// The audit found a KV slot freed twice or never freed.
    Audit(&'static str),
    /// The observer of [`simulate_observed`] failed at step `step`.
    Observer {
        /// The step (0-based).
        step: usize,
        /// What the observer reported.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Cache(e) => write!(f, "{e}"),
            SimError::WaitsForLater { request } => {
                write!(f, "request {request} waits for a request that does not come before it")
            }
            SimError::TooManySlots => write!(f, "more than {} KV slots handed out", u32::MAX),
            SimError::Audit(what) => write!(f, "audit: {what}"),
            SimError::Observer { step, source } => write!(f, "at step {step}: {source}"),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Cache(e) => Some(e),
            SimError::Observer { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<Error> for SimError {
    fn from(e: Error) -> SimError {
        SimError::Cache(e)
    }
}

/// What [`simulate_observed`] shows its observer after each step.
#[derive(Debug)]
#[non_exhaustive]
pub struct Step<'a> {
    /// The step's index (0-based): one scheduler call and the batch it ran.
    pub index: usize,
    /// The workload indices of the requests the step ran, in order.
    pub requests: &'a [usize],
    /// The cache's events of the step, in order (empty when
    /// [`CacheConfig::events`] is `None`).
    pub events: &'a [CacheEvent],
    /// The cache after the step.
    pub cache: &'a RadixCache<u32>,
}

/// Latency statistics of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OpStats {
    /// Calls.
    pub count: u64,
    /// Total time in nanoseconds.
    pub total_ns: u64,
    /// Median latency in nanoseconds.
    pub p50_ns: u64,
    /// 99th-percentile latency in nanoseconds.
    pub p99_ns: u64,
}

impl OpStats {
    fn from_samples(mut samples: Vec<u64>) -> OpStats {
        if samples.is_empty() {
            return OpStats::default();
        }
        samples.sort_unstable();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        OpStats {
            count: samples.len() as u64,
            total_ns: samples.iter().sum(),
            p50_ns: at(0.50),
            p99_ns: at(0.99),
        }
    }

    /// Calls per second of busy time.
    pub fn ops_per_sec(&self) -> f64 {
        if self.total_ns == 0 { 0.0 } else { self.count as f64 * 1e9 / self.total_ns as f64 }
    }
}

/// What a simulation measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SimReport {
    /// Requests run.
    pub requests: usize,
    /// Prompt tokens of all requests.
    pub prompt_tokens: u64,
    /// Prompt tokens found in the cache.
    pub hit_tokens: u64,
    /// `hit_tokens / prompt_tokens`.
    pub hit_rate: f64,
    /// The hit rate of an unlimited cache on the arrival order, one request
    /// at a time (see [`bound`]).
    pub bound: f64,
    /// Leaves evicted.
    pub evictions: u64,
    /// Tokens evicted.
    pub evicted_tokens: u64,
    /// The most tokens cached at once.
    pub peak_tokens: usize,
    /// Tokens cached at the end.
    pub final_tokens: usize,
    /// Scheduler calls (one per step) and their cost.
    pub schedule: OpStats,
    /// `match_prefix` calls.
    pub match_: OpStats,
    /// `insert` calls.
    pub insert: OpStats,
    /// `lock` calls.
    pub lock: OpStats,
    /// `unlock` calls.
    pub unlock: OpStats,
    /// `evict` calls (those that had to free something).
    pub evict: OpStats,
    /// Bytes the cache used at its peak token count.
    pub memory_bytes: usize,
}

/// One timer per operation kind; does nothing when timing is off.
struct Timers {
    on: bool,
    samples: [Vec<u64>; 6],
}

impl Timers {
    fn time<T>(&mut self, which: usize, f: impl FnOnce() -> T) -> T {
        if !self.on {
            return f();
        }
        let start = Instant::now();
        let out = f();
        self.samples[which].push(start.elapsed().as_nanos() as u64);
        out
    }
}

const SCHEDULE: usize = 0;
const MATCH: usize = 1;
const INSERT: usize = 2;
const LOCK: usize = 3;
const UNLOCK: usize = 4;
const EVICT: usize = 5;

/// A ledger of KV slots for the audit: every slot handed out is freed once.
struct Slots {
    next: u32,
    freed: u64,
    audit: Option<Vec<u64>>,
}

impl Slots {
    fn alloc(&mut self, n: usize, out: &mut Vec<u32>) {
        out.extend(self.next..self.next + n as u32);
        self.next += n as u32;
    }

    fn free(&mut self, values: &[u32]) -> Result<(), SimError> {
        self.freed += values.len() as u64;
        if let Some(bits) = &mut self.audit {
            for &v in values {
                let (w, b) = (v as usize / 64, v % 64);
                if bits.len() <= w {
                    bits.resize(w + 1, 0);
                }
                if bits[w] & (1 << b) != 0 {
                    return Err(SimError::Audit("a KV slot was freed twice"));
                }
                bits[w] |= 1 << b;
            }
        }
        Ok(())
    }
}

/// Runs `workload` under `config` (without events).
///
/// Errors on a bad configuration, a request waiting for a later one, an
/// inconsistency the audit finds, or more than `u32::MAX` KV slots.
pub fn simulate(workload: &Workload, config: &SimConfig) -> Result<SimReport, SimError> {
    let config = config.clone().with_cache(config.cache.clone().with_events(None));
    simulate_observed(workload, &config, |_| Ok(()))
}

/// Runs `workload` under `config` and calls `observer` after every step
/// with the step's requests, its KV-cache events (when
/// [`CacheConfig::events`] is set) and the cache. An observer error stops
/// the simulation ([`SimError::Observer`]).
pub fn simulate_observed(
    workload: &Workload,
    config: &SimConfig,
    mut observer: impl FnMut(Step<'_>) -> Result<(), Box<dyn std::error::Error + Send + Sync>>,
) -> Result<SimReport, SimError> {
    let mut cache: RadixCache<u32> = RadixCache::with_config(config.cache.clone())?;
    let mut events: Vec<CacheEvent> = Vec::new();
    let mut step = 0;
    let reqs = &workload.requests;
    let n = reqs.len();
    let window = config.window.max(1);
    let batch = config.batch.max(1);
    let mut timers = Timers { on: config.timing, samples: Default::default() };
    let mut slots = Slots { next: 0, freed: 0, audit: config.audit.then(Vec::new) };
    let mut report = SimReport { requests: n, ..SimReport::default() };
    let mut done = vec![false; n];
    let mut waiting: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut next = 0;
    let mut finished = 0;
    let mut values = Vec::new();
    let mut freed = Vec::new();
    while finished < n {
        while waiting.len() < window
            && next < n
            && reqs[next].after.is_none_or(|a| done.get(a) == Some(&true))
        {
            let mut prompt = Vec::with_capacity(reqs[next].prompt.len());
            reqs[next].prompt.expand_into(&mut prompt);
            report.prompt_tokens += prompt.len() as u64;
            waiting.push((next, prompt));
            next += 1;
        }
        if waiting.is_empty() {
            // Only an `after` pointing forwards can get here.
            return Err(SimError::WaitsForLater { request: next });
        }
        let views: Vec<Waiting<'_>> = waiting
            .iter()
            .map(|(i, p)| Waiting { namespace: reqs[*i].namespace, tokens: p, reserve: 0 })
            .collect();
        let order = timers.time(SCHEDULE, || schedule(&cache, &views, &config.scheduler)).order;
        drop(views);
        let take: Vec<usize> = order.into_iter().take(batch).collect();
        // Phase 1: every request of the batch matches and locks its prefix.
        let mut running = Vec::with_capacity(take.len());
        for &w in &take {
            let (i, prompt) = &waiting[w];
            let r = &reqs[*i];
            let upto =
                if config.leave_last_token { prompt.len().saturating_sub(1) } else { prompt.len() };
            let m = timers.time(MATCH, || cache.match_prefix_in(r.namespace, &prompt[..upto]));
            report.hit_tokens += m.len as u64;
            let lock = timers.time(LOCK, || cache.lock(&m.handle))?;
            running.push((w, m.len, m.values, lock));
        }
        // Phase 2: each caches what it computed, then unlocks.
        for (w, matched, prefix_values, lock) in running {
            let (i, prompt) = &waiting[w];
            let r = &reqs[*i];
            let mut full = prompt.clone();
            if config.cache_output {
                full.extend_from_slice(&r.output);
            }
            let page = cache.page_size();
            let aligned = full.len() - full.len() % page;
            if let Some(cap) = config.capacity {
                let need = aligned - matched;
                let over = (cache.total_tokens() + need).saturating_sub(cap);
                if over > 0 {
                    freed.clear();
                    timers.time(EVICT, || cache.evict_into(over, &mut freed));
                    slots.free(&freed)?;
                }
                // What is locked cannot go: cache only what fits.
                let room = cap.saturating_sub(cache.total_tokens());
                let keep = (matched + room).min(full.len());
                full.truncate(keep - keep % page);
            }
            values.clear();
            values.extend_from_slice(&prefix_values);
            let fresh = full.len().saturating_sub(matched);
            if slots.next as u64 + fresh as u64 >= u64::from(u32::MAX) {
                return Err(SimError::TooManySlots);
            }
            slots.alloc(fresh, &mut values);
            values.truncate(full.len());
            let ins = timers
                .time(INSERT, || cache.insert_with(r.namespace, &full, &values, r.priority))?;
            // The cache did not take our duplicates nor a partial page.
            let start = ins.prefix_len.max(matched);
            slots.free(&values[matched..start])?;
            slots.free(&values[ins.prefix_len + ins.inserted..])?;
            timers.time(UNLOCK, || cache.unlock(lock))?;
            report.peak_tokens = report.peak_tokens.max(cache.total_tokens());
            if cache.total_tokens() == report.peak_tokens {
                report.memory_bytes = cache.memory_bytes();
            }
            done[*i] = true;
            finished += 1;
        }
        let ran: Vec<usize> = take.iter().map(|&w| waiting[w].0).collect();
        events.clear();
        events.extend(cache.drain_events());
        observer(Step { index: step, requests: &ran, events: &events, cache: &cache })
            .map_err(|source| SimError::Observer { step, source })?;
        step += 1;
        let mut taken = take;
        taken.sort_unstable_by(|a, b| b.cmp(a));
        for w in taken {
            waiting.remove(w);
        }
    }
    let (leaves, tokens) = cache.evictions();
    report.evictions = leaves;
    report.evicted_tokens = tokens;
    report.final_tokens = cache.total_tokens();
    report.hit_rate = ratio(report.hit_tokens, report.prompt_tokens);
    if config.compute_bound {
        report.bound = bound(workload, config)?;
    }
    let [s, m, i, l, u, e] = timers.samples;
    report.schedule = OpStats::from_samples(s);
    report.match_ = OpStats::from_samples(m);
    report.insert = OpStats::from_samples(i);
    report.lock = OpStats::from_samples(l);
    report.unlock = OpStats::from_samples(u);
    report.evict = OpStats::from_samples(e);
    // The ledger: every slot handed out is cached or was freed once.
    let outstanding = u64::from(slots.next) - slots.freed;
    if outstanding != cache.total_tokens() as u64 {
        return Err(SimError::Audit("KV slots leaked"));
    }
    Ok(report)
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The hit rate of an unlimited cache on the arrival order, one request at
/// a time, with the same page size, output caching and last-token rule: no
/// capacity and no order of an online run beats it by more than what
/// batching and reordering of dependent requests change.
pub fn bound(workload: &Workload, config: &SimConfig) -> Result<f64, SimError> {
    let cache_config = CacheConfig::default().with_page_size(config.cache.page_size);
    let mut cache: RadixCache<()> = RadixCache::with_config(cache_config)?;
    let (mut hits, mut total) = (0u64, 0u64);
    let mut full = Vec::new();
    for r in &workload.requests {
        full.clear();
        r.prompt.expand_into(&mut full);
        let upto = if config.leave_last_token { full.len().saturating_sub(1) } else { full.len() };
        hits += cache.prefix_len_in(r.namespace, &full[..upto]) as u64;
        total += full.len() as u64;
        if config.cache_output {
            full.extend_from_slice(&r.output);
        }
        cache.insert_with(r.namespace, &full, &vec![(); full.len()], 0)?;
    }
    Ok(ratio(hits, total))
}
