//! unit tests.
