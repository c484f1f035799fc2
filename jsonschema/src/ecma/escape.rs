//! Escapes and character classes of ECMA-262 patterns, translated to
//! derivre's syntax with their ECMA-262 meanings (Unicode mode), accepting
//! what Annex B gives an unambiguous meaning (identity escapes of
//! punctuation, `-` next to a class escape in a class).

use super::Parser;

const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// One escape sequence, decoded.
pub(super) enum Escape {
    Char(char),
    /// Class contents (for use inside `[...]`) and whether the class is negated.
    Class(&'static str, bool),
    /// Already-translated text valid outside classes only (`\p{..}`).
    Raw(String),
}

pub(super) fn push_literal(out: &mut String, c: char, in_class: bool) {
    let meta = if in_class { r"\[]^-&~" } else { r"\.+*?()|[]{}^$#&-~" };
    if meta.contains(c) {
        out.push('\\');
        out.push(c);
    } else if c.is_control() || c == ' ' && in_class {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

impl Parser {
    fn hex(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..n {
            let d = self.peek_at(k)?.to_digit(16)?;
            v = v * 16 + d;
        }
        self.pos += n;
        Some(v)
    }

    pub(super) fn escape(&mut self, in_class: bool) -> Result<Escape, String> {
        let c = self.peek().ok_or("trailing backslash")?;
        self.pos += 1;
        let ch = |c: char| Ok(Escape::Char(c));
        match c {
            'd' => Ok(Escape::Class(DIGIT, false)),
            'D' => Ok(Escape::Class(DIGIT, true)),
            'w' => Ok(Escape::Class(WORD, false)),
            'W' => Ok(Escape::Class(WORD, true)),
            's' => Ok(Escape::Class(SPACE, false)),
            'S' => Ok(Escape::Class(SPACE, true)),
            't' => ch('\t'),
            'n' => ch('\n'),
            'r' => ch('\r'),
            'v' => ch('\x0B'),
            'f' => ch('\x0C'),
            'b' if in_class => ch('\x08'),
            'b' | 'B' => Err("word boundaries `\\b`/`\\B` are not supported".to_string()),
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => ch('\0'),
            '1'..='9' => Err("backreferences are not supported".to_string()),
            'k' if self.peek() == Some('<') => {
                Err("named backreferences are not supported".to_string())
            }
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.pos += 1;
                    ch(char::from(l as u8 % 32))
                }
                // Annex B: a backslash, then `c` read again as itself.
                _ => {
                    self.pos -= 1;
                    ch('\\')
                }
            },
            'x' => match self.hex(2) {
                Some(v) => ch(char::from_u32(v).ok_or("invalid `\\x` escape")?),
                None => ch('x'),
            },
            'u' => {
                let v = if self.peek() == Some('{') {
                    self.pos += 1;
                    let mut v = 0u32;
                    let mut n = 0;
                    while let Some(d) = self.peek().and_then(|d| d.to_digit(16)) {
                        v = v.saturating_mul(16).saturating_add(d);
                        self.pos += 1;
                        n += 1;
                    }
                    if n == 0 || !self.eat('}') {
                        return Err("invalid `\\u{...}` escape".to_string());
                    }
                    v
                } else {
                    match self.hex(4) {
                        Some(v) => v,
                        None => return ch('u'),
                    }
                };
                if (0xD800..0xDC00).contains(&v) {
                    // A surrogate pair written as two escapes.
                    if self.peek() == Some('\\') && self.peek_at(1) == Some('u') {
                        self.pos += 2;
                        let lo = self.hex(4).ok_or("unpaired surrogate escape")?;
                        if (0xDC00..0xE000).contains(&lo) {
                            let cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                            return ch(char::from_u32(cp).ok_or("invalid surrogate pair")?);
                        }
                    }
                    return Err("unpaired surrogate escape".to_string());
                }
                ch(char::from_u32(v).ok_or("invalid `\\u` escape")?)
            }
            'p' | 'P' if self.peek() == Some('{') => {
                let mut name = String::new();
                self.pos += 1;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '}' {
                        break;
                    }
                    if !(c.is_ascii_alphanumeric() || c == '_' || c == '=') {
                        return Err("invalid Unicode property escape".to_string());
                    }
                    name.push(c);
                }
                if in_class {
                    return Err(
                        "Unicode property escapes inside classes are not supported".to_string()
                    );
                }
                Ok(Escape::Raw(format!("\\{c}{{{name}}}")))
            }
            c if c.is_ascii_alphanumeric() => Err(format!("unknown escape `\\{c}`")),
            c => ch(c),
        }
    }

    pub(super) fn class(&mut self) -> Result<String, String> {
        let negated = self.eat('^');
        let mut items = String::new();
        let mut empty = true;
        loop {
            let c = self.peek().ok_or("unclosed character class")?;
            if c == ']' {
                self.pos += 1;
                break;
            }
            empty = false;
            let first = self.class_atom()?;
            // A range `a-b` (a `-` before `]` is a literal). Next to a
            // class escape (`[\w-.]`) the `-` is a literal (Annex B).
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let second = self.class_atom()?;
                match (&first, &second) {
                    (Escape::Char(lo), Escape::Char(hi)) => {
                        if hi < lo {
                            return Err(format!(
                                "class range out of order: `{}-{}`",
                                lo.escape_debug(),
                                hi.escape_debug()
                            ));
                        }
                        push_literal(&mut items, *lo, true);
                        items.push('-');
                        push_literal(&mut items, *hi, true);
                        continue;
                    }
                    (Escape::Raw(_), _) | (_, Escape::Raw(_)) => {
                        return Err("unsupported escape in class".to_string());
                    }
                    _ => {
                        // Three atoms: the escape, `-` and the other one.
                        self.push_class_atom(&mut items, first)?;
                        push_literal(&mut items, '-', true);
                        self.push_class_atom(&mut items, second)?;
                        continue;
                    }
                }
            }
            self.push_class_atom(&mut items, first)?;
        }
        match (empty, negated) {
            (true, true) => Ok("(?s:.)".to_string()),
            (true, false) => Err("the empty class `[]` never matches".to_string()),
            // derivre 0.3.13's JSON quoting of a class holding every control
            // character also admits the escapes `\\` and `\"` even when the
            // class excludes `\` or `"`, which would accept invalid strings
            // (`[^\\]` taking `"a\\b"`). A negated class therefore leaves out
            // U+001F too, which keeps it off that path (a documented subset).
            _ if negated => Ok(format!("[^{items}\\x{{1F}}]")),
            _ => Ok(format!("[{items}]")),
        }
    }

    fn push_class_atom(&self, items: &mut String, atom: Escape) -> Result<(), String> {
        match atom {
            Escape::Char(c) => push_literal(items, c, true),
            Escape::Class(set, false) => items.push_str(set),
            Escape::Class(set, true) => items.push_str(&format!("[^{set}]")),
            Escape::Raw(_) => return Err("unsupported escape in class".to_string()),
        }
        Ok(())
    }

    fn class_atom(&mut self) -> Result<Escape, String> {
        let c = self.peek().ok_or("unclosed character class")?;
        self.pos += 1;
        if c == '\\' { self.escape(true) } else { Ok(Escape::Char(c)) }
    }
}
