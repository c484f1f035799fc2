//! mooncake tests.
