//! sched tests.
