//! The canonical form of a JSON value's text, for distinct phrase members
//! (`uniqueItems`): two texts have equal canonical forms exactly when they
//! spell equal JSON values (numbers by value, so `1`, `1.0` and `10e-1`
//! are one; strings after their escapes are decoded; objects regardless of
//! member order).
//!
//! The form is a byte string, self-delimiting so that it nests:
//! `n`, `t`, `f` for the literals; `#` sign digits `e` exponent `;` for a
//! number (digits without leading or trailing zeros, `#0;` for zero);
//! `"` a 4-byte length and the decoded UTF-8 bytes for a string; `[` items
//! `]` for an array; `{` members `}` for an object, each member its key's
//! form then its value's, members sorted by their bytes.

/// Nesting deeper than this is not canonicalized (the caller compares the
/// bytes instead); the recursion stays bounded on hostile text.
const MAX_DEPTH: usize = 128;

/// Writes the canonical form of the one JSON value in `text` into `out`
/// (cleared first). Leading whitespace and one leading `,` (the separator
/// of a phrase member after the first) and trailing whitespace are
/// skipped. `false` when the rest is not exactly one JSON value, or it
/// nests deeper than [`MAX_DEPTH`], or an exponent does not fit an `i64`.
pub(super) fn canonical(text: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut r = Reader { s: text, i: 0 };
    r.ws();
    if r.peek() == Some(b',') {
        r.i += 1;
        r.ws();
    }
    if !r.value(out, 0) {
        return false;
    }
    r.ws();
    r.i == text.len()
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, out: &mut Vec<u8>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match self.peek() {
            Some(b'n') if self.eat(b"null") => out.push(b'n'),
            Some(b't') if self.eat(b"true") => out.push(b't'),
            Some(b'f') if self.eat(b"false") => out.push(b'f'),
            Some(b'"') => return self.string(out),
            Some(b'[') => {
                self.i += 1;
                out.push(b'[');
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        if !self.value(out, depth + 1) {
                            return false;
                        }
                        match self.after_member(b']') {
                            Some(true) => {}
                            Some(false) => break,
                            None => return false,
                        }
                    }
                }
                out.push(b']');
            }
            Some(b'{') => return self.object(out, depth),
            Some(b'-' | b'0'..=b'9') => return self.number(out),
            _ => return false,
        }
        true
    }

    fn object(&mut self, out: &mut Vec<u8>, depth: usize) -> bool {
        self.i += 1;
        self.ws();
        let mut members: Vec<Vec<u8>> = Vec::new();
        if self.peek() == Some(b'}') {
            self.i += 1;
        } else {
            loop {
                let mut m = Vec::new();
                if self.peek() != Some(b'"') || !self.string(&mut m) {
                    return false;
                }
                self.ws();
                if !self.eat(b":") {
                    return false;
                }
                self.ws();
                if !self.value(&mut m, depth + 1) {
                    return false;
                }
                members.push(m);
                match self.after_member(b'}') {
                    Some(true) => {}
                    Some(false) => break,
                    None => return false,
                }
            }
        }
        // A key's form is length-prefixed, so sorting whole members sorts
        // by key first.
        members.sort_unstable();
        out.push(b'{');
        for m in &members {
            out.extend_from_slice(m);
        }
        out.push(b'}');
        true
    }

    /// After an array item or object member: `,` (and the whitespace after
    /// it) means another follows (`Some(true)`), `close` ends the container
    /// (`Some(false)`), anything else is not JSON (`None`).
    fn after_member(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// A string starting at `"`: `"`, the decoded length (4 bytes, little
    /// endian) and the decoded bytes.
    fn string(&mut self, out: &mut Vec<u8>) -> bool {
        self.i += 1;
        out.push(b'"');
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        loop {
            let Some(c) = self.peek() else { return false };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else { return false };
                    self.i += 1;
                    let ch = match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let Some(mut cp) = self.hex4() else { return false };
                            // A high surrogate followed by `\u` and a low one is
                            // one scalar value; a lone surrogate stays a code unit
                            // (encoded as its three generalized UTF-8 bytes).
                            if (0xD800..0xDC00).contains(&cp)
                                && self.s[self.i..].starts_with(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                match self.hex4() {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                    }
                                    _ => self.i = save,
                                }
                            }
                            push_utf8(out, cp);
                            continue;
                        }
                        _ => return false,
                    };
                    out.push(ch);
                }
                _ => out.push(c),
            }
        }
        let n = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&n.to_le_bytes());
        true
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let mut v = 0;
        for &c in h {
            v = v * 16 + (c as char).to_digit(16)?;
        }
        self.i += 4;
        Some(v)
    }

    /// A number: `#`, `-` when negative and not zero, the significant
    /// digits, `e`, the exponent of the last digit, `;`.
    fn number(&mut self, out: &mut Vec<u8>) -> bool {
        let neg = self.eat(b"-");
        let mut digits: Vec<u8> = Vec::new();
        let int_at = self.i;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            digits.push(c);
            self.i += 1;
        }
        if self.i == int_at {
            return false;
        }
        let mut exp: i64 = 0;
        if self.peek() == Some(b'.') {
            self.i += 1;
            let frac_at = self.i;
            while let Some(c @ b'0'..=b'9') = self.peek() {
                digits.push(c);
                self.i += 1;
            }
            if self.i == frac_at {
                return false;
            }
            exp = -((self.i - frac_at) as i64);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            let eneg = match self.peek() {
                Some(b'-') => {
                    self.i += 1;
                    true
                }
                Some(b'+') => {
                    self.i += 1;
                    false
                }
                _ => false,
            };
            let at = self.i;
            let mut e: i64 = 0;
            while let Some(c @ b'0'..=b'9') = self.peek() {
                let Some(x) = e.checked_mul(10).and_then(|x| x.checked_add((c - b'0') as i64))
                else {
                    return false;
                };
                e = x;
                self.i += 1;
            }
            if self.i == at {
                return false;
            }
            let Some(x) = exp.checked_add(if eneg { -e } else { e }) else { return false };
            exp = x;
        }
        let lead = digits.iter().take_while(|&&c| c == b'0').count();
        let digits = &digits[lead..];
        let trail = digits.iter().rev().take_while(|&&c| c == b'0').count();
        let digits = &digits[..digits.len() - trail];
        out.push(b'#');
        if digits.is_empty() {
            out.extend_from_slice(b"0;");
            return true;
        }
        let Some(exp) = exp.checked_add(trail as i64) else { return false };
        if neg {
            out.push(b'-');
        }
        out.extend_from_slice(digits);
        out.push(b'e');
        out.extend_from_slice(exp.to_string().as_bytes());
        out.push(b';');
        true
    }
}

/// Appends code point `cp` (a scalar value or a lone surrogate) as UTF-8
/// (generalized to surrogates, as WTF-8 does).
fn push_utf8(out: &mut Vec<u8>, cp: u32) {
    match cp {
        0..0x80 => out.push(cp as u8),
        0x80..0x800 => out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
        0x800..0x10000 => out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    fn form(t: &str) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        canonical(t.as_bytes(), &mut out).then_some(out)
    }

    #[test]
    fn equal_values_have_equal_forms() {
        let same = [
            ("1", "1.0"),
            ("1", " , 10e-1 "),
            ("-0", "0.000e5"),
            ("120", "1.2E2"),
            ("\"A\"", "\"\\u0041\""),
            ("\"\\ud83d\\ude00\"", "\"😀\""),
            ("\"a/b\"", "\"a\\/b\""),
            ("{\"a\":1,\"b\":2}", "{ \"b\" : 2.0 , \"a\" : 1 }"),
            ("[1,[\"x\"],{}]", "[1.0, [\"\\u0078\"], { }]"),
        ];
        for (a, b) in same {
            assert_eq!(form(a), form(b), "{a} vs {b}");
            assert!(form(a).is_some(), "{a}");
        }
    }

    #[test]
    fn different_values_have_different_forms() {
        let differ = [
            ("1", "-1"),
            ("1", "10"),
            ("0.1", "1"),
            ("\"1\"", "1"),
            ("\"ab\"", "\"a\""),
            ("[\"a\",\"b\"]", "[\"ab\"]"),
            ("[1,2]", "[2,1]"),
            ("{\"a\":1}", "{\"a\":1,\"b\":1}"),
            ("{\"a\":\"b\"}", "{\"b\":\"a\"}"),
            ("null", "false"),
            ("true", "\"true\""),
            ("[]", "{}"),
        ];
        for (a, b) in differ {
            assert_ne!(form(a), form(b), "{a} vs {b}");
        }
    }

    #[test]
    fn not_one_value() {
        for t in
            ["", "1 2", "[1", "\"a", "nul", "1e", "-", "1.", "{\"a\"}", "1e99999999999999999999"]
        {
            assert_eq!(form(t), None, "{t}");
        }
    }
}
