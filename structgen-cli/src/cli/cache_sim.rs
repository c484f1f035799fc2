//! `structgen cache-sim`: replay a workload or trace through the prefix cache.
//!
//! The engine is `structgen_cli::cache_sim`; this module reads the trace
//! file (gzipped or not), builds the workload from the flags, prints the
//! report as text or as one JSON object (`--json`), and with `--publish`
//! streams the cache's KV-cache events as vLLM does (`structgen-kv-events`),
//! so that a router can be pointed at the simulation.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use kv_events::{Layout, Publisher, PublisherConfig, WireConfig};
use radix_cache::sched::{InBatchSharing, SchedulePolicy, SchedulerConfig};
use radix_cache::{CacheConfig, EventConfig, EvictionPolicy};
use serde_json::{Value, json};
use structgen_cli::cache_sim::{
    self as sim, GroupSizes, OpStats, SimConfig, SimReport, TraceLimits, WorkloadLimits,
};

use super::common::read_maybe_gz;

/// A generated workload shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WorkloadKind {
    /// Groups of prompts sharing a system prompt (SGLang's generated-shared-prefix).
    SharedPrefix,
    /// Multi-turn conversations; answers are cached for the next turn.
    Chat,
    /// An instruction, few-shot examples shared by task families, a question.
    FewShot,
    /// Trees of thoughts: every branch extends its parent's prompt and answer.
    TreeOfThought,
}

/// The eviction policy flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PolicyArg {
    /// Least recently used.
    Lru,
    /// Least frequently used.
    Lfu,
    /// First in, first out.
    Fifo,
    /// Lowest priority first.
    Priority,
}

/// The event layout flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LayoutArg {
    /// Tagged maps (vLLM since PR #42892).
    Map,
    /// Tagged arrays (vLLM before; some routers read only these).
    Array,
}

/// The scheduler flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchedulerArg {
    /// First come, first served.
    Fcfs,
    /// Longest cached prefix first.
    Lpm,
    /// Depth-first over the waiting requests' radix tree.
    DfsWeight,
}

/// Arguments of `structgen cache-sim`.
#[derive(Debug, Args)]
pub(crate) struct CacheSimArgs {
    /// A Mooncake-format trace (JSON lines, optionally gzipped; each hash id a
    /// 512-token block); a generated workload when absent.
    #[arg(long)]
    pub(crate) trace: Option<PathBuf>,
    /// The generated workload (ignored with --trace).
    #[arg(long, value_enum, default_value = "shared-prefix")]
    pub(crate) workload: WorkloadKind,
    /// The cache capacity in tokens; unlimited when absent.
    #[arg(long)]
    pub(crate) capacity: Option<usize>,
    /// The eviction policy.
    #[arg(long, value_enum, default_value = "lru")]
    pub(crate) policy: PolicyArg,
    /// The waiting-queue order.
    #[arg(long, value_enum, default_value = "lpm")]
    pub(crate) scheduler: SchedulerArg,
    /// Defer requests that share a prefix with an earlier waiting one.
    #[arg(long)]
    pub(crate) in_batch_sharing: bool,
    /// Fall back from lpm to FCFS above this many waiting requests (never by default).
    #[arg(long)]
    pub(crate) lpm_fcfs_above: Option<usize>,
    /// Tokens per page (only whole pages are cached).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) page_size: u32,
    /// The most requests waiting at once.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) window: u32,
    /// Requests run per step.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) batch: u32,
    /// Do not cache generated tokens (traces never do: they carry no output ids).
    #[arg(long)]
    pub(crate) no_cache_output: bool,
    /// Match at most n-1 prompt tokens, as an engine that needs logits must.
    #[arg(long)]
    pub(crate) leave_last_token: bool,
    /// shared-prefix: groups.
    #[arg(long, default_value_t = 64)]
    pub(crate) groups: usize,
    /// shared-prefix: prompts per group.
    #[arg(long, default_value_t = 16)]
    pub(crate) prompts_per_group: usize,
    /// shared-prefix: system-prompt tokens.
    #[arg(long, default_value_t = 2048)]
    pub(crate) system_len: usize,
    /// shared-prefix: question tokens.
    #[arg(long, default_value_t = 128)]
    pub(crate) question_len: usize,
    /// shared-prefix: output tokens.
    #[arg(long, default_value_t = 256)]
    pub(crate) output_len: usize,
    /// shared-prefix: Zipf exponent of the group sizes, a finite number >= 0
    /// (uniform when absent).
    #[arg(long, value_parser = parse_zipf)]
    pub(crate) zipf: Option<f64>,
    /// chat: conversations.
    #[arg(long, default_value_t = 64)]
    pub(crate) conversations: usize,
    /// chat: turns per conversation.
    #[arg(long, default_value_t = 8)]
    pub(crate) turns: usize,
    /// The seed of generated token ids and arrival orders.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// The most prompt (and, generated, output) tokens a trace or workload
    /// may hold: past it, an error before anything large is allocated.
    #[arg(long, default_value_t = 1 << 28)]
    pub(crate) max_total_tokens: u64,
    /// The most requests a trace or workload may hold.
    #[arg(long, default_value_t = 1 << 22)]
    pub(crate) max_requests: u64,
    /// Print one JSON summary object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Stream the cache's KV-cache events, vLLM's way, on this ZeroMQ PUB
    /// endpoint (bound; `tcp://127.0.0.1:5557`, port 0 for any free one).
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) publish: Option<String>,
    /// The replay service's ROUTER endpoint (default: the publish port + 1,
    /// or a free port when that is 0); printed on standard error.
    #[arg(long, value_name = "ENDPOINT", requires = "publish")]
    pub(crate) replay_endpoint: Option<String>,
    /// The topic frame of every message (llm-d reads `kv@<pod>@<model>`).
    #[arg(long, default_value = "", requires = "publish")]
    pub(crate) topic: String,
    /// Milliseconds to wait after binding, so subscribers connect before the
    /// first event.
    #[arg(long, default_value_t = 1000, requires = "publish")]
    pub(crate) publish_delay_ms: u64,
    /// Milliseconds to keep answering replay requests after the last event.
    #[arg(long, default_value_t = 0, requires = "publish")]
    pub(crate) hold_ms: u64,
    /// Tokens per reported block (vLLM's block size), a multiple of the page size.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) event_block_size: u32,
    /// The event layout on the wire.
    #[arg(long, value_enum, default_value = "map")]
    pub(crate) event_layout: LayoutArg,
    /// Batches kept for replay.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) replay_buffer: usize,
}

fn parse_zipf(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(z) if z.is_finite() && z >= 0.0 => Ok(z),
        Ok(z) => Err(format!("the Zipf exponent must be a finite number >= 0, got {z}")),
        Err(e) => Err(e.to_string()),
    }
}

/// The name a value has on the command line (`lru`, `dfs-weight`).
fn cli_name(v: &impl ValueEnum) -> String {
    v.to_possible_value().map(|p| p.get_name().to_owned()).unwrap_or_default()
}

pub(crate) fn run(args: CacheSimArgs) -> Result<ExitCode> {
    let workload = match &args.trace {
        Some(path) => {
            let bytes = read_maybe_gz(path)?;
            let limits = TraceLimits::default()
                .with_max_total_tokens(args.max_total_tokens)
                .with_max_requests(usize::try_from(args.max_requests).unwrap_or(usize::MAX));
            let trace = sim::parse_mooncake(&bytes, &limits)
                .with_context(|| format!("bad trace `{}`", path.display()))?;
            sim::mooncake_workload(&path.display().to_string(), &trace)
        }
        None => generate(&args).context("cannot generate the workload")?,
    };
    let policy = match args.policy {
        PolicyArg::Lru => EvictionPolicy::Lru,
        PolicyArg::Lfu => EvictionPolicy::Lfu,
        PolicyArg::Fifo => EvictionPolicy::Fifo,
        PolicyArg::Priority => EvictionPolicy::Priority,
    };
    let scheduler = SchedulerConfig::default()
        .with_policy(match args.scheduler {
            SchedulerArg::Fcfs => SchedulePolicy::Fcfs,
            SchedulerArg::Lpm => SchedulePolicy::LongestPrefixMatch,
            SchedulerArg::DfsWeight => SchedulePolicy::DfsWeight,
        })
        .with_in_batch_sharing(args.in_batch_sharing.then(InBatchSharing::default))
        .with_lpm_fcfs_above(args.lpm_fcfs_above);
    let config = SimConfig::default()
        .with_capacity(args.capacity)
        .with_cache(
            CacheConfig::default().with_page_size(args.page_size as usize).with_policy(policy),
        )
        .with_scheduler(scheduler)
        .with_window(args.window as usize)
        .with_batch(args.batch as usize)
        .with_cache_output(!args.no_cache_output && args.trace.is_none())
        .with_leave_last_token(args.leave_last_token);
    let report = match &args.publish {
        Some(endpoint) => publish(&args, endpoint, &workload, config.clone())?,
        None => sim::simulate(&workload, &config).context("simulation failed")?,
    };
    let summary = summary(&workload.name, &args, &config, &report);
    if args.json {
        outln!("{summary}");
    } else {
        print_text(&summary, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The replay endpoint beside a publish endpoint: the next port over TCP
/// (a free one when the port is 0), a `-replay` suffix otherwise.
fn default_replay(endpoint: &str) -> String {
    if let Some(rest) = endpoint.strip_prefix("tcp://")
        && let Some((host, port)) = rest.rsplit_once(':')
        && let Ok(port) = port.parse::<u16>()
    {
        let next = if port == 0 { 0 } else { port.saturating_add(1) };
        return format!("tcp://{host}:{next}");
    }
    format!("{endpoint}-replay")
}

/// Runs the simulation with events on, publishing every step's events as
/// one batch (steps without events publish nothing, as vLLM does).
fn publish(
    args: &CacheSimArgs,
    endpoint: &str,
    workload: &sim::Workload,
    config: SimConfig,
) -> Result<SimReport> {
    let layout = match args.event_layout {
        LayoutArg::Map => Layout::Map,
        LayoutArg::Array => Layout::Array,
    };
    let replay = args.replay_endpoint.clone().unwrap_or_else(|| default_replay(endpoint));
    let publisher_config = PublisherConfig::new(endpoint)
        .with_replay_endpoint(Some(replay))
        .with_topic(args.topic.clone())
        .with_replay_steps(args.replay_buffer)
        .with_hold(Duration::from_millis(args.hold_ms))
        .with_wire(WireConfig::default().with_layout(layout));
    let mut publisher = Publisher::bind(publisher_config).context("cannot publish")?;
    eprintln!(
        "publishing KV events on {} (topic `{}`), replay on {}",
        publisher.endpoint(),
        args.topic,
        publisher.replay_endpoint().unwrap_or("-"),
    );
    std::thread::sleep(Duration::from_millis(args.publish_delay_ms));
    let events = EventConfig::default().with_block_size(args.event_block_size as usize);
    let config = config.clone().with_cache(config.cache.clone().with_events(Some(events)));
    let report = sim::simulate_observed(workload, &config, |step| {
        if !step.events.is_empty() {
            let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            publisher.publish_events(ts, step.events.to_vec())?;
        }
        Ok(())
    })
    .context("simulation failed")?;
    let stats = publisher.close().context("publishing failed")?;
    eprintln!(
        "published {} batches ({} bytes); answered {} replay requests",
        stats.batches, stats.bytes, stats.replays
    );
    Ok(report)
}

fn generate(args: &CacheSimArgs) -> Result<sim::Workload, sim::WorkloadError> {
    let limits = WorkloadLimits::default()
        .with_max_total_tokens(args.max_total_tokens)
        .with_max_requests(args.max_requests);
    match args.workload {
        WorkloadKind::SharedPrefix => sim::workload::shared_prefix(
            &sim::SharedPrefix {
                groups: args.groups,
                prompts_per_group: args.prompts_per_group,
                system_len: args.system_len,
                question_len: args.question_len,
                output_len: args.output_len,
                sizes: args.zipf.map_or(GroupSizes::Uniform, GroupSizes::Zipf),
                seed: args.seed,
            },
            &limits,
        ),
        WorkloadKind::Chat => sim::workload::chat(
            &sim::Chat {
                conversations: args.conversations,
                turns: args.turns,
                seed: args.seed,
                ..sim::Chat::default()
            },
            &limits,
        ),
        WorkloadKind::FewShot => sim::workload::few_shot(
            &sim::FewShot { seed: args.seed, ..sim::FewShot::default() },
            &limits,
        ),
        WorkloadKind::TreeOfThought => sim::workload::tree_of_thought(
            &sim::TreeOfThought { seed: args.seed, ..sim::TreeOfThought::default() },
            &limits,
        ),
    }
}

fn op(s: &OpStats) -> Value {
    json!({
        "count": s.count,
        "ops_per_s": s.ops_per_sec().round(),
        "p50_ns": s.p50_ns,
        "p99_ns": s.p99_ns,
    })
}

fn summary(name: &str, args: &CacheSimArgs, config: &SimConfig, r: &SimReport) -> Value {
    json!({
        "workload": name,
        "capacity": config.capacity,
        "policy": cli_name(&args.policy),
        "scheduler": cli_name(&args.scheduler),
        "requests": r.requests,
        "prompt_tokens": r.prompt_tokens,
        "hit_tokens": r.hit_tokens,
        "hit_rate": r.hit_rate,
        "bound": r.bound,
        "evictions": r.evictions,
        "evicted_tokens": r.evicted_tokens,
        "peak_tokens": r.peak_tokens,
        "memory_bytes_at_peak": r.memory_bytes,
        "ops": {
            "schedule": op(&r.schedule),
            "match": op(&r.match_),
            "insert": op(&r.insert),
            "lock": op(&r.lock),
            "unlock": op(&r.unlock),
            "evict": op(&r.evict),
        },
    })
}

fn print_text(summary: &Value, r: &SimReport) -> Result<()> {
    outln!("workload     {}", summary["workload"].as_str().unwrap_or(""));
    let cap = summary["capacity"].as_u64().map_or("unlimited".to_owned(), |c| c.to_string());
    outln!("capacity     {cap} tokens");
    let text = |key: &str| summary[key].as_str().unwrap_or("").to_owned();
    outln!("policy       {}, scheduler {}", text("policy"), text("scheduler"));
    outln!("requests     {} ({} prompt tokens)", r.requests, r.prompt_tokens);
    outln!("hit rate     {:.4} ({} tokens)", r.hit_rate, r.hit_tokens);
    outln!("bound        {:.4} (unlimited cache, arrival order)", r.bound);
    outln!("evictions    {} leaves, {} tokens", r.evictions, r.evicted_tokens);
    outln!("peak         {} tokens, {} bytes", r.peak_tokens, r.memory_bytes);
    outln!("{:<10} {:>10} {:>12} {:>10} {:>10}", "op", "count", "ops/s", "p50 ns", "p99 ns");
    for (name, s) in [
        ("schedule", &r.schedule),
        ("match", &r.match_),
        ("insert", &r.insert),
        ("lock", &r.lock),
        ("unlock", &r.unlock),
        ("evict", &r.evict),
    ] {
        outln!(
            "{name:<10} {:>10} {:>12.0} {:>10} {:>10}",
            s.count,
            s.ops_per_sec(),
            s.p50_ns,
            s.p99_ns
        );
    }
    Ok(())
}
