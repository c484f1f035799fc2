//! End-to-end tests of `structgen-generate` with the SmolLM2 GGUF (`cargo
//! xtask model`; a visible skip without it): short generations under a
//! JSON Schema, a Lark grammar, a regex and a tool-call request, each
//! output checked by something that is not structgen (the crates.io
//! `jsonschema` validator, `fancy-regex`, `serde_json`).

// The tests name the crate as the rest of the workspace does.
extern crate structgen_generate as generate;

mod e2e;
mod tasks;
