//! The encoding: golden bytes for both layouts, and round trips.

use kv_events::{Layout, WireConfig, decode_batch, encode_batch};
use proptest::prelude::*;
use radix_cache::{CacheEvent, Namespace};

fn stored(ns: u64) -> CacheEvent {
    CacheEvent::BlockStored {
        block_hashes: vec![1],
        parent_block_hash: None,
        token_ids: vec![5, 6],
        block_size: 2,
        namespace: Namespace(ns),
    }
}

fn s(text: &str) -> Vec<u8> {
    let mut out = vec![0xa0 | text.len() as u8];
    out.extend_from_slice(text.as_bytes());
    out
}

/// vLLM's map layout, written out by hand from msgpack's specification:
/// the 3-array batch, a float64 stamp, a fixmap event with "type" first.
#[test]
fn map_layout_is_byte_exact() {
    let mut got = Vec::new();
    encode_batch(&WireConfig::default(), 1.5, &[stored(0)], &mut got);
    let mut want = vec![0x93, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x91, 0x88];
    for part in [
        s("type"),
        s("BlockStored"),
        s("block_hashes"),
        vec![0x91, 0x01],
        s("parent_block_hash"),
        vec![0xc0],
        s("token_ids"),
        vec![0x92, 0x05, 0x06],
        s("block_size"),
        vec![0x02],
        s("lora_id"),
        vec![0xc0],
        s("medium"),
        s("GPU"),
        s("lora_name"),
        vec![0xc0],
        vec![0x00],
    ] {
        want.extend(part);
    }
    assert_eq!(got, want);
}

#[test]
fn array_layout_is_byte_exact() {
    let config = WireConfig::default()
        .with_layout(Layout::Array)
        .with_data_parallel_rank(None)
        .with_lora_name(Namespace(7), "ad");
    let mut got = Vec::new();
    let removed = CacheEvent::BlockRemoved { block_hashes: vec![300] };
    encode_batch(&config, 1.5, &[stored(7), removed, CacheEvent::AllBlocksCleared], &mut got);
    let mut want = vec![0x93, 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x93, 0x98];
    for part in [
        s("BlockStored"),
        vec![0x91, 0x01, 0xc0, 0x92, 0x05, 0x06, 0x02, 0x07],
        s("GPU"),
        s("ad"),
        vec![0x93],
        s("BlockRemoved"),
        vec![0x91, 0xcd, 0x01, 0x2c],
        s("GPU"),
        vec![0x91],
        s("AllBlocksCleared"),
        vec![0xc0],
    ] {
        want.extend(part);
    }
    assert_eq!(got, want);
}

fn event() -> impl Strategy<Value = CacheEvent> {
    prop_oneof![
        (
            prop::collection::vec(any::<u64>(), 1..4),
            prop::option::of(any::<u64>()),
            prop::collection::vec(any::<u32>(), 0..40),
            1usize..64,
            0u64..3,
        )
            .prop_map(|(h, p, t, b, ns)| CacheEvent::BlockStored {
                block_hashes: h,
                parent_block_hash: p,
                token_ids: t,
                block_size: b,
                namespace: Namespace(ns),
            }),
        prop::collection::vec(any::<u64>(), 0..70)
            .prop_map(|h| CacheEvent::BlockRemoved { block_hashes: h }),
        Just(CacheEvent::AllBlocksCleared),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(22),
        ..ProptestConfig::default()
    })]

    #[test]
    fn both_layouts_round_trip(
        events in prop::collection::vec(event(), 0..20),
        array in any::<bool>(),
        ts in -1e12f64..1e12,
        rank in prop::option::of(0u32..9),
    ) {
        let layout = if array { Layout::Array } else { Layout::Map };
        let config = WireConfig::default()
            .with_layout(layout)
            .with_data_parallel_rank(rank)
            .with_lora_name(Namespace(1), "one");
        let mut out = vec![9, 9];
        encode_batch(&config, ts, &events, &mut out);
        prop_assert_eq!(&out[..2], &[9, 9]);
        let batch = decode_batch(&out[2..]).unwrap();
        prop_assert_eq!(batch.ts, ts);
        prop_assert_eq!(batch.data_parallel_rank, rank.map(u64::from));
        prop_assert_eq!(batch.layout, (!events.is_empty()).then_some(layout));
        prop_assert_eq!(batch.events, events);
        // Every strict prefix is an error, never a panic.
        for cut in [0, 1, out.len() / 2, out.len() - 3] {
            prop_assert!(decode_batch(&out[2..2 + cut]).is_err());
        }
    }
}

#[test]
fn unknown_fields_are_skipped_and_garbage_is_an_error() {
    // A newer producer's extra map keys and trailing array elements.
    let mut payload = vec![0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x92, 0x83];
    payload.extend(s("type"));
    payload.extend(s("BlockRemoved"));
    payload.extend(s("group_idx"));
    payload.push(0x00);
    payload.extend(s("block_hashes"));
    payload.extend([0x91, 0x05]);
    payload.push(0x94);
    payload.extend(s("BlockRemoved"));
    payload.extend([0x91, 0x06, 0xc0, 0x81, 0xa1, b'k', 0x90]);
    payload.push(0xc0);
    let batch = decode_batch(&payload).unwrap();
    assert_eq!(
        batch.events,
        vec![
            CacheEvent::BlockRemoved { block_hashes: vec![5] },
            CacheEvent::BlockRemoved { block_hashes: vec![6] },
        ]
    );
    assert_eq!(batch.layout, Some(Layout::Map));
    let e = decode_batch(&[0x93, 0xcb]).unwrap_err();
    assert!(e.to_string().contains("byte"), "{e}");
    assert!(decode_batch(&[0x91, 0xc0]).is_err());
    // Deep nesting in a skipped value is refused, not a stack overflow.
    let mut deep = vec![0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x91, 0x94];
    deep.extend(s("BlockRemoved"));
    deep.extend([0x91, 0x05, 0xc0]);
    deep.extend(std::iter::repeat_n(0x91, 100_000));
    assert!(decode_batch(&deep).is_err());
}
