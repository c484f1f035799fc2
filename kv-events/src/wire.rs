//! The msgpack encoding of event batches, in vLLM's two layouts.
//!
//! A batch is always an array `[ts, events, data_parallel_rank]` (vLLM's
//! `EventBatch`, `array_like=True`): `ts` a float64 in seconds, `events` an
//! array, the rank an integer or nil. Each event is, in the
//! [`Layout::Map`] layout (vLLM after PR #42892, msgspec `tag=True` without
//! `array_like`), a map whose first key is `"type"` (the class name), then
//! the fields in declaration order:
//!
//! | event | fields after `type` |
//! | --- | --- |
//! | `BlockStored` | `block_hashes`, `parent_block_hash`, `token_ids`, `block_size`, `lora_id`, `medium`, `lora_name` |
//! | `BlockRemoved` | `block_hashes`, `medium` |
//! | `AllBlocksCleared` | (none) |
//!
//! and in the [`Layout::Array`] layout (vLLM up to 0.23, `array_like=True`)
//! an array of the tag followed by the same values in the same order. Fields
//! with defaults that vLLM leaves out when unset (`extra_keys`, `group_idx`,
//! `kv_cache_spec_kind`, ...) are not written. Integers take msgpack's
//! shortest form, as msgspec writes them; hashes are unsigned 64-bit.

use std::collections::BTreeMap;
use std::convert::Infallible;

use radix_cache::{CacheEvent, Namespace};
use rmp::encode::{self, ByteBuf, ValueWriteError};

/// How each event of a batch is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum Layout {
    /// Tagged maps (`{"type": "BlockStored", "block_hashes": ...}`): what
    /// vLLM publishes since PR #42892 and what current routers read.
    #[default]
    Map,
    /// Tagged arrays (`["BlockStored", [...], ...]`): what vLLM published
    /// before, still the only layout some routers read.
    Array,
}

/// How events are written: `WireConfig::default()` (tagged maps, medium
/// `"GPU"`, data-parallel rank 0, no LoRA names), then the `with_*`
/// setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WireConfig {
    /// The event layout.
    pub layout: Layout,
    /// The `medium` of every event (vLLM writes `"GPU"` for its GPU cache).
    pub medium: Option<String>,
    /// The batch's `data_parallel_rank` (vLLM's publisher always fills in
    /// its rank, 0 by default); `None` writes nil.
    pub data_parallel_rank: Option<u32>,
    /// The `lora_name` of a namespace's blocks. A namespace other than
    /// [`Namespace::NONE`] is also written as `lora_id` (its number).
    pub lora_names: BTreeMap<Namespace, String>,
}

impl Default for WireConfig {
    fn default() -> WireConfig {
        WireConfig {
            layout: Layout::Map,
            medium: Some("GPU".to_owned()),
            data_parallel_rank: Some(0),
            lora_names: BTreeMap::new(),
        }
    }
}

impl WireConfig {
    /// Sets [`layout`](Self::layout).
    pub fn with_layout(mut self, layout: Layout) -> WireConfig {
        self.layout = layout;
        self
    }

    /// Sets [`medium`](Self::medium).
    pub fn with_medium(mut self, medium: Option<String>) -> WireConfig {
        self.medium = medium;
        self
    }

    /// Sets [`data_parallel_rank`](Self::data_parallel_rank).
    pub fn with_data_parallel_rank(mut self, rank: Option<u32>) -> WireConfig {
        self.data_parallel_rank = rank;
        self
    }

    /// Names `namespace`'s adapter in [`lora_names`](Self::lora_names).
    pub fn with_lora_name(mut self, namespace: Namespace, name: impl Into<String>) -> WireConfig {
        self.lora_names.insert(namespace, name.into());
        self
    }
}

/// Writes to a `ByteBuf` cannot fail: its error type is `Infallible`.
fn ok<T>(r: Result<T, ValueWriteError<Infallible>>) -> T {
    match r {
        Ok(v) => v,
        Err(ValueWriteError::InvalidMarkerWrite(e) | ValueWriteError::InvalidDataWrite(e)) => {
            match e {}
        }
    }
}

/// Lengths come from vectors the cache built; msgpack's are 32-bit. A
/// longer one (over four billion hashes in one event) is cut to what the
/// length can say rather than panicking, which no cache reaches: a sequence
/// holds fewer than `u32::MAX` tokens.
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Appends one msgpack-encoded batch of `events` stamped `ts` (seconds since
/// the Unix epoch, as vLLM's `time.time()`) to `out`.
pub fn encode_batch(config: &WireConfig, ts: f64, events: &[CacheEvent], out: &mut Vec<u8>) {
    let mut buf = ByteBuf::from_vec(std::mem::take(out));
    ok(encode::write_array_len(&mut buf, 3));
    ok(encode::write_f64(&mut buf, ts));
    ok(encode::write_array_len(&mut buf, len32(events.len())));
    for e in events {
        write_event(config, e, &mut buf);
    }
    match config.data_parallel_rank {
        Some(r) => _ = ok(encode::write_uint(&mut buf, u64::from(r))),
        None => nil(&mut buf),
    }
    *out = buf.into_vec();
}

fn nil(buf: &mut ByteBuf) {
    match encode::write_nil(buf) {
        Ok(()) => {}
        Err(e) => match e {},
    }
}

fn opt_uint(buf: &mut ByteBuf, v: Option<u64>) {
    match v {
        Some(v) => _ = ok(encode::write_uint(buf, v)),
        None => nil(buf),
    }
}

fn opt_str(buf: &mut ByteBuf, v: Option<&str>) {
    match v {
        Some(s) => ok(encode::write_str(buf, s)),
        None => nil(buf),
    }
}

/// Writes the head of an event: the map or array header with `fields`
/// values after the tag, and the tag.
fn head(config: &WireConfig, buf: &mut ByteBuf, tag: &str, fields: u32) {
    match config.layout {
        Layout::Map => {
            ok(encode::write_map_len(buf, fields + 1));
            ok(encode::write_str(buf, "type"));
        }
        Layout::Array => _ = ok(encode::write_array_len(buf, fields + 1)),
    }
    ok(encode::write_str(buf, tag));
}

/// Writes a field's key in the map layout; nothing in the array layout.
fn key(config: &WireConfig, buf: &mut ByteBuf, name: &str) {
    if config.layout == Layout::Map {
        ok(encode::write_str(buf, name));
    }
}

/// An array of unsigned integers, each in msgpack's shortest form (what
/// `rmp::encode::write_uint` writes), appended straight to the vector: the
/// token ids are most of a batch, and this loop is most of its cost.
fn uints(buf: &mut ByteBuf, values: impl ExactSizeIterator<Item = u64>) {
    ok(encode::write_array_len(buf, len32(values.len())));
    let out = buf.as_mut_vec();
    out.reserve(values.len() * 5);
    for v in values {
        match v {
            0..=0x7f => out.push(v as u8),
            0x80..=0xff => out.extend_from_slice(&[0xcc, v as u8]),
            0x100..=0xffff => {
                out.push(0xcd);
                out.extend_from_slice(&(v as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0xce);
                out.extend_from_slice(&(v as u32).to_be_bytes());
            }
            _ => {
                out.push(0xcf);
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
    }
}

fn write_event(config: &WireConfig, event: &CacheEvent, buf: &mut ByteBuf) {
    let medium = config.medium.as_deref();
    match event {
        CacheEvent::BlockStored {
            block_hashes,
            parent_block_hash,
            token_ids,
            block_size,
            namespace,
        } => {
            head(config, buf, "BlockStored", 7);
            key(config, buf, "block_hashes");
            uints(buf, block_hashes.iter().copied());
            key(config, buf, "parent_block_hash");
            opt_uint(buf, *parent_block_hash);
            key(config, buf, "token_ids");
            uints(buf, token_ids.iter().map(|&t| u64::from(t)));
            key(config, buf, "block_size");
            ok(encode::write_uint(buf, *block_size as u64));
            key(config, buf, "lora_id");
            opt_uint(buf, (*namespace != Namespace::NONE).then_some(namespace.0));
            key(config, buf, "medium");
            opt_str(buf, medium);
            key(config, buf, "lora_name");
            opt_str(buf, config.lora_names.get(namespace).map(String::as_str));
        }
        CacheEvent::BlockRemoved { block_hashes } => {
            head(config, buf, "BlockRemoved", 2);
            key(config, buf, "block_hashes");
            uints(buf, block_hashes.iter().copied());
            key(config, buf, "medium");
            opt_str(buf, medium);
        }
        CacheEvent::AllBlocksCleared => head(config, buf, "AllBlocksCleared", 0),
        // `CacheEvent` is non-exhaustive: a kind vLLM's schema lacks is
        // written as an event no router knows, rather than dropped silently.
        _ => head(config, buf, "Unknown", 0),
    }
}
