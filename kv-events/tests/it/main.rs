//! Integration tests of `kv-events`: the wire format pinned byte for byte,
//! round trips in both layouts, and the publisher over loopback.

extern crate structgen_kv_events as kv_events;

mod publisher;
mod wire;
