//! Resource limits from the command line: `--limit SECTION.NAME=N` flags
//! and `--limits FILE.json` files, mapped onto the libraries' limit
//! structs (the same fields an engine sets through
//! [`structgen::CompileOptions`] and [`jsonschema::Options::limits`]).
//!
//! | section | struct | examples |
//! |---|---|---|
//! | `front_end` | [`grammar::Limits`] (Lark, GBNF, regex sources) | `max_source_bytes`, `max_nesting`, `max_repeat` |
//! | `parser` | [`earley::Limits`] (the compiled grammar, every matcher) | `max_rules`, `max_items_per_row`, `max_items_per_step` |
//! | `lexer` | [`lexer::LexerLimits`] | `max_states`, `max_exprs`, `step_fuel`, `relevance_fuel`, `build_fuel` |
//! | `schema` | [`jsonschema::Limits`] | `max_nodes`, `max_copied_nodes`, `max_depth`, `regex_fuel`, `max_schema_bytes`, `max_negated_members` |
//!
//! `structgen limits` prints every key with its default; a test checks that
//! every scalar field of the four structs has its key. A limits file is a
//! JSON object, flat (`{"lexer.max_states": 250000}`) or by section
//! (`{"lexer": {"max_states": 250000}}`); flags apply after the file. An
//! unknown key, a value that is not a non-negative integer, or one out of
//! the field's range is an error naming the key.

use std::fmt;

use serde_json::Value;

/// The limits a command compiles with: the grammar configuration (front
/// end, parser and lexer limits) and the JSON Schema options (schema
/// limits).
#[derive(Debug)]
pub struct Targets<'a> {
    /// Front-end, parser and lexer limits.
    pub grammar: &'a mut grammar::Config,
    /// Schema limits (of `--schema`, `.json` grammars and `%json`).
    pub schemas: Vec<&'a mut jsonschema::Options>,
}

/// A bad limit setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    /// The key (`lexer.max_states`), or the file.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limit `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for LimitError {}

fn bad(key: &str, message: impl Into<String>) -> LimitError {
    LimitError { key: key.to_owned(), message: message.into() }
}

/// Parses `SECTION.NAME=N` (digits, `_` allowed as a separator).
///
/// # Errors
/// No `=`, or a value that is not a non-negative integer.
pub fn parse_assignment(s: &str) -> Result<(String, u64), LimitError> {
    let Some((key, value)) = s.split_once('=') else {
        return Err(bad(s, "expected SECTION.NAME=N (see `structgen limits`)"));
    };
    let key = key.trim();
    let digits: String = value.trim().chars().filter(|&c| c != '_').collect();
    let n = digits
        .parse::<u64>()
        .map_err(|_| bad(key, format!("`{value}` is not a non-negative integer")))?;
    Ok((key.to_owned(), n))
}

/// The `(key, value)` settings of a limits file's JSON text.
///
/// # Errors
/// Not a JSON object of integers (flat or by section).
pub fn parse_file(text: &str, name: &str) -> Result<Vec<(String, u64)>, LimitError> {
    let v: Value = serde_json::from_str(text).map_err(|e| bad(name, format!("not JSON: {e}")))?;
    let Value::Object(map) = v else {
        return Err(bad(name, "a limits file is a JSON object"));
    };
    let mut out = Vec::new();
    let number = |key: &str, v: &Value| {
        v.as_u64().ok_or_else(|| bad(key, format!("`{v}` is not a non-negative integer")))
    };
    for (k, v) in &map {
        match v {
            Value::Object(inner) => {
                for (name, v) in inner {
                    let key = format!("{k}.{name}");
                    out.push((key.clone(), number(&key, v)?));
                }
            }
            _ => out.push((k.clone(), number(k, v)?)),
        }
    }
    Ok(out)
}

/// Converts for a `usize` field.
fn size(key: &str, n: u64) -> Result<usize, LimitError> {
    usize::try_from(n).map_err(|_| bad(key, format!("{n} is out of range")))
}

/// Converts for a `u32` field.
fn small(key: &str, n: u64) -> Result<u32, LimitError> {
    u32::try_from(n).map_err(|_| bad(key, format!("{n} is out of range (at most {})", u32::MAX)))
}

impl Targets<'_> {
    /// Sets one limit.
    ///
    /// # Errors
    /// An unknown key or a value out of the field's range.
    pub fn set(&mut self, key: &str, n: u64) -> Result<(), LimitError> {
        let (section, name) = key.split_once('.').unwrap_or(("", key));
        let fe = &mut self.grammar.limits;
        let p = &mut self.grammar.parser_limits;
        match (section, name) {
            ("front_end", "max_source_bytes") => fe.max_source_bytes = size(key, n)?,
            ("front_end", "max_nesting") => fe.max_nesting = size(key, n)?,
            ("front_end", "max_nodes") => fe.max_nodes = size(key, n)?,
            ("front_end", "max_repeat") => fe.max_repeat = small(key, n)?,
            ("front_end", "max_terminal_nodes") => fe.max_terminal_nodes = size(key, n)?,
            ("parser", "max_symbols") => p.max_symbols = size(key, n)?,
            ("parser", "max_rules") => p.max_rules = size(key, n)?,
            ("parser", "max_items_per_row") => p.max_items_per_row = size(key, n)?,
            ("parser", "max_items_per_step") => p.max_items_per_step = size(key, n)?,
            ("parser", "max_phrase_states") => p.max_phrase_states = size(key, n)?,
            ("parser", "max_search_bytes") => p.max_search_bytes = size(key, n)?,
            ("lexer", "max_states") => p.lexer.max_states = size(key, n)?,
            ("lexer", "max_exprs") => p.lexer.max_exprs = size(key, n)?,
            ("lexer", "relevance_fuel") => p.lexer.relevance_fuel = n,
            ("lexer", "build_fuel") => p.lexer.build_fuel = n,
            ("lexer", "step_fuel") => p.lexer.step_fuel = n,
            ("lexer", "max_repeat_width") => p.lexer.max_repeat_width = n,
            ("schema", field) => {
                for o in &mut self.schemas {
                    let l = &mut o.limits;
                    match field {
                        "max_nodes" => l.max_nodes = size(key, n)?,
                        "max_copied_nodes" => l.max_copied_nodes = size(key, n)?,
                        "max_depth" => l.max_depth = size(key, n)?,
                        "max_branches" => l.max_branches = size(key, n)?,
                        "max_nonterminals" => l.max_nonterminals = size(key, n)?,
                        "max_rules" => l.max_rules = size(key, n)?,
                        "regex_fuel" => l.regex_fuel = n,
                        "max_number_digits" => l.max_number_digits = size(key, n)?,
                        "max_schema_bytes" => l.max_schema_bytes = size(key, n)?,
                        "max_json_depth" => l.max_json_depth = size(key, n)?,
                        "max_string_regexes" => l.max_string_regexes = size(key, n)?,
                        "max_subschemas" => l.max_subschemas = size(key, n)?,
                        "max_enum_values" => l.max_enum_values = size(key, n)?,
                        "max_negated_members" => l.max_negated_members = size(key, n)?,
                        "max_documents" => l.max_documents = size(key, n)?,
                        _ => return Err(unknown(key)),
                    }
                }
                if self.schemas.is_empty() && !KEYS.contains(&key) {
                    return Err(unknown(key));
                }
            }
            _ => return Err(unknown(key)),
        }
        Ok(())
    }

    /// Sets every limit of `settings`, in order.
    ///
    /// # Errors
    /// The first bad setting.
    pub fn set_all(&mut self, settings: &[(String, u64)]) -> Result<(), LimitError> {
        settings.iter().try_for_each(|(k, n)| self.set(k, *n))
    }
}

fn unknown(key: &str) -> LimitError {
    bad(key, "unknown limit (`structgen limits` lists them)")
}

/// Every key [`Targets::set`] knows.
pub const KEYS: &[&str] = &[
    "front_end.max_source_bytes",
    "front_end.max_nesting",
    "front_end.max_nodes",
    "front_end.max_repeat",
    "front_end.max_terminal_nodes",
    "parser.max_symbols",
    "parser.max_rules",
    "parser.max_items_per_row",
    "parser.max_items_per_step",
    "parser.max_phrase_states",
    "parser.max_search_bytes",
    "lexer.max_states",
    "lexer.max_exprs",
    "lexer.relevance_fuel",
    "lexer.build_fuel",
    "lexer.step_fuel",
    "lexer.max_repeat_width",
    "schema.max_nodes",
    "schema.max_copied_nodes",
    "schema.max_depth",
    "schema.max_branches",
    "schema.max_nonterminals",
    "schema.max_rules",
    "schema.regex_fuel",
    "schema.max_number_digits",
    "schema.max_schema_bytes",
    "schema.max_json_depth",
    "schema.max_string_regexes",
    "schema.max_subschemas",
    "schema.max_enum_values",
    "schema.max_negated_members",
    "schema.max_documents",
];

/// Every limit with its value in `grammar` and `schema` (the defaults when
/// given the defaults), in [`KEYS`] order.
pub fn table(grammar: &grammar::Config, schema: &jsonschema::Options) -> Vec<(&'static str, u64)> {
    let (fe, p, s) = (&grammar.limits, &grammar.parser_limits, &schema.limits);
    let u = |n: usize| n as u64;
    let values = [
        u(fe.max_source_bytes),
        u(fe.max_nesting),
        u(fe.max_nodes),
        u64::from(fe.max_repeat),
        u(fe.max_terminal_nodes),
        u(p.max_symbols),
        u(p.max_rules),
        u(p.max_items_per_row),
        u(p.max_items_per_step),
        u(p.max_phrase_states),
        u(p.max_search_bytes),
        u(p.lexer.max_states),
        u(p.lexer.max_exprs),
        p.lexer.relevance_fuel,
        p.lexer.build_fuel,
        p.lexer.step_fuel,
        p.lexer.max_repeat_width,
        u(s.max_nodes),
        u(s.max_copied_nodes),
        u(s.max_depth),
        u(s.max_branches),
        u(s.max_nonterminals),
        u(s.max_rules),
        s.regex_fuel,
        u(s.max_number_digits),
        u(s.max_schema_bytes),
        u(s.max_json_depth),
        u(s.max_string_regexes),
        u(s.max_subschemas),
        u(s.max_enum_values),
        u(s.max_negated_members),
        u(s.max_documents),
    ];
    KEYS.iter().copied().zip(values).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_settable_and_shows_in_the_table() {
        let mut g = grammar::Config::default();
        let mut s = jsonschema::Options::default();
        let mut t = Targets { grammar: &mut g, schemas: vec![&mut s] };
        for (i, key) in KEYS.iter().enumerate() {
            t.set(key, 1000 + i as u64).unwrap();
        }
        let table = table(&g, &s);
        for (i, (key, value)) in table.iter().enumerate() {
            assert_eq!((*key, *value), (KEYS[i], 1000 + i as u64));
        }
    }

    /// The scalar field names of a limits struct, from its `Debug` output
    /// (`Limits { max_nodes: 1, lexer: LexerLimits { … }, … }`): a field
    /// whose value is a struct is left out.
    fn fields(debug: &str) -> Vec<String> {
        let inner = &debug[debug.find('{').unwrap() + 1..debug.rfind('}').unwrap()];
        let (mut depth, mut field, mut nested) = (0, String::new(), false);
        let mut out = Vec::new();
        for c in inner.chars().chain([',']) {
            match c {
                '{' => (depth, nested) = (depth + 1, true),
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if let Some((name, _)) = field.split_once(':')
                        && !nested
                    {
                        out.push(name.trim().to_string());
                    }
                    (field, nested) = (String::new(), false);
                }
                _ if depth == 0 => field.push(c),
                _ => {}
            }
        }
        out
    }

    /// A new field in any limits struct must be settable from the command
    /// line (issue: every resource bounded by a limit a user can set).
    #[test]
    fn every_library_limit_has_a_key() {
        let g = grammar::Config::default();
        let structs = [
            ("front_end", format!("{:?}", g.limits)),
            ("parser", format!("{:?}", g.parser_limits)),
            ("lexer", format!("{:?}", g.parser_limits.lexer)),
            ("schema", format!("{:?}", jsonschema::Limits::default())),
        ];
        for (section, debug) in structs {
            let names = fields(&debug);
            assert!(names.len() >= 4, "{section}: {names:?} from {debug}");
            for name in names {
                let key = format!("{section}.{name}");
                assert!(KEYS.contains(&key.as_str()), "{key} has no command-line key");
            }
        }
    }

    #[test]
    fn bad_settings_name_their_key() {
        let mut g = grammar::Config::default();
        let mut t = Targets { grammar: &mut g, schemas: Vec::new() };
        assert!(t.set("lexer.max_statez", 1).unwrap_err().to_string().contains("lexer.max_statez"));
        assert!(t.set("front_end.max_repeat", 1 << 40).unwrap_err().message.contains("range"));
        assert!(parse_assignment("lexer.max_states").is_err());
        assert!(parse_assignment("lexer.max_states=-1").unwrap_err().message.contains("-1"));
        assert_eq!(
            parse_assignment("lexer.max_states=250_000").unwrap(),
            ("lexer.max_states".to_string(), 250_000)
        );
        let flat = parse_file(r#"{"lexer.max_states": 7, "parser": {"max_rules": 9}}"#, "f");
        assert_eq!(
            flat.unwrap(),
            vec![("lexer.max_states".to_string(), 7), ("parser.max_rules".to_string(), 9)]
        );
        assert!(parse_file(r#"{"lexer": {"max_states": "7"}}"#, "f").is_err());
        assert!(parse_file("[1]", "f").is_err());
    }
}
