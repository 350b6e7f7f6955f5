//! Real redis-server processes for the end-to-end tests: started on free loopback ports,
//! killed when dropped (also when a test fails and unwinds). The harness is the Redis crate's
//! own (`crates/bloomkit-redis/tests/common/server.rs`), included by path.

#![allow(dead_code)]

#[path = "../../../bloomkit-redis/tests/common/server.rs"]
mod server;

#[allow(unused_imports)] // each test file uses some of them
pub use server::{command, Cluster, Server};
