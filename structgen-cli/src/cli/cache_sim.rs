//! `structgen cache-sim`: replay a workload or trace through the prefix cache.
//!
//! The engine is `radix_cache::sim`; this module reads the trace file
//! (gzipped or not), builds the workload from the flags, and prints the
//! report as text or as one JSON object (`--json`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use radix_cache::sched::{InBatchSharing, SchedulePolicy, SchedulerConfig};
use radix_cache::sim::{self, GroupSizes, OpStats, SimConfig, SimReport, TraceLimits};
use radix_cache::{CacheConfig, EvictionPolicy};
use serde_json::{Value, json};

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
    /// shared-prefix: Zipf exponent of the group sizes (uniform when absent).
    #[arg(long)]
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
    /// Print one JSON summary object.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: CacheSimArgs) -> Result<ExitCode> {
    let workload = match &args.trace {
        Some(path) => {
            let bytes = read_maybe_gz(path)?;
            let trace = sim::parse_mooncake(&bytes, &TraceLimits::default())
                .with_context(|| format!("malformed trace `{}`", path.display()))?;
            sim::mooncake_workload(&path.display().to_string(), &trace)
        }
        None => generate(&args),
    };
    let policy = match args.policy {
        PolicyArg::Lru => EvictionPolicy::Lru,
        PolicyArg::Lfu => EvictionPolicy::Lfu,
        PolicyArg::Fifo => EvictionPolicy::Fifo,
        PolicyArg::Priority => EvictionPolicy::Priority,
    };
    let scheduler = SchedulerConfig {
        policy: match args.scheduler {
            SchedulerArg::Fcfs => SchedulePolicy::Fcfs,
            SchedulerArg::Lpm => SchedulePolicy::LongestPrefixMatch,
            SchedulerArg::DfsWeight => SchedulePolicy::DfsWeight,
        },
        in_batch_sharing: args.in_batch_sharing.then(InBatchSharing::default),
        lpm_fcfs_above: args.lpm_fcfs_above,
    };
    let config = SimConfig {
        capacity: args.capacity,
        cache: CacheConfig { page_size: args.page_size as usize, policy, events: None },
        scheduler,
        window: args.window as usize,
        batch: args.batch as usize,
        cache_output: !args.no_cache_output && args.trace.is_none(),
        leave_last_token: args.leave_last_token,
        timing: true,
        audit: false,
        compute_bound: true,
    };
    let report = sim::simulate(&workload, &config).context("simulation failed")?;
    let summary = summary(&workload.name, &config, &report);
    if args.json {
        println!("{summary}");
    } else {
        print_text(&summary, &report);
    }
    Ok(ExitCode::SUCCESS)
}

fn generate(args: &CacheSimArgs) -> sim::Workload {
    match args.workload {
        WorkloadKind::SharedPrefix => sim::workload::shared_prefix(&sim::SharedPrefix {
            groups: args.groups,
            prompts_per_group: args.prompts_per_group,
            system_len: args.system_len,
            question_len: args.question_len,
            output_len: args.output_len,
            sizes: args.zipf.map_or(GroupSizes::Uniform, GroupSizes::Zipf),
            seed: args.seed,
        }),
        WorkloadKind::Chat => sim::workload::chat(&sim::Chat {
            conversations: args.conversations,
            turns: args.turns,
            seed: args.seed,
            ..sim::Chat::default()
        }),
        WorkloadKind::FewShot => {
            sim::workload::few_shot(&sim::FewShot { seed: args.seed, ..sim::FewShot::default() })
        }
        WorkloadKind::TreeOfThought => sim::workload::tree_of_thought(&sim::TreeOfThought {
            seed: args.seed,
            ..sim::TreeOfThought::default()
        }),
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

fn summary(name: &str, config: &SimConfig, r: &SimReport) -> Value {
    json!({
        "workload": name,
        "capacity": config.capacity,
        "policy": format!("{:?}", config.cache.policy),
        "scheduler": format!("{:?}", config.scheduler.policy),
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

fn print_text(summary: &Value, r: &SimReport) {
    println!("workload     {}", summary["workload"].as_str().unwrap_or(""));
    let cap = summary["capacity"].as_u64().map_or("unlimited".to_owned(), |c| c.to_string());
    println!("capacity     {cap} tokens");
    let text = |key: &str| summary[key].as_str().unwrap_or("").to_owned();
    println!("policy       {}, scheduler {}", text("policy"), text("scheduler"));
    println!("requests     {} ({} prompt tokens)", r.requests, r.prompt_tokens);
    println!("hit rate     {:.4} ({} tokens)", r.hit_rate, r.hit_tokens);
    println!("bound        {:.4} (unlimited cache, arrival order)", r.bound);
    println!("evictions    {} leaves, {} tokens", r.evictions, r.evicted_tokens);
    println!("peak         {} tokens, {} bytes", r.peak_tokens, r.memory_bytes);
    println!("{:<10} {:>10} {:>12} {:>10} {:>10}", "op", "count", "ops/s", "p50 ns", "p99 ns");
    for (name, s) in [
        ("schedule", &r.schedule),
        ("match", &r.match_),
        ("insert", &r.insert),
        ("lock", &r.lock),
        ("unlock", &r.unlock),
        ("evict", &r.evict),
    ] {
        println!(
            "{name:<10} {:>10} {:>12.0} {:>10} {:>10}",
            s.count,
            s.ops_per_sec(),
            s.p50_ns,
            s.p99_ns
        );
    }
}
