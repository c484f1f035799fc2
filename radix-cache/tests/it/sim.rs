//! sim tests.
