//! Integration tests of `radix-cache`, one binary with a module per concern.

mod events;
mod model;
mod mooncake;
mod sched;
mod sim;
mod unit;

/// `../shared/data` beside the repository, or `None` after printing why
/// `what` is skipped.
pub(crate) fn shared_data_or_skip(what: &str) -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!("SKIPPED {what}: ../shared/data is absent");
    None
}
