//! The ZeroMQ transport: a PUB socket sending vLLM's three-frame messages
//! and a ROUTER socket answering replay requests from a bounded buffer.
//!
//! The sockets live on one I/O thread (libzmq sockets are not thread-safe).
//! [`Publisher::publish_events`] hands the events themselves over a bounded
//! channel and the I/O thread encodes them (as vLLM's publisher thread
//! does), so the engine's thread pays only the hand-off;
//! [`Publisher::publish`] encodes on the caller's thread instead. Either
//! way the batch is numbered in order; the I/O thread sends each
//! message as `[topic, sequence as 8-byte big-endian, payload]`, keeps it in
//! the replay buffer, and between messages answers replay requests: a
//! request `[identity, "", start as 8-byte big-endian]` (what a REQ socket,
//! or a DEALER sending an empty delimiter first, produces) is answered with
//! `[identity, "", seq, payload]` for every buffered batch with `seq >=
//! start`, then the end marker `[identity, "", -1 as 8-byte big-endian, ""]`.
//! This is vLLM's `ZmqEventPublisher` protocol.
//!
//! [`Publisher::close`] sends everything still queued, keeps answering
//! replay requests for the configured hold time, and then closes the
//! sockets with a linger, so that every message reaches the subscribers
//! connected by then (or the linger expires).

use std::collections::VecDeque;
use std::fmt;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use radix_cache::CacheEvent;

use crate::wire::{WireConfig, encode_batch};

/// The replay end marker's sequence frame: -1 as a signed 64-bit big-endian
/// integer.
pub const END_SEQ: [u8; 8] = [0xff; 8];

/// Where and how to publish: `PublisherConfig::new(endpoint)`, then the
/// `with_*` setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublisherConfig {
    /// The PUB socket's endpoint, bound (`tcp://127.0.0.1:5557`; port 0
    /// picks a free port, see [`Publisher::endpoint`]).
    pub endpoint: String,
    /// The ROUTER endpoint of the replay service, bound; `None` for none.
    pub replay_endpoint: Option<String>,
    /// The topic frame of every message (llm-d reads `kv@<pod>@<model>`).
    pub topic: String,
    /// Batches kept for replay (vLLM's `buffer_steps`, default 10,000).
    pub replay_steps: usize,
    /// Bytes of payload kept for replay (default 256 MiB): the oldest
    /// batches go first when either bound is passed.
    pub replay_bytes: usize,
    /// Messages queued per subscriber before PUB drops them for it
    /// (ZeroMQ's high-water mark, vLLM's `hwm`, default 100,000).
    pub high_water_mark: i32,
    /// Batches waiting for the I/O thread before `publish` blocks
    /// (default 1,024).
    pub queue: usize,
    /// How long closing waits for queued messages to reach subscribers
    /// (default 30 s).
    pub linger: Duration,
    /// How long closing keeps answering replay requests after the last
    /// message (default 0).
    pub hold: Duration,
    /// How batches are encoded.
    pub wire: WireConfig,
}

impl PublisherConfig {
    /// The defaults, publishing on `endpoint` without a replay service.
    pub fn new(endpoint: impl Into<String>) -> PublisherConfig {
        PublisherConfig {
            endpoint: endpoint.into(),
            replay_endpoint: None,
            topic: String::new(),
            replay_steps: 10_000,
            replay_bytes: 256 << 20,
            high_water_mark: 100_000,
            queue: 1024,
            linger: Duration::from_secs(30),
            hold: Duration::ZERO,
            wire: WireConfig::default(),
        }
    }

    /// Sets [`replay_endpoint`](Self::replay_endpoint).
    pub fn with_replay_endpoint(mut self, endpoint: Option<String>) -> PublisherConfig {
        self.replay_endpoint = endpoint;
        self
    }

    /// Sets [`topic`](Self::topic).
    pub fn with_topic(mut self, topic: impl Into<String>) -> PublisherConfig {
        self.topic = topic.into();
        self
    }

    /// Sets [`replay_steps`](Self::replay_steps).
    pub fn with_replay_steps(mut self, steps: usize) -> PublisherConfig {
        self.replay_steps = steps;
        self
    }

    /// Sets [`replay_bytes`](Self::replay_bytes).
    pub fn with_replay_bytes(mut self, bytes: usize) -> PublisherConfig {
        self.replay_bytes = bytes;
        self
    }

    /// Sets [`high_water_mark`](Self::high_water_mark).
    pub fn with_high_water_mark(mut self, messages: i32) -> PublisherConfig {
        self.high_water_mark = messages;
        self
    }

    /// Sets [`queue`](Self::queue).
    pub fn with_queue(mut self, batches: usize) -> PublisherConfig {
        self.queue = batches;
        self
    }

    /// Sets [`linger`](Self::linger).
    pub fn with_linger(mut self, linger: Duration) -> PublisherConfig {
        self.linger = linger;
        self
    }

    /// Sets [`hold`](Self::hold).
    pub fn with_hold(mut self, hold: Duration) -> PublisherConfig {
        self.hold = hold;
        self
    }

    /// Sets [`wire`](Self::wire).
    pub fn with_wire(mut self, wire: WireConfig) -> PublisherConfig {
        self.wire = wire;
        self
    }
}

/// A ZeroMQ failure, with the operation and endpoint it concerned.
#[derive(Debug)]
#[non_exhaustive]
pub enum PublishError {
    /// A socket operation failed.
    Zmq {
        /// What was being done (`bind`, `send`, ...).
        operation: &'static str,
        /// The endpoint concerned.
        endpoint: String,
        /// libzmq's error.
        source: zmq::Error,
    },
    /// The I/O thread is gone (it failed to send; [`Publisher::close`]
    /// reports why).
    Closed,
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Zmq { operation, endpoint, source } => {
                write!(f, "ZeroMQ {operation} on `{endpoint}` failed: {source}")
            }
            PublishError::Closed => write!(f, "the publisher's I/O thread has stopped"),
        }
    }
}

impl std::error::Error for PublishError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PublishError::Zmq { source, .. } => Some(source),
            PublishError::Closed => None,
        }
    }
}

/// What a publisher did, returned by [`Publisher::close`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PublishStats {
    /// Batches published.
    pub batches: u64,
    /// Payload bytes published.
    pub bytes: u64,
    /// Replay requests answered.
    pub replays: u64,
    /// Malformed replay requests ignored.
    pub bad_requests: u64,
}

enum Job {
    Send(u64, Vec<u8>),
    Encode(u64, f64, Vec<CacheEvent>),
    Close,
}

/// A running publisher; see the module docs. Dropping it closes it like
/// [`close`](Self::close), ignoring errors.
#[derive(Debug)]
pub struct Publisher {
    wire: WireConfig,
    endpoint: String,
    replay_endpoint: Option<String>,
    next_seq: u64,
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<PublishStats, PublishError>>>,
}

fn zmq_err(operation: &'static str, endpoint: &str) -> impl FnOnce(zmq::Error) -> PublishError {
    let endpoint = endpoint.to_owned();
    move |source| PublishError::Zmq { operation, endpoint, source }
}

/// The endpoint a socket is bound to (with the port a `:0` bind chose).
fn bound_endpoint(socket: &zmq::Socket, asked: &str) -> Result<String, PublishError> {
    match socket.get_last_endpoint().map_err(zmq_err("getsockopt", asked))? {
        Ok(s) => Ok(s),
        Err(_) => Ok(asked.to_owned()),
    }
}

impl Publisher {
    /// Binds the sockets and starts the I/O thread.
    pub fn bind(config: PublisherConfig) -> Result<Publisher, PublishError> {
        let ctx = zmq::Context::new();
        let linger = i32::try_from(config.linger.as_millis()).unwrap_or(i32::MAX);
        let ep = config.endpoint.as_str();
        let pub_socket = ctx.socket(zmq::PUB).map_err(zmq_err("socket", ep))?;
        pub_socket.set_sndhwm(config.high_water_mark).map_err(zmq_err("set_sndhwm", ep))?;
        pub_socket.set_linger(linger).map_err(zmq_err("set_linger", ep))?;
        pub_socket.bind(ep).map_err(zmq_err("bind", ep))?;
        let endpoint = bound_endpoint(&pub_socket, ep)?;
        let (replay, replay_endpoint) = match &config.replay_endpoint {
            Some(rep) => {
                let s = ctx.socket(zmq::ROUTER).map_err(zmq_err("socket", rep))?;
                // A replay answers up to the whole buffer at once.
                let hwm = i32::try_from(config.replay_steps.saturating_add(2)).unwrap_or(i32::MAX);
                s.set_sndhwm(hwm).map_err(zmq_err("set_sndhwm", rep))?;
                s.set_linger(0).map_err(zmq_err("set_linger", rep))?;
                s.bind(rep).map_err(zmq_err("bind", rep))?;
                let bound = bound_endpoint(&s, rep)?;
                (Some(s), Some(bound))
            }
            None => (None, None),
        };
        let (tx, rx) = sync_channel(config.queue.max(1));
        let io = Io {
            wire: config.wire.clone(),
            _ctx: ctx,
            pub_socket,
            replay,
            endpoint: endpoint.clone(),
            topic: config.topic.into_bytes(),
            buffer: VecDeque::new(),
            buffer_bytes: 0,
            replay_steps: config.replay_steps,
            replay_bytes: config.replay_bytes,
            hold: config.hold,
            stats: PublishStats::default(),
        };
        let thread = std::thread::Builder::new()
            .name("kv-events-publisher".to_owned())
            .spawn(move || io.run(rx))
            .map_err(|_| PublishError::Closed)?;
        Ok(Publisher {
            wire: config.wire,
            endpoint,
            replay_endpoint,
            next_seq: 0,
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// The PUB endpoint as bound (the chosen port of a `:0` endpoint).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The replay endpoint as bound, if there is a replay service.
    pub fn replay_endpoint(&self) -> Option<&str> {
        self.replay_endpoint.as_deref()
    }

    /// The sequence number the next batch gets (batches are numbered from
    /// 0, as vLLM numbers them).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Encodes `events` as one batch stamped `ts` and queues it; returns its
    /// sequence number. Blocks while the queue is full.
    pub fn publish(&mut self, ts: f64, events: &[CacheEvent]) -> Result<u64, PublishError> {
        let mut payload = Vec::new();
        encode_batch(&self.wire, ts, events, &mut payload);
        self.publish_encoded(payload)
    }

    /// Hands `events` to the I/O thread, which encodes them as one batch
    /// stamped `ts` and sends it; returns its sequence number. The caller's
    /// cost is a channel send; it blocks while the queue is full.
    pub fn publish_events(
        &mut self,
        ts: f64,
        events: Vec<CacheEvent>,
    ) -> Result<u64, PublishError> {
        let seq = self.next_seq;
        let tx = self.tx.as_ref().ok_or(PublishError::Closed)?;
        tx.send(Job::Encode(seq, ts, events)).map_err(|_| PublishError::Closed)?;
        self.next_seq += 1;
        Ok(seq)
    }

    /// Queues a payload encoded by the caller (with
    /// [`encode_batch`]); returns its sequence number.
    pub fn publish_encoded(&mut self, payload: Vec<u8>) -> Result<u64, PublishError> {
        let seq = self.next_seq;
        let tx = self.tx.as_ref().ok_or(PublishError::Closed)?;
        tx.send(Job::Send(seq, payload)).map_err(|_| PublishError::Closed)?;
        self.next_seq += 1;
        Ok(seq)
    }

    /// Sends what is queued, answers replay requests for the hold time,
    /// closes the sockets (waiting up to the linger for delivery) and
    /// returns what was done, or the first error of the I/O thread.
    pub fn close(mut self) -> Result<PublishStats, PublishError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<PublishStats, PublishError> {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Job::Close);
        }
        match self.thread.take() {
            Some(t) => t.join().unwrap_or(Err(PublishError::Closed)),
            None => Err(PublishError::Closed),
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.shutdown();
        }
    }
}

/// The I/O thread's state: the sockets and the replay buffer.
struct Io {
    /// How [`Job::Encode`] batches are written.
    wire: WireConfig,
    /// Dropped last: terminating the context waits for the linger.
    _ctx: zmq::Context,
    pub_socket: zmq::Socket,
    replay: Option<zmq::Socket>,
    endpoint: String,
    topic: Vec<u8>,
    /// `(seq, payload)`, oldest first; at most `replay_steps` entries and
    /// `replay_bytes` bytes of payload.
    buffer: VecDeque<(u64, Vec<u8>)>,
    buffer_bytes: usize,
    replay_steps: usize,
    replay_bytes: usize,
    hold: Duration,
    stats: PublishStats,
}

impl Io {
    fn run(mut self, rx: Receiver<Job>) -> Result<PublishStats, PublishError> {
        // With a replay service, wake up every millisecond to answer it.
        let tick = Duration::from_millis(1);
        loop {
            let job = if self.replay.is_some() {
                match rx.recv_timeout(tick) {
                    Ok(job) => Some(job),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => Some(Job::Close),
                }
            } else {
                Some(rx.recv().unwrap_or(Job::Close))
            };
            match job {
                Some(Job::Send(seq, payload)) => self.send(seq, payload)?,
                Some(Job::Encode(seq, ts, events)) => {
                    let mut payload = Vec::new();
                    encode_batch(&self.wire, ts, &events, &mut payload);
                    self.send(seq, payload)?;
                }
                Some(Job::Close) => break,
                None => {}
            }
            self.serve_replay()?;
        }
        let until = Instant::now() + self.hold;
        while self.replay.is_some() && Instant::now() < until {
            std::thread::sleep(tick);
            self.serve_replay()?;
        }
        // Dropping the sockets and then the context flushes within the
        // linger.
        drop(self.replay.take());
        Ok(self.stats)
    }

    fn send(&mut self, seq: u64, payload: Vec<u8>) -> Result<(), PublishError> {
        let err = zmq_err("send", &self.endpoint);
        let s = &self.pub_socket;
        s.send(&self.topic[..], zmq::SNDMORE).map_err(zmq_err("send", &self.endpoint))?;
        s.send(&seq.to_be_bytes()[..], zmq::SNDMORE).map_err(zmq_err("send", &self.endpoint))?;
        s.send(&payload[..], 0).map_err(err)?;
        self.stats.batches += 1;
        self.stats.bytes += payload.len() as u64;
        if self.replay.is_some() && self.replay_steps > 0 {
            self.buffer_bytes += payload.len();
            self.buffer.push_back((seq, payload));
            while self.buffer.len() > self.replay_steps
                || (self.buffer_bytes > self.replay_bytes && self.buffer.len() > 1)
            {
                if let Some((_, old)) = self.buffer.pop_front() {
                    self.buffer_bytes -= old.len();
                }
            }
        }
        Ok(())
    }

    /// Answers every replay request waiting on the ROUTER socket.
    fn serve_replay(&mut self) -> Result<(), PublishError> {
        let Some(router) = &self.replay else { return Ok(()) };
        loop {
            let frames = match router.recv_multipart(zmq::DONTWAIT) {
                Ok(f) => f,
                Err(zmq::Error::EAGAIN) => return Ok(()),
                Err(e) => return Err(zmq_err("recv", "replay")(e)),
            };
            let [identity, delimiter, start] = frames.as_slice() else {
                self.stats.bad_requests += 1;
                continue;
            };
            let Ok(start) = <[u8; 8]>::try_from(start.as_slice()) else {
                self.stats.bad_requests += 1;
                continue;
            };
            let start = u64::from_be_bytes(start);
            let _ = delimiter;
            // A peer that left mid-replay only loses its own answers: ROUTER
            // drops messages to unknown identities.
            for (seq, payload) in self.buffer.iter().filter(|(seq, _)| *seq >= start) {
                let frames: [&[u8]; 4] = [identity, b"", &seq.to_be_bytes(), payload.as_slice()];
                router.send_multipart(frames, 0).map_err(zmq_err("send", "replay"))?;
            }
            let end: [&[u8]; 4] = [identity, b"", &END_SEQ, b""];
            router.send_multipart(end, 0).map_err(zmq_err("send", "replay"))?;
            self.stats.replays += 1;
        }
    }
}
