//! The shipped task file (`tasks/maskbench-dev.jsonl`, made by `cargo
//! xtask codegen tasks`): at least 100 tasks, each with a prompt and a
//! schema that both structgen and the independent validator compile, and
//! a valid instance exists for each (the MaskBench test it was chosen by).

use generate::Format;
use serde_json::Value;

#[test]
fn every_task_compiles_for_both_checkers() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tasks/maskbench-dev.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let task: Value = serde_json::from_str(line).unwrap();
        let id = task["id"].as_str().unwrap();
        assert!(task["prompt"].as_str().is_some_and(|p| p.len() > 40), "{id}: prompt");
        let schema = &task["schema"];
        Format::JsonSchema(schema.clone())
            .compile()
            .unwrap_or_else(|e| panic!("{id}: structgen cannot compile the schema: {e}"));
        json_validator::options()
            .should_validate_formats(true)
            .build(schema)
            .unwrap_or_else(|e| panic!("{id}: the validator cannot compile the schema: {e}"));
        n += 1;
    }
    assert!(n >= 100, "{n} tasks");
}
