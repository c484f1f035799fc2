//! ECMA-262 `pattern` regexes translated to derivre's (regex-syntax) dialect.
//!
//! JSON Schema patterns are ECMA-262 regexes searched anywhere in the string
//! (unanchored). The translation makes the search explicit (`.*` on each side
//! of an alternative unless it is anchored with `^`/`$`) and spells out the
//! classes whose meaning differs between the dialects: `\d`, `\w`, `\s` and
//! `.` are ASCII or ECMA-specific sets in ECMA-262 but Unicode-aware in
//! regex-syntax. Constructs with no regular equivalent (backreferences,
//! lookarounds, word boundaries) are errors.

/// Translates `pattern` into an anchored regex (derivre syntax) matching
/// exactly the strings in which an ECMA-262 search for `pattern` succeeds.
pub(crate) fn translate(pattern: &str) -> Result<String, String> {
    let mut p = Parser { chars: pattern.chars().collect(), pos: 0 };
    let alts = p.alternation(0)?;
    if p.pos != p.chars.len() {
        return Err(format!("unbalanced `)` at offset {}", p.pos));
    }
    if alts.is_empty() {
        return Err("the pattern can never match (misplaced anchors)".to_string());
    }
    let mut out = Vec::new();
    for alt in alts {
        let mut s = String::new();
        if !alt.start {
            s.push_str("(?s:.*)");
        }
        s.push_str("(?:");
        s.push_str(&alt.body);
        s.push(')');
        if !alt.end {
            s.push_str("(?s:.*)");
        }
        out.push(s);
    }
    Ok(out.join("|"))
}

/// The most anchored variants one pattern may expand to.
const MAX_ANCHOR_SPLITS: usize = 256;

/// A parsed atom: translated text, or a group's variants.
enum Atom {
    Text(String),
    Group(Vec<Alt>),
}

struct Alt {
    start: bool,
    end: bool,
    body: String,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// One escape sequence, decoded.
enum Escape {
    Char(char),
    /// Class contents (for use inside `[...]`) and whether the class is negated.
    Class(&'static str, bool),
    /// Already-translated text valid outside classes only (`\p{..}`).
    Raw(String),
}

fn push_literal(out: &mut String, c: char, in_class: bool) {
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
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self, depth: usize) -> Result<Vec<Alt>, String> {
        if depth > 64 {
            return Err("groups nested too deeply".to_string());
        }
        let mut alts = self.sequence(depth)?;
        while self.eat('|') {
            alts.extend(self.sequence(depth)?);
        }
        if alts.len() > MAX_ANCHOR_SPLITS {
            return Err("too many anchored alternatives".to_string());
        }
        Ok(alts)
    }

    /// One alternative, as the anchored variants it expands to.
    ///
    /// Anchors inside groups are hoisted: `(^a|b)c` becomes the variants
    /// `^ac` and `bc`. A variant where `^` follows consumed text, or text
    /// follows `$`, can never match (no multiline flag) and is dropped.
    fn sequence(&mut self, depth: usize) -> Result<Vec<Alt>, String> {
        let mut partials = vec![Alt { start: false, end: false, body: String::new() }];
        loop {
            match self.peek() {
                None | Some('|') | Some(')') => break,
                Some('^') => {
                    self.pos += 1;
                    partials.retain(|p| p.body.is_empty());
                    for p in &mut partials {
                        p.start = true;
                    }
                }
                Some('$') => {
                    self.pos += 1;
                    for p in &mut partials {
                        p.end = true;
                    }
                }
                Some(_) => {
                    let atom = self.atom(depth)?;
                    let quant = self.quantifier()?;
                    match atom {
                        Atom::Text(t) => {
                            partials.retain(|p| !p.end);
                            for p in &mut partials {
                                p.body.push_str(&t);
                                p.body.push_str(&quant);
                            }
                        }
                        Atom::Group(inner) => {
                            let anchored = inner.iter().any(|a| a.start || a.end);
                            if !anchored {
                                let bodies: Vec<&str> =
                                    inner.iter().map(|a| a.body.as_str()).collect();
                                let t = format!("(?:{}){quant}", bodies.join("|"));
                                partials.retain(|p| !p.end);
                                for p in &mut partials {
                                    p.body.push_str(&t);
                                }
                                continue;
                            }
                            if !quant.is_empty() {
                                return Err(
                                    "a quantified group containing `^` or `$` is not supported"
                                        .to_string(),
                                );
                            }
                            let mut next = Vec::new();
                            for p in &partials {
                                for g in &inner {
                                    if (g.start && !p.body.is_empty())
                                        || (p.end && !g.body.is_empty())
                                    {
                                        continue;
                                    }
                                    next.push(Alt {
                                        start: p.start || g.start,
                                        end: p.end || g.end,
                                        body: format!("{}(?:{})", p.body, g.body),
                                    });
                                }
                            }
                            if next.len() > MAX_ANCHOR_SPLITS {
                                return Err("too many anchored alternatives".to_string());
                            }
                            partials = next;
                        }
                    }
                }
            }
        }
        Ok(partials)
    }

    /// Parses a quantifier if one follows; returns its regex-syntax text.
    fn quantifier(&mut self) -> Result<String, String> {
        let q = match self.peek() {
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                c.to_string()
            }
            Some('{') => match self.braces() {
                Some((text, len)) => {
                    self.pos += len;
                    text
                }
                None => return Ok(String::new()),
            },
            _ => return Ok(String::new()),
        };
        // A lazy quantifier matches the same set of whole strings.
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?'))
            || (self.peek() == Some('{') && self.braces().is_some())
        {
            return Err("quantifier follows a quantifier".to_string());
        }
        Ok(q)
    }

    /// `{n}`, `{n,}`, `{n,m}` at the current position: text and length.
    fn braces(&self) -> Option<(String, usize)> {
        let mut i = self.pos + 1;
        let mut text = String::from("{");
        let mut digits = 0;
        while let Some(c) = self.chars.get(i).filter(|c| c.is_ascii_digit()) {
            text.push(*c);
            i += 1;
            digits += 1;
        }
        if digits == 0 {
            return None;
        }
        let n: u64 = text[1..].parse().ok()?;
        if self.chars.get(i) == Some(&',') {
            text.push(',');
            i += 1;
            let mut m = String::new();
            while let Some(c) = self.chars.get(i).filter(|c| c.is_ascii_digit()) {
                m.push(*c);
                i += 1;
            }
            if !m.is_empty() && m.parse::<u64>().ok()? < n {
                return None;
            }
            text.push_str(&m);
        }
        if self.chars.get(i) != Some(&'}') {
            return None;
        }
        text.push('}');
        Some((text, i + 1 - self.pos))
    }

    fn atom(&mut self, depth: usize) -> Result<Atom, String> {
        let c = self.peek().ok_or("unexpected end")?;
        self.pos += 1;
        match c {
            '(' => {
                if self.eat('?') {
                    match (self.peek(), self.peek_at(1)) {
                        (Some(':'), _) => self.pos += 1,
                        (Some('<'), Some(n)) if n != '=' && n != '!' => {
                            // A named group: the name does not matter here.
                            while let Some(c) = self.peek() {
                                self.pos += 1;
                                if c == '>' {
                                    break;
                                }
                            }
                        }
                        _ => return Err("lookaround assertions are not supported".to_string()),
                    }
                }
                let alts = self.alternation(depth + 1)?;
                if !self.eat(')') {
                    return Err("unclosed group".to_string());
                }
                Ok(Atom::Group(alts))
            }
            '[' => self.class().map(Atom::Text),
            '.' => Ok(Atom::Text(r"[^\n\r\x{2028}\x{2029}]".to_string())),
            '\\' => match self.escape(false)? {
                Escape::Char(c) => {
                    let mut s = String::new();
                    push_literal(&mut s, c, false);
                    Ok(Atom::Text(s))
                }
                Escape::Class(set, negated) => {
                    Ok(Atom::Text(format!("[{}{}]", if negated { "^" } else { "" }, set)))
                }
                Escape::Raw(s) => Ok(Atom::Text(s)),
            },
            '*' | '+' | '?' => Err(format!("nothing to repeat before `{c}`")),
            '{' if {
                self.pos -= 1;
                let q = self.braces().is_some();
                self.pos += 1;
                q
            } =>
            {
                Err("nothing to repeat before `{`".to_string())
            }
            ')' => Err("unbalanced `)`".to_string()),
            c => {
                let mut s = String::new();
                push_literal(&mut s, c, false);
                Ok(Atom::Text(s))
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..n {
            let d = self.peek_at(k)?.to_digit(16)?;
            v = v * 16 + d;
        }
        self.pos += n;
        Some(v)
    }

    fn escape(&mut self, in_class: bool) -> Result<Escape, String> {
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
                _ => ch('\\').and(Err("invalid `\\c` escape".to_string())),
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

    fn class(&mut self) -> Result<String, String> {
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
            // A range `a-b` (a `-` before `]` is a literal).
            if self.peek() == Some('-')
                && self.peek_at(1).is_some_and(|c| c != ']')
                && let Escape::Char(lo) = first
            {
                self.pos += 1;
                match self.class_atom()? {
                    Escape::Char(hi) => {
                        if hi < lo {
                            return Err("class range out of order".to_string());
                        }
                        push_literal(&mut items, lo, true);
                        items.push('-');
                        push_literal(&mut items, hi, true);
                        continue;
                    }
                    _ => return Err("class range with a class endpoint".to_string()),
                }
            }
            match first {
                Escape::Char(c) => push_literal(&mut items, c, true),
                Escape::Class(set, false) => items.push_str(set),
                Escape::Class(set, true) => items.push_str(&format!("[^{set}]")),
                Escape::Raw(_) => return Err("unsupported escape in class".to_string()),
            }
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

    fn class_atom(&mut self) -> Result<Escape, String> {
        let c = self.peek().ok_or("unclosed character class")?;
        self.pos += 1;
        if c == '\\' { self.escape(true) } else { Ok(Escape::Char(c)) }
    }
}
