//! `$ref` resolution: `$id` bases, `$anchor`s and JSON pointers, inside
//! the compiled document and across the documents the caller handed over
//! ([`Documents`](crate::Documents)).
//!
//! A schema object is named by a pointer string: a JSON pointer (`""` or
//! `/…`) in the compiled document, `uri#/…` in a referenced document
//! (`uri` being the absolute URI it was loaded under, which has no `#`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::options::Options;

/// Escapes one reference token of a JSON pointer (RFC 6901).
pub(crate) fn escape_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Percent-decodes a URI fragment; `None` if the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Looks up a JSON pointer (already percent-decoded) in `doc`.
pub(crate) fn lookup<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut cur = doc;
    for tok in rest.split('/') {
        let tok = tok.replace("~1", "/").replace("~0", "~");
        cur = match cur {
            Value::Object(m) => m.get(&tok)?,
            Value::Array(a) => a.get(tok.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.find('#') {
        Some(i) => (&uri[..i], Some(&uri[i + 1..])),
        None => (uri, None),
    }
}

fn has_scheme(s: &str) -> bool {
    let Some(i) = s.find(':') else { return false };
    let scheme = &s[..i];
    !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segs: Vec<&str> = path.split('/').collect();
    for (i, seg) in segs.iter().enumerate() {
        match *seg {
            "." => {
                if i == segs.len() - 1 {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == segs.len() - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

/// Resolves a URI reference against an absolute base (RFC 3986 section 5.2, simplified).
pub(crate) fn resolve_uri(base: &str, reference: &str) -> String {
    if has_scheme(reference) {
        return reference.to_string();
    }
    let (base_nofrag, _) = split_fragment(base);
    if reference.is_empty() {
        return base_nofrag.to_string();
    }
    if reference.starts_with('#') {
        return format!("{base_nofrag}{reference}");
    }
    let scheme_end = base_nofrag.find(':').map(|i| i + 1).unwrap_or(0);
    let (scheme, rest) = base_nofrag.split_at(scheme_end);
    let (authority, path) = if let Some(r) = rest.strip_prefix("//") {
        let end = r.find('/').unwrap_or(r.len());
        (format!("//{}", &r[..end]), &r[end..])
    } else {
        (String::new(), rest)
    };
    if reference.starts_with("//") {
        return format!("{scheme}{reference}");
    }
    let (ref_path, ref_tail) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let merged = if ref_path.starts_with('/') {
        ref_path.to_string()
    } else if ref_path.is_empty() {
        path.to_string()
    } else {
        let dir = match path.rfind('/') {
            Some(i) => &path[..=i],
            None if !authority.is_empty() => "/",
            None => "",
        };
        format!("{dir}{ref_path}")
    };
    format!("{scheme}{authority}{}{ref_tail}", remove_dot_segments(&merged))
}

/// The default base URI of a document without `$id`.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///root.json";

/// An index of the resources (`$id`) and anchors of one document.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// The referenced documents loaded, by the absolute URI they were
    /// loaded under (their pointer prefix is `uri#`).
    docs: HashMap<String, Arc<Value>>,
    /// Absolute URI without fragment -> pointer of the resource root.
    resources: HashMap<String, String>,
    /// Absolute URI with `#anchor` -> pointer.
    anchors: HashMap<String, String>,
    /// Pointer of a schema object that sets a base URI (a document's root,
    /// an `$id`) -> that base; the others take their nearest ancestor's
    /// ([`base_of`](Index::base_of)).
    bases: HashMap<String, String>,
    /// `$dynamicAnchor` name -> how many schema objects declare it.
    dynamic_anchors: HashMap<String, usize>,
    /// Whether the document uses draft-07 (or earlier) semantics.
    pub(crate) legacy: bool,
    /// The draft named by `$schema`: 4, 6, 7, 2019 or 2020 (the default).
    pub(crate) draft: u32,
    /// Each reference's schema object and absolute URI (no fragment), in
    /// the order met.
    refs: Vec<(String, String)>,
}

/// Keywords whose values are maps of schemas.
const SCHEMA_MAPS: &[&str] = &[
    "$defs",
    "definitions",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose values are schemas or arrays of schemas.
const SCHEMA_VALUES: &[&str] = &[
    "items",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

impl Index {
    /// Indexes `doc` and, transitively, the documents of
    /// `options.documents` its references reach.
    ///
    /// # Errors
    /// [`ErrorKind::LimitExceeded`] when more than `Limits::max_documents`
    /// documents are reached.
    pub(crate) fn build(doc: &Value, options: &Options) -> Result<Index, Error> {
        let mut idx = Index::build_one(doc);
        if options.documents.is_empty() {
            return Ok(idx);
        }
        let root_base = idx.base_of("").to_string();
        // Keys of the map (and the top-level `$id`s of their documents)
        // resolved to absolute URIs, made once.
        let mut by_uri: HashMap<String, (String, Arc<Value>)> = HashMap::new();
        for (key, d) in options.documents.entries() {
            let uri = resolve_uri(&root_base, split_fragment(key).0);
            if let Some(id) = d.get("$id").and_then(Value::as_str) {
                let id = resolve_uri(&uri, split_fragment(id).0);
                by_uri.entry(id).or_insert_with(|| (uri.clone(), d.clone()));
            }
            by_uri.insert(uri.clone(), (uri, d.clone()));
        }
        // The resources embedded in the map's documents (`$id`s below their
        // top level), indexed once, on the first miss.
        let mut embedded: Option<HashMap<String, (String, Arc<Value>)>> = None;
        let mut seen = 0;
        while seen < idx.refs.len() {
            let (ptr, uri) = idx.refs[seen].clone();
            seen += 1;
            if idx.resources.contains_key(&uri) {
                continue;
            }
            let mut found = by_uri.get(&uri).cloned();
            if found.is_none() {
                let emb = embedded.get_or_insert_with(|| {
                    let mut m = HashMap::new();
                    for (key_uri, d) in by_uri.values() {
                        let mut one = Index { draft: idx.draft, ..Index::default() };
                        one.walk(d, String::new(), key_uri.clone(), 0);
                        for r in one.resources.into_keys() {
                            m.entry(r).or_insert_with(|| (key_uri.clone(), d.clone()));
                        }
                    }
                    m
                });
                found = emb.get(&uri).cloned();
            }
            if found.is_none() {
                found = options.documents.resolve(&uri).map(|d| (uri.clone(), Arc::new(d)));
            }
            let Some((uri, d)) = found else { continue };
            if idx.docs.contains_key(&uri) {
                continue;
            }
            if idx.docs.len() >= options.limits.max_documents {
                let msg = format!(
                    "the references reach more than {} documents (Limits::max_documents)",
                    options.limits.max_documents
                );
                return Err(Error::new(ErrorKind::LimitExceeded, "$ref", &ptr, msg));
            }
            let prefix = format!("{uri}#");
            idx.resources.insert(uri.clone(), prefix.clone());
            idx.walk(&d, prefix, uri.clone(), 0);
            idx.docs.insert(uri, d);
        }
        Ok(idx)
    }

    /// The referenced documents loaded.
    pub(crate) fn documents(&self) -> impl Iterator<Item = &Value> {
        self.docs.values().map(|d| &**d)
    }

    /// The schema object at `ptr` (see the module manual), `doc` being the
    /// compiled document.
    pub(crate) fn get<'v>(&'v self, doc: &'v Value, ptr: &str) -> Option<&'v Value> {
        if ptr.is_empty() || ptr.starts_with('/') {
            return lookup(doc, ptr);
        }
        let (uri, rest) = split_fragment(ptr);
        lookup(self.docs.get(uri)?, rest?)
    }

    fn build_one(doc: &Value) -> Index {
        let mut idx = Index { draft: 2020, ..Index::default() };
        if let Some(s) = doc.get("$schema").and_then(Value::as_str) {
            idx.draft = if s.contains("draft-03") || s.contains("draft-04") {
                4
            } else if s.contains("draft-06") {
                6
            } else if s.contains("draft-07") {
                7
            } else if s.contains("2019-09") {
                2019
            } else {
                2020
            };
            idx.legacy = idx.draft <= 7;
        }
        idx.walk(doc, String::new(), DEFAULT_BASE.to_string(), 0);
        idx
    }

    fn walk(&mut self, v: &Value, ptr: String, base: String, depth: usize) {
        let is_root = depth == 0;
        if depth > 256 {
            return;
        }
        let Value::Object(m) = v else { return };
        let mut base = base;
        // Draft-04 names the keyword `id`; there `$id` is an unknown word
        // (CRYENGINE's draft-04 schema writes `$id`s that would rebase its
        // `#/definitions/…` references onto paths that do not exist). Up to
        // draft-07 every sibling of `$ref` is ignored, an id too.
        let id = if self.draft <= 7 && m.contains_key("$ref") {
            None
        } else if self.draft <= 4 {
            m.get("id")
        } else {
            m.get("$id")
        }
        .and_then(Value::as_str);
        if let Some(id) = id {
            let (nofrag, frag) = split_fragment(id);
            if !nofrag.is_empty() {
                base = resolve_uri(&base, nofrag);
                self.resources.entry(base.clone()).or_insert(ptr.clone());
            }
            // draft-07 style `"$id": "#foo"` is an anchor.
            if let Some(f) = frag.filter(|f| !f.is_empty() && !f.starts_with('/')) {
                self.anchors.entry(format!("{base}#{f}")).or_insert(ptr.clone());
            }
        }
        if is_root {
            self.resources.entry(base.clone()).or_insert(ptr.clone());
        }
        for kw in ["$ref", "$dynamicRef"] {
            if let Some(r) = m.get(kw).and_then(Value::as_str) {
                let uri = resolve_uri(&base, split_fragment(r).0);
                self.refs.push((ptr.clone(), uri));
            }
        }
        if let Some(a) = m.get("$anchor").and_then(Value::as_str) {
            self.anchors.entry(format!("{base}#{a}")).or_insert(ptr.clone());
        }
        // A `$dynamicAnchor` is also a plain anchor for `$ref`.
        if let Some(a) = m.get("$dynamicAnchor").and_then(Value::as_str) {
            self.anchors.entry(format!("{base}#{a}")).or_insert(ptr.clone());
            *self.dynamic_anchors.entry(a.to_string()).or_default() += 1;
        }
        if is_root || id.is_some() {
            self.bases.insert(ptr.clone(), base.clone());
        }
        for (k, child) in m {
            let kptr = format!("{ptr}/{}", escape_token(k));
            if SCHEMA_MAPS.contains(&k.as_str()) {
                if let Value::Object(sub) = child {
                    for (name, s) in sub {
                        let p = format!("{kptr}/{}", escape_token(name));
                        self.walk(s, p, base.clone(), depth + 1);
                    }
                }
            } else if SCHEMA_VALUES.contains(&k.as_str()) {
                match child {
                    Value::Array(a) => {
                        for (i, s) in a.iter().enumerate() {
                            self.walk(s, format!("{kptr}/{i}"), base.clone(), depth + 1);
                        }
                    }
                    s => self.walk(s, kptr, base.clone(), depth + 1),
                }
            }
        }
    }

    /// The base URI in effect at the schema at `ptr`.
    pub(crate) fn base_of(&self, ptr: &str) -> &str {
        let mut p = ptr;
        loop {
            if let Some(b) = self.bases.get(p) {
                return b;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return self.bases.get("").map(String::as_str).unwrap_or(DEFAULT_BASE),
            }
        }
    }

    /// Resolves `reference` (a `$ref` value) found in the schema at `ptr` to
    /// the pointer of its target (`doc` being the compiled document), or
    /// says why it cannot, naming the absolute URI.
    pub(crate) fn resolve(
        &self,
        doc: &Value,
        ptr: &str,
        reference: &str,
    ) -> Result<String, String> {
        let abs = resolve_uri(self.base_of(ptr), reference);
        let (nofrag, frag) = split_fragment(&abs);
        let Some(frag) = percent_decode(frag.unwrap_or("")) else {
            return Err(format!("{abs:?} has a fragment that is not UTF-8"));
        };
        let Some(root) = self.resources.get(nofrag) else {
            return Err(format!(
                "no document has the URI {nofrag:?} (hand it over in Options::documents)"
            ));
        };
        let target = if frag.is_empty() || frag.starts_with('/') {
            format!("{root}{frag}")
        } else {
            match self.anchors.get(&format!("{nofrag}#{frag}")) {
                Some(t) => t.clone(),
                None => return Err(format!("{nofrag:?} has no anchor {frag:?}")),
            }
        };
        match self.get(doc, &target) {
            Some(_) => Ok(target),
            None => Err(format!("{nofrag:?} has nothing at the pointer {frag:?}")),
        }
    }

    /// Resolves a `$dynamicRef` statically: like `$ref`, unless its target
    /// declares the `$dynamicAnchor` its fragment names, in which case the
    /// dynamic scope decides; that is static only when one schema object of
    /// the document declares the anchor (then the target itself). `Err(())`
    /// when the dynamic scope could choose among several.
    pub(crate) fn resolve_dynamic(
        &self,
        doc: &Value,
        ptr: &str,
        reference: &str,
    ) -> Result<Option<String>, ()> {
        let Ok(target) = self.resolve(doc, ptr, reference) else { return Ok(None) };
        let (_, frag) = split_fragment(reference);
        let name = frag.filter(|f| !f.is_empty() && !f.starts_with('/'));
        let declared = self
            .get(doc, &target)
            .and_then(|t| t.get("$dynamicAnchor"))
            .and_then(Value::as_str)
            .is_some_and(|a| Some(a) == name);
        if declared && name.and_then(|n| self.dynamic_anchors.get(n)).copied().unwrap_or(0) > 1 {
            return Err(());
        }
        Ok(Some(target))
    }
}
