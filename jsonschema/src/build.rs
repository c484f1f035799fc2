//! Raw JSON Schema to the normalized schema: keywords, `$ref`, applicators.

//!
//! The compiler's state and the walk over schema objects live here; the
//! rest is split by concern: `$ref` definitions (`defs.rs`), the derivre
//! questions (`regex.rs`), the typed keywords and constants (`types.rs`),
//! and `oneOf`, `if` and the dependency keywords (`applicators.rs`).

use std::collections::HashMap;

use derivre::RegexAst;
use serde_json::Value;

use crate::cache::RegexMemo;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::ir::{DefId, Schema};
use crate::json::Exact;
use crate::number::Decimal;
use crate::options::Options;
use crate::resolve::{Index, escape_token};

mod applicators;
mod defs;
mod regex;
mod types;

use defs::{Def, NESTED};

/// Keywords of the JSON Schema vocabularies this compiler does not implement.
const UNSUPPORTED: &[&str] = &["$recursiveRef", "$recursiveAnchor"];

/// Keywords read by the typed core (`type` and per-type assertions).
const CORE: &[&str] = &[
    "type",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// Whether a keyword exists in the draft (keywords of later drafts are
/// unknown, hence ignored, in schemas that declare an earlier one).
pub(crate) fn in_draft(k: &str, draft: u32) -> bool {
    let since = match k {
        "const" | "contains" | "propertyNames" => 6,
        "if" => 7,
        "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "minContains"
        | "maxContains"
        | "$recursiveRef" => 2019,
        "prefixItems" | "$dynamicRef" => 2020,
        _ => 0,
    };
    draft >= since
}

/// Keywords whose presence next to `$ref` requires an intersection.
fn is_assertion(k: &str) -> bool {
    CORE.contains(&k)
        || UNSUPPORTED.contains(&k)
        || matches!(
            k,
            "enum"
                | "$dynamicRef"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "const"
                | "allOf"
                | "anyOf"
                | "oneOf"
                | "not"
                | "if"
                | "dependentRequired"
                | "dependentSchemas"
                | "dependencies"
        )
}

/// The state of one compilation.
pub(crate) struct Compiler<'a> {
    pub(crate) doc: &'a Value,
    /// The exact spellings of the numbers a float reading changes.
    pub(crate) exact: &'a Exact,
    /// The `$id`s, anchors and referenced documents.
    pub(crate) index: &'a Index,
    pub(crate) options: &'a Options,
    defs: Vec<Def>,
    def_by_ptr: HashMap<String, DefId>,
    /// The definitions made by intersections, by (definition, a digest of
    /// the other schema, order).
    meets: HashMap<(DefId, defs::Digest, bool), DefId>,
    /// The complements of `$ref` targets being unfolded, by target pointer:
    /// the `level` they started at and the definition made when the
    /// unfolding met itself; and the finished recursive ones.
    complementing: HashMap<String, (usize, Option<DefId>)>,
    complements: HashMap<String, DefId>,
    /// How many of those are recursive (`MAX_MEETS` bounds them with `meets`).
    cycle_defs: usize,
    /// How many array items or object members deep the complement being
    /// computed is: a recursion met again deeper consumes part of the
    /// value on its way.
    pub(crate) level: usize,
    nodes: usize,
    /// Schema and regex nodes copied so far (`Limits::max_copied_nodes`).
    copied: usize,
    pub(crate) warnings: Vec<Warning>,
    /// The translations of the registered formats (`Options::formats`) used so far.
    pub(crate) custom_formats: HashMap<String, RegexAst>,
    /// The answers of `regex_is_empty` and `regex_matches` so far.
    pub(crate) regex_memo: RegexMemo,
    /// The builders those questions are answered in, one per preparsed
    /// set in use (see `build/regex.rs`).
    pub(crate) scratches: Vec<lexer::Scratch>,
    /// The JSON pointer of the schema object being compiled (or of the
    /// definition being lowered): where an engine fault is reported.
    pub(crate) location: String,
    /// Whether the document uses `unevaluatedProperties`/`unevaluatedItems`.
    pub(crate) uses_unevaluated: bool,
    /// The patterns whose derivative width is over 1
    /// ([`lexer::repeat_width`]), where they are written: the lexer refuses
    /// a lexeme wider than its limit without knowing the schema, and
    /// [`Compiled::pattern_wider_than`](crate::Compiled::pattern_wider_than)
    /// finds the pattern at fault here.
    pub(crate) wide_patterns: Vec<crate::WidePattern>,
}

/// What derivre's construction of one regex node costs, in node copies
/// (hash-consing and sorted unions: measured on MaskBench's slowest
/// `oneOf`s, about 10× a copy).
const BUILD_COST: usize = 10;

pub(crate) fn ptr_join(ptr: &str, k: &str) -> String {
    format!("{ptr}/{}", escape_token(k))
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(
        doc: &'a Value,
        index: &'a Index,
        exact: &'a Exact,
        options: &'a Options,
    ) -> Compiler<'a> {
        Compiler {
            doc,
            exact,
            index,
            options,
            defs: Vec::new(),
            def_by_ptr: HashMap::new(),
            meets: HashMap::new(),
            complementing: HashMap::new(),
            complements: HashMap::new(),
            cycle_defs: 0,
            level: 0,
            nodes: 0,
            copied: 0,
            warnings: Vec::new(),
            custom_formats: HashMap::new(),
            regex_memo: RegexMemo::default(),
            scratches: Vec::new(),
            location: String::new(),
            uses_unevaluated: crate::unevaluated::uses_unevaluated(doc)
                || index.documents().any(crate::unevaluated::uses_unevaluated),
            wide_patterns: Vec::new(),
        }
    }

    pub(crate) fn err(
        &self,
        kind: ErrorKind,
        kw: &str,
        ptr: &str,
        msg: impl Into<String>,
    ) -> Error {
        Error::new(kind, kw, ptr, msg)
    }

    pub(crate) fn invalid(&self, kw: &str, ptr: &str, msg: &str) -> Error {
        Error::new(ErrorKind::InvalidSchema, kw, ptr, msg)
    }

    /// Counts work and depth against the limits.
    pub(crate) fn tick(&mut self, ptr: &str, depth: usize) -> Result<()> {
        self.nodes += 1;
        if self.nodes > self.options.limits.max_nodes {
            return Err(self.err(ErrorKind::LimitExceeded, "", ptr, "too many schema nodes"));
        }
        if depth > self.options.limits.max_depth {
            return Err(self.err(ErrorKind::LimitExceeded, "", ptr, NESTED));
        }
        Ok(())
    }

    /// A copy of `s`, its size charged to `Limits::max_copied_nodes` first
    /// (the size is counted with at most as many steps as the room left).
    pub(crate) fn charged_clone(&mut self, s: &Schema) -> Result<Schema> {
        let room = self.copy_room();
        self.copied += s.size_up_to(room);
        self.check_copied()?;
        Ok(s.clone())
    }

    /// Charges `n` schema nodes built afresh (items or properties that
    /// take any value, filled in around a constraint) to
    /// `Limits::max_copied_nodes`, as a copy of that size.
    pub(crate) fn charge(&mut self, n: usize) -> Result<()> {
        self.copied = self.copied.saturating_add(n);
        self.check_copied()
    }

    /// Charges the construction of `ast` (for an emptiness check or a
    /// match) to `Limits::max_copied_nodes`: derivre builds every node of
    /// it, and the same large union of keys can be checked many times. A
    /// built node counts as [`BUILD_COST`] copied ones.
    pub(crate) fn charge_regex(&mut self, ast: &RegexAst) -> Result<()> {
        let room = self.copy_room().div_ceil(BUILD_COST);
        let size = crate::ir::regex_size(std::slice::from_ref(ast), room);
        self.copied = self.copied.saturating_add(size.saturating_mul(BUILD_COST));
        self.check_copied()
    }

    /// One more than the copies `Limits::max_copied_nodes` still allows: a
    /// size counted up to it is enough to tell.
    pub(crate) fn copy_room(&self) -> usize {
        self.options.limits.max_copied_nodes.saturating_sub(self.copied).saturating_add(1)
    }

    /// The copy limit's error (at the schema being compiled: copies happen
    /// deep inside intersections, where no pointer of their own is kept).
    fn check_copied(&self) -> Result<()> {
        let max = self.options.limits.max_copied_nodes;
        if self.copied > max {
            let msg = format!(
                "copies or builds more than {max} schema and regex nodes (Limits::max_copied_nodes)"
            );
            return Err(self.err(ErrorKind::LimitExceeded, "", "", msg));
        }
        Ok(())
    }

    /// The value of a number of the schema as written, or a
    /// `LimitExceeded` error for keyword `kw` at `ptr` when it has more
    /// digits than `Limits::max_number_digits`.
    pub(crate) fn decimal(&self, n: &serde_json::Number, kw: &str, ptr: &str) -> Result<Decimal> {
        let max = self.options.limits.max_number_digits;
        self.exact.decimal(n, max).ok_or_else(|| {
            let n = self.exact.text(n);
            let msg = format!("{n} needs more than {max} digits (Limits::max_number_digits)");
            self.err(ErrorKind::LimitExceeded, kw, ptr, msg)
        })
    }

    /// Records a warning (once per keyword, pointer and message: complements
    /// and `oneOf` visit a schema object more than once).
    pub(crate) fn warn(&mut self, kw: &str, ptr: &str, msg: impl Into<String>) {
        let w = Warning::new(kw, ptr, msg);
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// An unsupported keyword: an error, or a warning in lenient mode.
    pub(crate) fn unsupported(
        &mut self,
        kind: ErrorKind,
        kw: &str,
        ptr: &str,
        msg: String,
    ) -> Result<()> {
        if self.options.lenient {
            self.warn(kw, ptr, format!("{msg} (ignored)"));
            Ok(())
        } else {
            Err(self.err(kind, kw, ptr, msg))
        }
    }

    // ----- the main walk -----

    /// Compiles the schema `v` found at `ptr`.
    pub(crate) fn compile_value(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        let outer = std::mem::replace(&mut self.location, ptr.to_string());
        let schema = self.compile_value_here(v, ptr, depth);
        self.location = outer;
        schema
    }

    /// [`compile_value`](Self::compile_value) with `location` set to `ptr`.
    fn compile_value_here(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Schema> {
        self.tick(ptr, depth)?;
        let m = match v {
            Value::Bool(true) => return Ok(Schema::Any),
            Value::Bool(false) => return Ok(Schema::Never),
            Value::Object(m) => m,
            _ => return Err(self.invalid("", ptr, "a schema must be an object or a boolean")),
        };
        if let Some(d) = self.ref_target(m, ptr, "$ref")? {
            let alone = self.index.legacy || !m.keys().any(|k| is_assertion(k));
            if alone {
                return Ok(Schema::Ref(d));
            }
        } else if in_draft("$dynamicRef", self.index.draft) {
            let others = m.keys().any(|k| k != "$dynamicRef" && is_assertion(k));
            if let Some(d) = self.ref_target(m, ptr, "$dynamicRef")?.filter(|_| !others) {
                return Ok(Schema::Ref(d));
            }
        }
        let mut acc = Schema::Any;
        // The typed core joins at its first keyword other than `type`, so
        // that `properties` orders the object where it appears.
        let draft = self.index.draft;
        let core_at = m
            .keys()
            .position(|k| CORE.contains(&k.as_str()) && k != "type" && in_draft(k, draft))
            .or_else(|| m.keys().position(|k| k == "type"));
        for (pos, (k, val)) in m.iter().enumerate() {
            if !in_draft(k, draft) {
                continue;
            }
            let kptr = ptr_join(ptr, k);
            let part = match k.as_str() {
                "$ref" | "$dynamicRef" => Schema::Ref(self.ref_target(m, ptr, k)?.unwrap_or(0)),
                "allOf" => {
                    let items = self.schema_array(k, ptr, val)?;
                    let mut s = Schema::Any;
                    for (i, item) in items.iter().enumerate() {
                        let iptr = format!("{kptr}/{i}");
                        // A last item that is a lone `oneOf` (or a `$ref`
                        // to one) takes the items before it as context.
                        if i > 0
                            && i + 1 == items.len()
                            && let Some((one, optr)) = self.lone_one_of(item, &iptr)?
                        {
                            let outer = std::mem::replace(&mut self.location, optr.clone());
                            let met = self.one_of_in(s, one, &optr, depth + 1);
                            self.location = outer;
                            s = met?;
                            continue;
                        }
                        let c = self.compile_value(item, &iptr, depth + 1)?;
                        // A limit met while meeting this item names it.
                        let outer = std::mem::replace(&mut self.location, iptr);
                        let met = self.intersect(s, c, depth + 1);
                        self.location = outer;
                        s = met?;
                    }
                    s
                }
                "anyOf" => {
                    let items = self.schema_array(k, ptr, val)?;
                    let mut bs = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        bs.push(self.compile_value(item, &format!("{kptr}/{i}"), depth + 1)?);
                    }
                    Schema::any_of(bs)
                }
                "oneOf" => self.one_of_in(Schema::Any, val, ptr, depth)?,
                "not" => self.complement(val, &kptr, depth + 1)?,
                "if" => self.if_then_else(m, ptr, depth)?,
                "enum" => {
                    let vals = val
                        .as_array()
                        .ok_or_else(|| self.invalid(k, ptr, "enum must be an array"))?;
                    self.check_list(k, ptr, vals.len())?;
                    let mut bs = Vec::new();
                    for v in vals {
                        bs.push(self.constant(v, &kptr)?);
                    }
                    Schema::any_of(bs)
                }
                "const" => self.constant(val, &kptr)?,
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    self.dependencies(k, val, ptr, depth)?
                }
                k if CORE.contains(&k) => {
                    if core_at != Some(pos) {
                        continue;
                    }
                    self.core(m, ptr, depth)?
                }
                k if UNSUPPORTED.contains(&k) => {
                    self.unsupported(
                        ErrorKind::UnsupportedKeyword,
                        k,
                        ptr,
                        format!("`{k}` is not supported"),
                    )?;
                    continue;
                }
                _ => continue,
            };
            acc = self.intersect(acc, part, depth + 1)?;
            if acc.is_never() {
                break;
            }
        }
        self.apply_unevaluated(m, ptr, acc, depth)
    }

    fn schema_array<'v>(&self, k: &str, ptr: &str, v: &'v Value) -> Result<&'v Vec<Value>> {
        let a = v
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| self.invalid(k, ptr, "must be a non-empty array of schemas"))?;
        self.check_list(k, ptr, a.len())?;
        Ok(a)
    }

    /// The breadth limits: `Limits::max_subschemas` for `allOf`, `anyOf`
    /// and `oneOf`, `Limits::max_enum_values` for `enum`.
    pub(crate) fn check_list(&self, k: &str, ptr: &str, n: usize) -> Result<()> {
        let (max, name) = if k == "enum" {
            (self.options.limits.max_enum_values, "max_enum_values")
        } else {
            (self.options.limits.max_subschemas, "max_subschemas")
        };
        if n > max {
            let msg = format!("`{k}` lists {n} items, more than {max} (Limits::{name})");
            return Err(self.err(ErrorKind::LimitExceeded, k, ptr, msg));
        }
        Ok(())
    }
}
