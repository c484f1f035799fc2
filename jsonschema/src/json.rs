//! Schema text to a `serde_json::Value`, keeping the exact spelling of
//! every number a float would change.
//!
//! serde_json reads a number with a fraction or an exponent as an `f64`:
//! `1e-400` becomes `0`, `0.30000000000000001` becomes `0.3`, and `1e400` is
//! an error. A schema means the decimal it spells, so [`parse`] records the
//! text of each number whose `f64` reading differs from it, by the address
//! of its `Number` in the finished tree; the compiler reads those numbers
//! from the text ([`Exact::decimal`]). Numbers outside the `f64` range are
//! stored as the largest finite `f64` of their sign (only the exact text is
//! ever read for them).

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use crate::number::Decimal;
use crate::resolve::escape_token;

/// The exact texts of the numbers of one or more parsed documents, by the
/// address of their `Number` (the documents are not moved while compiling).
#[derive(Debug, Default)]
pub(crate) struct Exact {
    texts: HashMap<usize, String>,
}

impl Exact {
    fn key(n: &Number) -> usize {
        n as *const Number as usize
    }

    /// The text of `n` as written.
    pub(crate) fn text(&self, n: &Number) -> String {
        self.texts.get(&Exact::key(n)).cloned().unwrap_or_else(|| n.to_string())
    }

    /// The value of `n` as written, or `None` when it needs more than
    /// `max_digits` digits.
    pub(crate) fn decimal(&self, n: &Number, max_digits: usize) -> Option<Decimal> {
        match self.texts.get(&Exact::key(n)) {
            Some(t) => Decimal::parse(t, max_digits),
            None => Decimal::from_json(n, max_digits),
        }
    }
}

/// A syntax error: what, where (1-based line and column, byte offset), and
/// the JSON pointer of the value being read.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    pub(crate) message: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) pointer: String,
}

/// Parses `text` (one JSON value, surrounding whitespace allowed) with at
/// most `max_depth` nested arrays and objects.
pub(crate) fn parse(text: &str, max_depth: usize) -> Result<(Value, Exact), SyntaxError> {
    let mut p = Parser { text: text.as_bytes(), pos: 0, max_depth, by_pointer: HashMap::new() };
    p.ws();
    let mut ptr = String::new();
    let v = p.value(&mut ptr, 0)?;
    p.ws();
    if p.pos != p.text.len() {
        return Err(p.error("trailing characters after the value", ""));
    }
    let mut exact = Exact::default();
    for (pointer, t) in p.by_pointer {
        if let Some(Value::Number(n)) = crate::resolve::lookup(&v, &pointer) {
            exact.texts.insert(Exact::key(n), t);
        }
    }
    Ok((v, exact))
}

struct Parser<'t> {
    text: &'t [u8],
    pos: usize,
    max_depth: usize,
    /// Exact number texts by JSON pointer, while the tree is being built.
    by_pointer: HashMap<String, String>,
}

impl Parser<'_> {
    fn error(&self, message: &str, pointer: &str) -> SyntaxError {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // Columns count characters, not bytes.
        let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
        SyntaxError { message: message.to_string(), line, column, pointer: pointer.to_string() }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8, ptr: &str) -> Result<(), SyntaxError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", b as char), ptr))
        }
    }

    fn value(&mut self, ptr: &mut String, depth: usize) -> Result<Value, SyntaxError> {
        match self.peek() {
            None => Err(self.error("unexpected end of input", ptr)),
            Some(b'{') => self.object(ptr, depth),
            Some(b'[') => self.array(ptr, depth),
            Some(b'"') => Ok(Value::String(self.string(ptr)?)),
            Some(b't') => self.literal("true", Value::Bool(true), ptr),
            Some(b'f') => self.literal("false", Value::Bool(false), ptr),
            Some(b'n') => self.literal("null", Value::Null, ptr),
            Some(b'-' | b'0'..=b'9') => self.number(ptr),
            Some(_) => Err(self.error("expected a JSON value", ptr)),
        }
    }

    fn literal(&mut self, word: &str, v: Value, ptr: &str) -> Result<Value, SyntaxError> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.error("expected a JSON value", ptr))
        }
    }

    fn enter(&self, depth: usize, ptr: &str) -> Result<(), SyntaxError> {
        if depth >= self.max_depth {
            let msg = format!(
                "arrays and objects nested more than {} deep (Limits::max_json_depth)",
                self.max_depth
            );
            return Err(self.error(&msg, ptr));
        }
        Ok(())
    }

    fn array(&mut self, ptr: &mut String, depth: usize) -> Result<Value, SyntaxError> {
        self.enter(depth, ptr)?;
        self.pos += 1;
        self.ws();
        let mut out = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(out));
        }
        loop {
            let len = ptr.len();
            ptr.push('/');
            ptr.push_str(&out.len().to_string());
            self.ws();
            out.push(self.value(ptr, depth + 1)?);
            ptr.truncate(len);
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(out));
                }
                _ => return Err(self.error("expected `,` or `]`", ptr)),
            }
        }
    }

    fn object(&mut self, ptr: &mut String, depth: usize) -> Result<Value, SyntaxError> {
        self.enter(depth, ptr)?;
        self.pos += 1;
        self.ws();
        let mut out = Map::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(out));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key", ptr));
            }
            let key = self.string(ptr)?;
            self.ws();
            self.expect(b':', ptr)?;
            self.ws();
            let len = ptr.len();
            ptr.push('/');
            ptr.push_str(&escape_token(&key));
            if out.contains_key(&key) {
                // A repeated key replaces the earlier value (as in
                // serde_json): so do its numbers' texts.
                let prefix = format!("{ptr}/");
                self.by_pointer.retain(|p, _| p != ptr && !p.starts_with(&prefix));
            }
            let v = self.value(ptr, depth + 1)?;
            ptr.truncate(len);
            out.insert(key, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(out));
                }
                _ => return Err(self.error("expected `,` or `}`", ptr)),
            }
        }
    }

    fn hex4(&mut self, ptr: &str) -> Result<u32, SyntaxError> {
        let digits = self.text.get(self.pos..self.pos + 4).unwrap_or(&[]);
        let s = std::str::from_utf8(digits).ok().filter(|s| s.len() == 4);
        match s.and_then(|s| u32::from_str_radix(s, 16).ok()) {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error("invalid `\\u` escape", ptr)),
        }
    }

    fn string(&mut self, ptr: &str) -> Result<String, SyntaxError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is a `&str`, and the run stops at ASCII bytes only.
            out.push_str(std::str::from_utf8(&self.text[start..self.pos]).unwrap_or_default());
            match self.peek() {
                None => return Err(self.error("unterminated string", ptr)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.error("unterminated string", ptr))?;
                    self.pos += 1;
                    let ch = match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4(ptr)?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.text[self.pos..].starts_with(b"\\u") {
                                    return Err(self.error("lone leading surrogate", ptr));
                                }
                                self.pos += 2;
                                let lo = self.hex4(ptr)?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.error("invalid surrogate pair", ptr));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            char::from_u32(cp)
                                .ok_or_else(|| self.error("lone trailing surrogate", ptr))?
                        }
                        _ => return Err(self.error("invalid escape", ptr)),
                    };
                    out.push(ch);
                }
                Some(_) => return Err(self.error("control character in a string", ptr)),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self, ptr: &str) -> Result<Value, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = self.digits();
        if n == 0 || (n > 1 && self.text[int_start] == b'0') {
            self.pos = start;
            return Err(self.error("invalid number", ptr));
        }
        let mut plain = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            plain = false;
            if self.digits() == 0 {
                return Err(self.error("invalid number: no digit after `.`", ptr));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            plain = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number: no digit in the exponent", ptr));
            }
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("0");
        if plain {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Number(i.into()));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::Number(u.into()));
            }
        }
        let f: f64 = text.parse().unwrap_or(0.0);
        let f = if f.is_finite() { f } else { f64::MAX.copysign(f) };
        let n = Number::from_f64(f).unwrap_or_else(|| 0.into());
        // Recorded unless the float reads as the same decimal; a number
        // too long to compare (every `f64` has fewer than 1,100 digits
        // written out) is recorded too.
        let same = match (Decimal::parse(text, 1_100), Decimal::from_json(&n, 1_100)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if !same {
            self.by_pointer.insert(ptr.to_string(), text.to_string());
        }
        Ok(Value::Number(n))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn exact_numbers_are_kept_where_floats_differ() {
        let text = r#"{"a": 1e-400, "b": [0.5, 1e400, 12345678901234567890123], "c": 3}"#;
        let (v, exact) = parse(text, 64).unwrap();
        let d = |p: &str| exact.decimal(v.pointer(p).unwrap().as_number().unwrap(), 1000);
        assert_eq!(d("/a").unwrap().to_string(), format!("0.{}1", "0".repeat(399)));
        assert_eq!(d("/b/0").unwrap().to_string(), "0.5");
        assert_eq!(d("/b/1").unwrap().to_string(), format!("1{}", "0".repeat(400)));
        assert_eq!(d("/b/2").unwrap().to_string(), "12345678901234567890123");
        assert_eq!(d("/c").unwrap().to_string(), "3");
        assert_eq!(exact.texts.len(), 3, "only the numbers a float changes");
    }

    #[test]
    fn repeated_keys_replace_numbers() {
        let (v, exact) = parse(r#"{"a": 1e-400, "a": 0}"#, 64).unwrap();
        let n = v.pointer("/a").unwrap().as_number().unwrap();
        assert!(exact.decimal(n, 1000).unwrap().is_zero());
    }

    #[test]
    fn errors_have_lines_columns_and_pointers() {
        let e = parse("{\n  \"a\": [1, 2,, 3]\n}", 64).unwrap_err();
        assert_eq!((e.line, e.column, e.pointer.as_str()), (2, 14, "/a/2"));
        let e = parse("[[[[1]]]]", 3).unwrap_err();
        assert!(e.message.contains("max_json_depth"), "{}", e.message);
        for bad in ["", "01", "1.", "1e", "[1,]", "{\"a\" 1}", "\"\\ud800\"", "\"a", "tru", "1 2"] {
            assert!(parse(bad, 64).is_err(), "{bad:?}");
        }
        for good in ["0", "-0.0e+0", " [] ", "{}", "\"\\u00e9\\ud83d\\ude00\"", "1E-2"] {
            assert!(parse(good, 64).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn values_equal_serde_json_on_ordinary_text() {
        let text = r#"{"x": [1, -2, 3.25, "s\n\u00e9", true, null, {"y": {}}], "z": 1.5e3}"#;
        let (v, _) = parse(text, 64).unwrap();
        let want: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v, want);
    }
}
