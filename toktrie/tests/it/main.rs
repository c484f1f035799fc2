//! Integration tests of `toktrie`: the walk against a per-token brute force
//! (random vocabularies and DFAs, and o200k with real DFAs), the builder's
//! errors, and the thread-safety of the public types.

// The tests name the crate as the rest of the workspace does (`toktrie::`).
extern crate structgen_toktrie as toktrie;

mod bitmask;
mod builder;
mod dfa;
mod o200k;
mod props;
mod split;

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<toktrie::TokTrie>();
    check::<toktrie::TokenSet>();
    check::<toktrie::TokenId>();
    check::<toktrie::TokTrieBuilder>();
    check::<toktrie::BuildError>();
    check::<toktrie::NoTokenAt>();
    check::<toktrie::Iter<'static>>();
    check::<toktrie::Split<u32>>();
    check::<toktrie::SplitLimits>();
}
