//! Objects: members in schema order (counting rules over the position in
//! `properties`, the count and the witness bits), or in any order
//! (permutation phrases).

use std::collections::{HashMap, VecDeque};

use derivre::RegexAst;

use super::{Lowerer, any_chars, quote, quote_except};
use crate::error::{ErrorKind, Result};
use crate::grammar::{LexemeId, NonterminalId, Symbol};
use crate::ir::{ObjectSchema, Schema};
use crate::options::PropertyOrder;

/// A listed property: its name, its value options (value symbol, witness
/// bits it sets), and whether it is required.
type Property = (String, Vec<(Symbol, u32)>, bool);

impl Lowerer<'_, '_> {
    /// The ways to emit one member: (value symbol, witness bits it sets), for
    /// a key matching `key_rx` (or named `name`) whose plain schema is `s`.
    fn member_options(
        &mut self,
        o: &ObjectSchema,
        s: &Schema,
        name: Option<&str>,
        depth: usize,
    ) -> Result<Vec<(u32, Schema)>> {
        let mut out = vec![(0u32, s.clone())];
        let n = o.witnesses.len();
        for mask in 1u32..(1 << n) {
            let mut v = s.clone();
            let mut ok = true;
            for (w, (rx, ws)) in o.witnesses.iter().enumerate() {
                if mask & (1 << w) == 0 {
                    continue;
                }
                if let Some(name) = name
                    && !self.c.regex_matches(rx, name)?
                {
                    ok = false;
                    break;
                }
                v = self.c.intersect(v, ws.clone(), depth + 1)?;
            }
            if ok && !v.is_never() {
                out.push((mask, v));
            }
        }
        Ok(out)
    }

    pub(super) fn object(&mut self, o: &ObjectSchema, depth: usize) -> Result<Option<Symbol>> {
        let nw = o.witnesses.len();
        let max = self.c.options.limits.max_negated_members.min(MAX_NEGATED_MEMBERS);
        if nw > max {
            return Err(self.c.err(
                ErrorKind::LimitExceeded,
                "",
                "",
                format!(
                    "{nw} negated member constraints on one object, more than \
                     Limits::max_negated_members ({max})"
                ),
            ));
        }
        let full = (1u32 << nw) - 1;
        let mut props: Vec<Property> = Vec::new();
        let mut named: Vec<(String, Schema, bool)> = Vec::new();
        for (k, s) in &o.properties {
            named.push((k.clone(), s.clone(), o.required.contains(k)));
        }
        for r in &o.required {
            if !named.iter().any(|(k, _, _)| k == r) {
                let s = self.c.key_schema(o, r)?;
                named.push((r.clone(), s, true));
            }
        }
        for (k, s, req) in &named {
            let mut opts = Vec::new();
            for (bits, v) in self.member_options(o, s, Some(k), depth)? {
                if let Some(sym) = self.lower(&v, depth + 1)? {
                    opts.push((sym, bits));
                }
            }
            if opts.is_empty() && *req {
                return Ok(None);
            }
            props.push((k.clone(), opts, *req));
        }
        let names: Vec<RegexAst> =
            named.iter().map(|(k, _, _)| RegexAst::Literal(k.clone())).collect();
        // (key lexeme, value symbol, witness bits)
        let mut regions: Vec<(LexemeId, Symbol, u32)> = Vec::new();
        for (rx, s) in &o.regions {
            let base_rx = if names.is_empty() {
                rx.clone()
            } else {
                RegexAst::And(vec![
                    rx.clone(),
                    RegexAst::Not(Box::new(RegexAst::Or(names.clone()))),
                ])
            };
            for (bits, v) in self.member_options(o, s, None, depth)? {
                let mut parts = vec![base_rx.clone()];
                for (w, (wrx, _)) in o.witnesses.iter().enumerate() {
                    if bits & (1 << w) != 0 {
                        parts.push(wrx.clone());
                    }
                }
                let mut content = parts.clone();
                content[0] = rx.clone();
                let key_rx = if parts.len() == 1 { base_rx.clone() } else { RegexAst::And(parts) };
                let is_any = matches!(&key_rx, RegexAst::Regex(r) if r == "(?s:.*)");
                if !is_any && self.c.regex_is_empty(&key_rx)? == Some(true) {
                    continue;
                }
                let Some(vs) = self.lower(&v, depth + 1)? else { continue };
                let mut content =
                    if content.len() == 1 { rx.clone() } else { RegexAst::And(content) };
                if let Some(cap) = self.c.options.max_key_length
                    && is_any_text(&content)
                {
                    content = any_chars(0, Some(cap));
                }
                let key = self.lexeme("key", quote_except(content, &names));
                regions.push((key, vs, bits));
            }
        }
        let n = props.len();
        let mut keys = Vec::with_capacity(n);
        for (k, _, _) in &props {
            keys.push(self.lexeme("key", quote(RegexAst::Literal(k.clone()))));
        }
        let any_order = self.c.options.property_order == PropertyOrder::Any;
        if any_order && nw == 0 {
            return self.object_in_any_order(o, &props, &keys, &regions).map(Some);
        }
        let cap = o.max.unwrap_or(o.min.max(1));
        let inc = |c: usize| if o.max.is_some() { c + 1 } else { (c + 1).min(cap) };
        // Members written under a key region, counted (up to the cap) only
        // when `max_additional_properties` caps them.
        let extra_cap = self.c.options.max_additional_properties;
        let more = |e: usize| if extra_cap.is_some() { e + 1 } else { e };
        let can_add_extra = |e: usize| extra_cap.is_none_or(|k| e < k);
        // (next listed name or set of names written, members, witness bits,
        // additional members)
        type Key = (usize, usize, u32, usize);
        let mut ids: HashMap<Key, NonterminalId> = HashMap::new();
        let mut queue: VecDeque<Key> = VecDeque::new();
        let mut get = |l: &mut Self, k: Key, queue: &mut VecDeque<Key>| -> Result<NonterminalId> {
            if let Some(&id) = ids.get(&k) {
                return Ok(id);
            }
            let id = l.new_nt("object-rest".to_string())?;
            ids.insert(k, id);
            queue.push_back(k);
            Ok(id)
        };
        let first = get(self, (0, 0, 0, 0), &mut queue)?;
        // In any order with negated member constraints (witnesses), the
        // first component of a key is the set of listed names already
        // written (bit `j` for `props[j]`) instead of the index of the
        // next one in schema order: `2^n` sets, so only for a few names
        // (more keep the schema order, a stricter grammar).
        let any_order = any_order && n <= MAX_EXPANDED_ANY_ORDER;
        // The set of required names, as bits (only in any order, where
        // `n <= 16`; in schema order `n` is unbounded).
        let required: usize = if any_order {
            props.iter().enumerate().filter(|(_, p)| p.2).map(|(j, _)| 1 << j).sum()
        } else {
            0
        };
        while let Some((i, c, mask, e)) = queue.pop_front() {
            let id = get(self, (i, c, mask, e), &mut queue)?;
            let can_add = o.max.is_none_or(|m| c < m);
            let mut alts = Vec::new();
            let member = |l: &Self, key: LexemeId, value: Symbol, next: NonterminalId| {
                let mut alt = Vec::with_capacity(5);
                if c > 0 {
                    alt.push(Symbol::Lexeme(l.comma));
                }
                alt.extend([
                    Symbol::Lexeme(key),
                    Symbol::Lexeme(l.colon),
                    value,
                    Symbol::Nonterminal(next),
                ]);
                alt
            };
            if any_order {
                let used = i;
                if can_add {
                    for (j, (_, opts, _)) in props.iter().enumerate() {
                        if used & (1 << j) != 0 {
                            continue;
                        }
                        for &(sym, bits) in opts {
                            let next =
                                get(self, (used | 1 << j, inc(c), mask | bits, e), &mut queue)?;
                            alts.push(member(self, keys[j], sym, next));
                        }
                    }
                    if can_add_extra(e) {
                        for &(key, vs, bits) in &regions {
                            let next = get(self, (used, inc(c), mask | bits, more(e)), &mut queue)?;
                            alts.push(member(self, key, vs, next));
                        }
                    }
                }
                if required & !used == 0 && c >= o.min && mask == full {
                    alts.push(vec![Symbol::Lexeme(self.rbrace)]);
                }
            } else if i < n {
                if can_add {
                    for &(sym, bits) in &props[i].1 {
                        let next = get(self, (i + 1, inc(c), mask | bits, e), &mut queue)?;
                        alts.push(member(self, keys[i], sym, next));
                    }
                }
                if !props[i].2 {
                    let next = get(self, (i + 1, c, mask, e), &mut queue)?;
                    alts.push(vec![Symbol::Nonterminal(next)]);
                }
            } else {
                if c >= o.min && mask == full {
                    alts.push(vec![Symbol::Lexeme(self.rbrace)]);
                }
                if can_add && can_add_extra(e) {
                    for &(key, vs, bits) in &regions {
                        let next = get(self, (n, inc(c), mask | bits, more(e)), &mut queue)?;
                        alts.push(member(self, key, vs, next));
                    }
                }
            }
            self.set_alts(id, alts);
        }
        let nt = self.alt_nt(
            "object",
            vec![vec![Symbol::Lexeme(self.lbrace), Symbol::Nonterminal(first)]],
        )?;
        Ok(Some(Symbol::Nonterminal(nt)))
    }
}

/// The most negated member constraints any setting allows: the witness
/// bits of a member are a `u32`, and `2^n` options per member stop being
/// a grammar long before.
const MAX_NEGATED_MEMBERS: usize = 16;

/// The most listed names of an object with negated member constraints
/// taken in any order (its rules grow as `2^n`); objects without such
/// constraints use a permutation phrase, whatever their size.
const MAX_EXPANDED_ANY_ORDER: usize = 10;

impl Lowerer<'_, '_> {
    /// An object whose members come in any order: a permutation phrase of
    /// one member per listed name option (named by the property's index)
    /// and one repeatable member per key region, `,`-separated, within
    /// `minProperties`/`maxProperties`. `props[j]` is (name, value options,
    /// required), `keys[j]` its key lexeme; `regions` are (key lexeme,
    /// value, witness bits), all without witnesses here.
    fn object_in_any_order(
        &mut self,
        o: &ObjectSchema,
        props: &[Property],
        keys: &[LexemeId],
        regions: &[(LexemeId, Symbol, u32)],
    ) -> Result<Symbol> {
        // `"key": value` as one member, named by its property or unnamed.
        let listed = props.iter().enumerate().flat_map(|(j, (_, opts, _))| {
            opts.iter().map(move |&(value, _)| (keys[j], value, Some(j as u32)))
        });
        let additional = regions.iter().map(|&(key, value, _)| (key, value, None));
        let mut members = Vec::new();
        for (key, value, name) in listed.chain(additional).collect::<Vec<_>>() {
            let rhs = vec![Symbol::Lexeme(key), Symbol::Lexeme(self.colon), value];
            members.push((Symbol::Nonterminal(self.alt_nt("member", vec![rhs])?), name));
        }
        let required =
            props.iter().enumerate().filter(|(_, p)| p.2).map(|(j, _)| j as u32).collect();
        let braces = (self.lbrace, self.rbrace);
        // A phrase counts all its members alike: the cap on additional
        // members becomes one on all of them.
        let max = match (o.max, self.c.options.max_additional_properties) {
            (None, Some(k)) => Some(props.len().saturating_add(k).max(o.min)),
            (max, _) => max,
        };
        self.bracketed_phrase(
            "object",
            braces,
            members,
            required,
            (o.min, max),
            super::Distinct::No,
        )
    }
}

/// Whether a key region's content is any text at all (`additionalProperties`
/// or a pattern such as `^.*$`), where a length cap keeps the key lexeme a
/// plain counted repetition.
fn is_any_text(content: &RegexAst) -> bool {
    matches!(content, RegexAst::Regex(r) if r == "(?s:.*)")
}
