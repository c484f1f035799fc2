//! JSON layout settings carried inside a schema, under its top-level
//! `"x-guidance"` key (llguidance's convention), so that a schema says how
//! its JSON is laid out wherever it goes: Lark's `%json { … }`, a request
//! in llguidance's format, the `structgen` command's `--schema`.
//!
//! ```json
//! {"type": "object", "x-guidance": {"whitespace_flexible": false, "property_order": "any"}}
//! ```
//!
//! | key | value | sets |
//! | --- | --- | --- |
//! | `item_separator` | regex | [`Options::item_separator`] |
//! | `key_separator` | regex | [`Options::key_separator`] |
//! | `whitespace_flexible` | bool | `false`: [`Whitespace::Compact`]; `true`: [`Whitespace::unbounded`] |
//! | `whitespace_pattern` | regex | [`Whitespace::Pattern`] (wins over `whitespace_flexible`, as in llguidance) |
//! | `coerce_one_of` | bool | [`Options::coerce_one_of`] |
//! | `lenient` | bool | [`Options::lenient`] |
//! | `property_order` | `"schema"` or `"any"` | [`Options::property_order`] (ours; llguidance has no such key) |
//! | `json_allowed_escapes` | string | only the full set `nrbtf\"u` (else unsupported) |
//! | `json_allow_general_unicode_escapes` | bool | only `false` (else unsupported) |
//!
//! A `null` value leaves the setting alone. Any other key, or a value of the
//! wrong type, is an error with its JSON pointer: a misspelt setting never
//! silently loosens a grammar.
//!
//! [`Options::item_separator`]: jsonschema::Options::item_separator
//! [`Options::key_separator`]: jsonschema::Options::key_separator
//! [`Options::coerce_one_of`]: jsonschema::Options::coerce_one_of
//! [`Options::lenient`]: jsonschema::Options::lenient
//! [`Options::property_order`]: jsonschema::Options::property_order
//! [`Whitespace::Compact`]: jsonschema::Whitespace::Compact
//! [`Whitespace::unbounded`]: jsonschema::Whitespace::unbounded
//! [`Whitespace::Pattern`]: jsonschema::Whitespace::Pattern

use std::fmt;

use jsonschema::{Options, PropertyOrder, Whitespace};
use serde_json::Value;

/// The key, at the top of a schema.
pub const KEY: &str = "x-guidance";

/// The settings [`split`] knows.
pub const SETTINGS: &[&str] = &[
    "item_separator",
    "key_separator",
    "whitespace_flexible",
    "whitespace_pattern",
    "coerce_one_of",
    "lenient",
    "property_order",
    "json_allowed_escapes",
    "json_allow_general_unicode_escapes",
];

/// A bad `"x-guidance"` setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    pointer: String,
    unsupported: bool,
    message: String,
}

impl SettingsError {
    fn new(pointer: String, message: impl Into<String>) -> SettingsError {
        SettingsError { pointer, unsupported: false, message: message.into() }
    }

    /// Where, as a JSON pointer from the schema's root (`/x-guidance/lenient`).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Whether the setting is well-formed but asks for what we do not
    /// support (rather than being malformed or unknown).
    pub fn is_unsupported(&self) -> bool {
        self.unsupported
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at {})", self.message, self.pointer)
    }
}

impl std::error::Error for SettingsError {}

/// The schema without its `"x-guidance"` key, and `base` with that key's
/// settings applied (`base` alone when the schema has no such key).
///
/// # Errors
/// An unknown setting, a value of the wrong type, or an unsupported value,
/// with its pointer.
pub fn split(schema: &Value, base: Options) -> Result<(Value, Options), SettingsError> {
    let mut options = base;
    let Some(x) = schema.get(KEY) else {
        return Ok((schema.clone(), options));
    };
    let at = format!("/{KEY}");
    let Some(settings) = x.as_object() else {
        return Err(SettingsError::new(at, "expected an object of settings"));
    };
    if let Some(k) = settings.keys().find(|k| !SETTINGS.contains(&k.as_str())) {
        return Err(SettingsError::new(
            format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
            format!("unknown setting `{k}` (known: {})", SETTINGS.join(", ")),
        ));
    }
    let pointer = |k: &str| format!("{at}/{k}");
    let string = |k: &str| -> Result<Option<String>, SettingsError> {
        match settings.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(SettingsError::new(pointer(k), "expected a string")),
        }
    };
    let flag = |k: &str| -> Result<Option<bool>, SettingsError> {
        match settings.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(SettingsError::new(pointer(k), "expected true or false")),
        }
    };
    if let Some(s) = string("item_separator")? {
        options.item_separator = s;
    }
    if let Some(s) = string("key_separator")? {
        options.key_separator = s;
    }
    match flag("whitespace_flexible")? {
        Some(false) => options.whitespace = Whitespace::Compact,
        Some(true) => options.whitespace = Whitespace::unbounded(),
        None => {}
    }
    if let Some(p) = string("whitespace_pattern")? {
        options.whitespace = Whitespace::Pattern(p);
    }
    if let Some(b) = flag("coerce_one_of")? {
        options.coerce_one_of = b;
    }
    if let Some(b) = flag("lenient")? {
        options.lenient = b;
    }
    match string("property_order")?.as_deref() {
        None => {}
        Some("schema") => options.property_order = PropertyOrder::Schema,
        Some("any") => options.property_order = PropertyOrder::Any,
        Some(other) => {
            return Err(SettingsError::new(
                pointer("property_order"),
                format!("unknown property order `{other}` (expected \"schema\" or \"any\")"),
            ));
        }
    }
    if let Some(e) = string("json_allowed_escapes")?
        && e.chars().collect::<std::collections::BTreeSet<_>>()
            != "nrbtf\\\"u".chars().collect::<std::collections::BTreeSet<_>>()
    {
        return Err(SettingsError {
            pointer: pointer("json_allowed_escapes"),
            unsupported: true,
            message: "only the full set of JSON escapes (`nrbtf\\\"u`) is supported".into(),
        });
    }
    if flag("json_allow_general_unicode_escapes")? == Some(true) {
        return Err(SettingsError {
            pointer: pointer("json_allow_general_unicode_escapes"),
            unsupported: true,
            message: "`json_allow_general_unicode_escapes` is not supported".into(),
        });
    }
    let mut schema = schema.clone();
    if let Some(map) = schema.as_object_mut() {
        map.remove(KEY);
    }
    Ok((schema, options))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn settings_apply_on_top_of_the_base() {
        let schema = json!({"type": "object", "x-guidance": {
            "whitespace_flexible": false, "property_order": "any", "item_separator": ", ?",
            "lenient": null}});
        let (s, o) = split(&schema, Options::llguidance_compat()).unwrap();
        assert_eq!(s, json!({"type": "object"}));
        assert_eq!(o.whitespace, Whitespace::Compact);
        assert_eq!(o.property_order, PropertyOrder::Any);
        assert_eq!(o.item_separator, ", ?");
        assert!(!o.lenient);
        // A pattern wins over the switch; no key leaves the base alone.
        let schema =
            json!({"x-guidance": {"whitespace_flexible": true, "whitespace_pattern": " ?"}});
        assert_eq!(
            split(&schema, Options::compact()).unwrap().1.whitespace,
            Whitespace::Pattern(" ?".into())
        );
        let (s, o) = split(&json!(true), Options::compact()).unwrap();
        assert_eq!((s, o), (json!(true), Options::compact()));
    }

    #[test]
    fn bad_settings_name_their_pointer() {
        let e = split(&json!({"x-guidance": {"whitespace_flexibel": false}}), Options::default())
            .unwrap_err();
        assert_eq!(e.pointer(), "/x-guidance/whitespace_flexibel");
        assert!(e.message().contains("unknown setting"), "{e}");
        let e = split(&json!({"x-guidance": {"lenient": "yes"}}), Options::default()).unwrap_err();
        assert_eq!(e.pointer(), "/x-guidance/lenient");
        let e = split(&json!({"x-guidance": {"property_order": "sorted"}}), Options::default())
            .unwrap_err();
        assert!(e.message().contains("sorted") && !e.is_unsupported(), "{e}");
        let e = split(&json!({"x-guidance": {"json_allowed_escapes": "n"}}), Options::default())
            .unwrap_err();
        assert!(e.is_unsupported());
        let e = split(&json!({"x-guidance": []}), Options::default()).unwrap_err();
        assert_eq!(e.pointer(), "/x-guidance");
    }
}
