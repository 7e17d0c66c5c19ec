//! The CLI and the library as users meet them, in one test executable (each module was a test
//! crate of its own; one executable links the dependencies once). `tests/large_trace.rs`
//! stays apart: it measures its own process's peak memory.

mod below_floor;
mod changing_steps;
mod cli;
mod common;
mod grid_table;
mod prior_streams;
mod readme_pastes;
mod real_gemms;
mod replay;
mod replay_gpu;
mod spin_fit;
mod stored_claims;
mod summary_model;
mod summary_props;
mod traces;
mod waits;
