//! The publisher over loopback, read with a libzmq SUB and DEALER: three
//! frames, sequence numbers, replay with its end marker, topic filtering.

use std::time::Duration;

use kv_events::{END_SEQ, Publisher, PublisherConfig, decode_batch};
use radix_cache::CacheEvent;

fn removed(h: u64) -> Vec<CacheEvent> {
    vec![CacheEvent::BlockRemoved { block_hashes: vec![h] }]
}

/// Receives one multipart message within 10 s.
fn recv(socket: &zmq::Socket) -> Vec<Vec<u8>> {
    assert!(socket.poll(zmq::POLLIN, 10_000).unwrap() > 0, "nothing within 10 s");
    socket.recv_multipart(0).unwrap()
}

#[test]
fn publishes_three_frames_and_replays_from_any_sequence_number() {
    let config = PublisherConfig::new("tcp://127.0.0.1:0")
        .with_replay_endpoint(Some("tcp://127.0.0.1:0".into()))
        .with_topic("kv@pod-1@model")
        .with_replay_steps(3)
        .with_linger(Duration::from_secs(5));
    let mut publisher = Publisher::bind(config).unwrap();
    assert!(publisher.endpoint().starts_with("tcp://127.0.0.1:"));
    assert_ne!(publisher.endpoint(), "tcp://127.0.0.1:0");
    let ctx = zmq::Context::new();
    let dealer = ctx.socket(zmq::DEALER).unwrap();
    dealer.connect(publisher.replay_endpoint().unwrap()).unwrap();
    // Encoded on this thread or on the I/O thread: one numbering, one stream.
    for h in 0..5 {
        let seq = if h % 2 == 0 {
            publisher.publish(h as f64, &removed(h)).unwrap()
        } else {
            publisher.publish_events(h as f64, removed(h)).unwrap()
        };
        assert_eq!(seq, h);
    }
    // The buffer keeps the last three batches: replay from 1 gives 2, 3, 4.
    dealer.send_multipart([&b""[..], &1u64.to_be_bytes()], 0).unwrap();
    let mut seqs = Vec::new();
    loop {
        let frames = recv(&dealer);
        assert_eq!(frames.len(), 3, "{frames:?}");
        assert!(frames[0].is_empty());
        if frames[1] == END_SEQ {
            assert!(frames[2].is_empty());
            break;
        }
        let seq = u64::from_be_bytes(frames[1].as_slice().try_into().unwrap());
        let batch = decode_batch(&frames[2]).unwrap();
        assert_eq!(batch.events, removed(seq));
        seqs.push(seq);
    }
    assert_eq!(seqs, vec![2, 3, 4]);
    // A malformed request is ignored, and the service goes on.
    dealer.send_multipart([&b""[..], b"short"], 0).unwrap();
    dealer.send_multipart([&b""[..], &9u64.to_be_bytes()], 0).unwrap();
    assert_eq!(recv(&dealer)[1], END_SEQ);
    // Live: a subscriber on the topic's prefix gets the three frames.
    let sub = ctx.socket(zmq::SUB).unwrap();
    sub.set_subscribe(b"kv@").unwrap();
    sub.connect(publisher.endpoint()).unwrap();
    let other = ctx.socket(zmq::SUB).unwrap();
    other.set_subscribe(b"other").unwrap();
    other.connect(publisher.endpoint()).unwrap();
    // A subscription reaches the publisher asynchronously: publish until
    // one message arrives, then check the rest follow in order.
    let first = loop {
        let seq = publisher.publish(0.0, &removed(7)).unwrap();
        if sub.poll(zmq::POLLIN, 20).unwrap() > 0 {
            break seq;
        }
        assert!(seq < 2000, "the subscription never took effect");
    };
    let frames = sub.recv_multipart(0).unwrap();
    assert_eq!(frames[0], b"kv@pod-1@model");
    let seen = u64::from_be_bytes(frames[1].as_slice().try_into().unwrap());
    assert!(seen <= first);
    let last = publisher.publish(0.0, &removed(8)).unwrap();
    let mut next = seen + 1;
    while next <= last {
        let frames = recv(&sub);
        assert_eq!(frames.len(), 3);
        assert_eq!(u64::from_be_bytes(frames[1].as_slice().try_into().unwrap()), next);
        next += 1;
    }
    let stats = publisher.close().unwrap();
    assert_eq!(stats.batches, last + 1);
    assert_eq!((stats.replays, stats.bad_requests), (2, 1));
    assert_eq!(other.poll(zmq::POLLIN, 0).unwrap(), 0, "topic filtering failed");
}

#[test]
fn a_taken_endpoint_is_an_error_naming_it() {
    let first = Publisher::bind(PublisherConfig::new("tcp://127.0.0.1:0")).unwrap();
    let taken = first.endpoint().to_owned();
    let e = Publisher::bind(PublisherConfig::new(taken.clone())).unwrap_err();
    assert!(e.to_string().contains(&taken), "{e}");
    first.close().unwrap();
}
