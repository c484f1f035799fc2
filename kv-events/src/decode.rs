//! Reading batches back: both layouts, as a router would, for round-trip
//! tests and for Rust consumers. Unknown map keys and trailing array
//! elements are skipped (newer vLLM versions add fields), unknown event
//! tags are errors.

use std::fmt;

use radix_cache::{CacheEvent, Namespace};
use rmp::Marker;
use rmp::decode::{self, Bytes};

use crate::wire::Layout;

/// A decoded batch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Batch {
    /// The batch's timestamp (seconds).
    pub ts: f64,
    /// Its events; a `BlockStored`'s namespace is its `lora_id` (nil: the
    /// default namespace).
    pub events: Vec<CacheEvent>,
    /// The publisher's data-parallel rank, when given.
    pub data_parallel_rank: Option<u64>,
    /// The layout of its first event (`None` for a batch without events;
    /// a batch may mix layouts, as a fleet in the middle of an upgrade may).
    pub layout: Option<Layout>,
}

/// A payload that is not a batch in either layout, with the byte offset
/// where reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    offset: usize,
    message: String,
}

impl DecodeError {
    /// The byte offset in the payload.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed event batch at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for DecodeError {}

/// Nesting deeper than this in a skipped value is refused (a hostile
/// payload must not exhaust the stack).
const MAX_DEPTH: usize = 32;

struct Reader<'a> {
    all: &'a [u8],
    rd: Bytes<'a>,
}

/// A field value as far as the events need: unsigned, nil, a string (its
/// text is not kept: `medium` and `lora_name` do not change the event), or
/// a list of unsigned integers.
#[derive(Debug)]
enum Value {
    Nil,
    Uint(u64),
    Str,
    Uints(Vec<u64>),
}

impl<'a> Reader<'a> {
    fn offset(&self) -> usize {
        self.all.len() - self.rd.remaining_slice().len()
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, DecodeError> {
        Err(DecodeError { offset: self.offset(), message: message.into() })
    }

    fn marker(&mut self) -> Result<Marker, DecodeError> {
        match decode::read_marker(&mut self.rd) {
            Ok(m) => Ok(m),
            Err(_) => self.err("unexpected end of payload"),
        }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let rest = self.rd.remaining_slice();
        if rest.len() < n {
            return self.err("unexpected end of payload");
        }
        let (head, tail) = rest.split_at(n);
        self.rd = Bytes::new(tail);
        Ok(head)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self.bytes(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// The length of an array or map whose marker is `m`, or `None`.
    fn len_of(&mut self, m: Marker) -> Result<Option<usize>, DecodeError> {
        Ok(Some(match m {
            Marker::FixArray(n) | Marker::FixMap(n) => n as usize,
            Marker::Array16 | Marker::Map16 => self.be(2)? as usize,
            Marker::Array32 | Marker::Map32 => self.be(4)? as usize,
            _ => return Ok(None),
        }))
    }

    fn uint_of(&mut self, m: Marker) -> Result<Option<u64>, DecodeError> {
        Ok(Some(match m {
            Marker::FixPos(v) => u64::from(v),
            Marker::U8 => self.be(1)?,
            Marker::U16 => self.be(2)?,
            Marker::U32 => self.be(4)?,
            Marker::U64 => self.be(8)?,
            // Signed encodings of non-negative values (some producers
            // write them so).
            Marker::I8 | Marker::I16 | Marker::I32 | Marker::I64 => {
                let n = match m {
                    Marker::I8 => 1,
                    Marker::I16 => 2,
                    Marker::I32 => 4,
                    _ => 8,
                };
                let v = self.be(n)?;
                let shift = 64 - 8 * n as u32;
                let signed = ((v << shift) as i64) >> shift;
                // A negative hash is its two's complement (Dynamo reads
                // signed hashes so too).
                signed as u64
            }
            _ => return Ok(None),
        }))
    }

    fn str_of(&mut self, m: Marker) -> Result<Option<String>, DecodeError> {
        let n = match m {
            Marker::FixStr(n) => n as usize,
            Marker::Str8 => self.be(1)? as usize,
            Marker::Str16 => self.be(2)? as usize,
            Marker::Str32 => self.be(4)? as usize,
            _ => return Ok(None),
        };
        let bytes = self.bytes(n)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(_) => self.err("a string is not UTF-8"),
        }
    }

    fn array_len(&mut self) -> Result<usize, DecodeError> {
        let m = self.marker()?;
        match (m, self.len_of(m)?) {
            (Marker::FixArray(_) | Marker::Array16 | Marker::Array32, Some(n)) => Ok(n),
            _ => self.err(format!("expected an array, found {m:?}")),
        }
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let m = self.marker()?;
        match self.str_of(m)? {
            Some(s) => Ok(s),
            None => self.err(format!("expected a string, found {m:?}")),
        }
    }

    fn value(&mut self) -> Result<Value, DecodeError> {
        let m = self.marker()?;
        if m == Marker::Null {
            return Ok(Value::Nil);
        }
        if let Some(v) = self.uint_of(m)? {
            return Ok(Value::Uint(v));
        }
        if self.str_of(m)?.is_some() {
            return Ok(Value::Str);
        }
        if let (Marker::FixArray(_) | Marker::Array16 | Marker::Array32, Some(n)) =
            (m, self.len_of(m)?)
        {
            // Each element takes at least one byte: a length past the
            // payload is refused before allocating.
            if n > self.rd.remaining_slice().len() {
                return self.err("an array is longer than the payload");
            }
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let m = self.marker()?;
                match self.uint_of(m)? {
                    Some(v) => out.push(v),
                    None => return self.err(format!("expected an integer, found {m:?}")),
                }
            }
            return Ok(Value::Uints(out));
        }
        self.err(format!("unexpected value {m:?}"))
    }

    /// Skips one value of any kind.
    fn skip(&mut self, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return self.err("values nested too deeply");
        }
        let m = self.marker()?;
        let skip_bytes = match m {
            Marker::Null | Marker::True | Marker::False | Marker::FixPos(_) | Marker::FixNeg(_) => {
                0
            }
            Marker::U8 | Marker::I8 => 1,
            Marker::U16 | Marker::I16 => 2,
            Marker::U32 | Marker::I32 | Marker::F32 => 4,
            Marker::U64 | Marker::I64 | Marker::F64 => 8,
            Marker::FixStr(n) => n as usize,
            Marker::Str8 | Marker::Bin8 => self.be(1)? as usize,
            Marker::Str16 | Marker::Bin16 => self.be(2)? as usize,
            Marker::Str32 | Marker::Bin32 => self.be(4)? as usize,
            Marker::FixExt1 => 2,
            Marker::FixExt2 => 3,
            Marker::FixExt4 => 5,
            Marker::FixExt8 => 9,
            Marker::FixExt16 => 17,
            Marker::Ext8 => self.be(1)? as usize + 1,
            Marker::Ext16 => self.be(2)? as usize + 1,
            Marker::Ext32 => self.be(4)? as usize + 1,
            Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => {
                let n = self.len_of(m)?.unwrap_or(0);
                for _ in 0..n {
                    self.skip(depth + 1)?;
                }
                0
            }
            Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => {
                let n = self.len_of(m)?.unwrap_or(0);
                for _ in 0..n {
                    self.skip(depth + 1)?;
                    self.skip(depth + 1)?;
                }
                0
            }
            Marker::Reserved => return self.err("reserved marker 0xc1"),
        };
        self.bytes(skip_bytes).map(|_| ())
    }
}

/// Reads a batch written by [`encode_batch`](crate::encode_batch) or by
/// vLLM, in either layout.
pub fn decode_batch(payload: &[u8]) -> Result<Batch, DecodeError> {
    let mut r = Reader { all: payload, rd: Bytes::new(payload) };
    let n = r.array_len()?;
    if n < 2 {
        return r.err(format!("a batch has at least 2 elements, found {n}"));
    }
    let ts = match decode::read_f64(&mut r.rd) {
        Ok(ts) => ts,
        Err(_) => return r.err("the timestamp is not a float64"),
    };
    let count = r.array_len()?;
    let mut batch = Batch { ts, events: Vec::new(), data_parallel_rank: None, layout: None };
    for _ in 0..count {
        let (event, layout) = read_event(&mut r)?;
        batch.layout = batch.layout.or(Some(layout));
        batch.events.push(event);
    }
    if n >= 3 {
        batch.data_parallel_rank = match r.value()? {
            Value::Uint(v) => Some(v),
            Value::Nil => None,
            other => return r.err(format!("bad data_parallel_rank {other:?}")),
        };
        for _ in 3..n {
            r.skip(0)?;
        }
    }
    if r.offset() != payload.len() {
        return r.err("trailing bytes after the batch");
    }
    Ok(batch)
}

/// The fields of each event kind, in declaration order after the tag.
const STORED: [&str; 7] = [
    "block_hashes",
    "parent_block_hash",
    "token_ids",
    "block_size",
    "lora_id",
    "medium",
    "lora_name",
];
const REMOVED: [&str; 2] = ["block_hashes", "medium"];

fn read_event(r: &mut Reader<'_>) -> Result<(CacheEvent, Layout), DecodeError> {
    let m = r.marker()?;
    let (layout, n) = match (m, r.len_of(m)?) {
        (Marker::FixMap(_) | Marker::Map16 | Marker::Map32, Some(n)) => (Layout::Map, n),
        (Marker::FixArray(_) | Marker::Array16 | Marker::Array32, Some(n)) => (Layout::Array, n),
        _ => return r.err(format!("an event is a map or an array, found {m:?}")),
    };
    if n == 0 {
        return r.err("an event without a tag");
    }
    if layout == Layout::Map && r.string()? != "type" {
        return r.err("an event map must start with its \"type\"");
    }
    let tag = r.string()?;
    let names: &[&str] = match tag.as_str() {
        "BlockStored" => &STORED,
        "BlockRemoved" => &REMOVED,
        "AllBlocksCleared" => &[],
        _ => return r.err(format!("unknown event type {tag:?}")),
    };
    let mut fields: Vec<Option<Value>> = names.iter().map(|_| None).collect();
    for i in 1..n {
        let slot = match layout {
            Layout::Map => {
                let k = r.string()?;
                names.iter().position(|&name| name == k)
            }
            Layout::Array => (i - 1 < names.len()).then_some(i - 1),
        };
        match slot {
            Some(s) => fields[s] = Some(r.value()?),
            None => r.skip(0)?,
        }
    }
    let mut take = |i: usize| fields[i].take().unwrap_or(Value::Nil);
    let uints = |v: Value, what: &str, r: &Reader<'_>| match v {
        Value::Uints(v) => Ok(v),
        other => r.err(format!("{what} must be a list of integers, found {other:?}")),
    };
    let opt = |v: Value, what: &str, r: &Reader<'_>| match v {
        Value::Uint(v) => Ok(Some(v)),
        Value::Nil => Ok(None),
        other => r.err(format!("{what} must be an integer or nil, found {other:?}")),
    };
    let event = match tag.as_str() {
        "BlockStored" => {
            let block_hashes = uints(take(0), "block_hashes", r)?;
            let parent_block_hash = opt(take(1), "parent_block_hash", r)?;
            let tokens = uints(take(2), "token_ids", r)?;
            let Some(block_size) = opt(take(3), "block_size", r)? else {
                return r.err("block_size is missing");
            };
            let namespace = Namespace(opt(take(4), "lora_id", r)?.unwrap_or(0));
            let mut token_ids = Vec::with_capacity(tokens.len());
            for t in tokens {
                match u32::try_from(t) {
                    Ok(t) => token_ids.push(t),
                    Err(_) => return r.err(format!("token id {t} exceeds 32 bits")),
                }
            }
            CacheEvent::BlockStored {
                block_hashes,
                parent_block_hash,
                token_ids,
                block_size: block_size as usize,
                namespace,
            }
        }
        "BlockRemoved" => {
            CacheEvent::BlockRemoved { block_hashes: uints(take(0), "block_hashes", r)? }
        }
        _ => CacheEvent::AllBlocksCleared,
    };
    Ok((event, layout))
}
