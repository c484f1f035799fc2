//! The prefix-cache simulator behind `structgen cache-sim`, shared with the
//! `radix` benchmark suite of the `compare` crate.
//!
//! - [`workload`]: generated workloads (shared prefix, chat, few-shot, tree
//!   of thought), bounded by [`WorkloadLimits`] before they allocate;
//! - [`trace`]: Mooncake traces read from bytes, bounded by [`TraceLimits`],
//!   a malformed line an error with its number;
//! - [`sim`]: the serving loop over a [`radix_cache::RadixCache`] (window,
//!   scheduler, batches, capacity), its report, and
//!   [`simulate_observed`], which hands every step's KV-cache events to the
//!   caller (to publish them, see `structgen-kv-events`).
//!
//! It lives here, not in `structgen-radix-cache`, so that the cache crate
//! stays free of serde and of everything a simulation needs but an engine
//! does not.

pub mod sim;
pub mod trace;
pub mod workload;

pub use sim::{OpStats, SimConfig, SimError, SimReport, Step, bound, simulate, simulate_observed};
pub use trace::{
    TraceError, TraceLimits, TraceRequest, block_bound, mooncake_workload, parse_mooncake,
};
pub use workload::{
    Chat, FewShot, GroupSizes, Prompt, SharedPrefix, SimRequest, TreeOfThought, Workload,
    WorkloadError, WorkloadLimits,
};
