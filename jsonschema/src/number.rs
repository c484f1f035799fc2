//! Exact decimals and the regexes of numeric ranges.
//!
//! Bounds are built digit by digit on the magnitude text `I(.F)?` (`I`
//! without leading zeros, `F` any digits) and combined with derivre's
//! intersection: `minimum` and `maximum` are two regexes in an `And`, so no
//! range product is ever built. A bounded number is matched without an
//! exponent (a stricter grammar, never a looser one).

use std::cmp::Ordering;

use derivre::RegexAst;

/// An exact decimal: sign, integer digits (no leading zeros, `"0"` for
/// zero) and fraction digits (no trailing zeros).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Decimal {
    /// Invariant: false when the value is zero.
    pub(crate) neg: bool,
    pub(crate) int: String,
    pub(crate) frac: String,
}

impl Decimal {
    /// Parses JSON number text (`-12.5e-3`); `None` when malformed or when the
    /// expanded form would exceed `max_digits` digits.
    pub(crate) fn parse(text: &str, max_digits: usize) -> Option<Decimal> {
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (ip, fp) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !fp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits: String = format!("{ip}{fp}");
        // The decimal point sits after `point` digits of `digits`. A point
        // this far out needs more digits than allowed: refused before the
        // zeros are written out.
        let point = (ip.len() as i64).saturating_add(exp);
        if point.unsigned_abs() > (max_digits as u64).saturating_add(digits.len() as u64) {
            return None;
        }
        let (int, frac) = if point <= 0 {
            (String::new(), format!("{}{}", "0".repeat((-point) as usize), digits))
        } else if point as usize >= digits.len() {
            (format!("{}{}", digits, "0".repeat(point as usize - digits.len())), String::new())
        } else {
            (digits[..point as usize].to_string(), digits[point as usize..].to_string())
        };
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let frac = frac.trim_end_matches('0');
        if int.len() + frac.len() > max_digits {
            return None;
        }
        let is_zero = int == "0" && frac.is_empty();
        Some(Decimal { neg: neg && !is_zero, int: int.to_string(), frac: frac.to_string() })
    }

    pub(crate) fn from_json(n: &serde_json::Number, max_digits: usize) -> Option<Decimal> {
        Decimal::parse(&n.to_string(), max_digits)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.int == "0" && self.frac.is_empty()
    }

    pub(crate) fn abs(&self) -> Decimal {
        Decimal { neg: false, ..self.clone() }
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        self.int
            .len()
            .cmp(&other.int.len())
            .then_with(|| self.int.cmp(&other.int))
            .then_with(|| self.frac.cmp(&other.frac))
    }

    /// The value as `coef * 10^-scale` with `coef` non-negative, if it fits.
    pub(crate) fn to_scaled(&self) -> Option<(u128, u32)> {
        let digits = format!("{}{}", self.int, self.frac);
        let coef: u128 = digits.parse().ok()?;
        Some((coef, self.frac.len() as u32))
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.neg {
            write!(f, "-")?;
        }
        write!(f, "{}", self.int)?;
        if !self.frac.is_empty() {
            write!(f, ".{}", self.frac)?;
        }
        Ok(())
    }
}

/// A bound: the value and whether it is exclusive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Bound {
    pub(crate) value: Decimal,
    pub(crate) exclusive: bool,
}

fn lit(s: &str) -> RegexAst {
    RegexAst::Literal(s.to_string())
}

fn rx(s: &str) -> RegexAst {
    RegexAst::Regex(s.to_string())
}

fn digit_range(lo: u8, hi: u8) -> RegexAst {
    if lo == hi {
        lit(&(lo as char).to_string())
    } else {
        rx(&format!("[{}-{}]", lo as char, hi as char))
    }
}

fn any_digits(n: usize) -> RegexAst {
    RegexAst::Repeat(Box::new(rx("[0-9]")), n as u32, n as u32)
}

const INT_MAG: &str = "(0|[1-9][0-9]*)";
const FRAC_ANY: &str = r"(\.[0-9]+)?";

fn mag_any() -> RegexAst {
    rx(&format!("{INT_MAG}{FRAC_ANY}"))
}

/// Fraction texts (`""` or `.D`) whose value is below, equal to, or above `0.fm`.
fn frac_cmp(fm: &str, want_less: bool, inclusive: bool) -> RegexAst {
    let fb = fm.as_bytes();
    let mut alts = Vec::new();
    // No fraction at all: equal when fm is empty, less otherwise.
    if (fm.is_empty() && inclusive) || (!fm.is_empty() && want_less) {
        alts.push(RegexAst::EmptyString);
    }
    for i in 0..fb.len() {
        let d = fb[i];
        if want_less && d > b'0' {
            alts.push(RegexAst::Concat(vec![
                lit(&format!(".{}", &fm[..i])),
                digit_range(b'0', d - 1),
                rx("[0-9]*"),
            ]));
        }
        if !want_less && d < b'9' {
            alts.push(RegexAst::Concat(vec![
                lit(&format!(".{}", &fm[..i])),
                digit_range(d + 1, b'9'),
                rx("[0-9]*"),
            ]));
        }
        if want_less && i >= 1 {
            // A proper prefix of fm is below it (fm has no trailing zeros).
            alts.push(lit(&format!(".{}", &fm[..i])));
        }
    }
    if inclusive {
        if fm.is_empty() {
            alts.push(rx(r"\.0+"));
        } else {
            alts.push(RegexAst::Concat(vec![lit(&format!(".{fm}")), rx("0*")]));
        }
    }
    if !want_less {
        alts.push(RegexAst::Concat(vec![lit(&format!(".{fm}")), rx("0*[1-9][0-9]*")]));
    }
    RegexAst::Or(alts)
}

/// Magnitude texts `I(.F)?` whose value compares to `m` (non-negative) as asked.
fn mag_cmp(m: &Decimal, want_less: bool, inclusive: bool) -> RegexAst {
    let im = m.int.as_bytes();
    let len = im.len();
    let mut alts = Vec::new();
    let frac_any = rx(FRAC_ANY);
    if want_less {
        if len >= 2 {
            let shorter = if len == 2 {
                rx("(0|[1-9])")
            } else {
                rx(&format!("(0|[1-9][0-9]{{0,{}}})", len - 2))
            };
            alts.push(RegexAst::Concat(vec![shorter, frac_any.clone()]));
        }
    } else {
        alts.push(RegexAst::Concat(vec![rx(&format!("[1-9][0-9]{{{len},}}")), frac_any.clone()]));
    }
    for (i, &d) in im.iter().enumerate().take(len) {
        let lo = if i == 0 && len > 1 { b'1' } else { b'0' };
        let range = if want_less {
            (d > lo).then(|| digit_range(lo, d - 1))
        } else {
            (d < b'9').then(|| digit_range(d + 1, b'9'))
        };
        if let Some(range) = range {
            alts.push(RegexAst::Concat(vec![
                lit(&m.int[..i]),
                range,
                any_digits(len - 1 - i),
                frac_any.clone(),
            ]));
        }
    }
    alts.push(RegexAst::Concat(vec![lit(&m.int), frac_cmp(&m.frac, want_less, inclusive)]));
    RegexAst::Or(alts)
}

fn neg(r: RegexAst) -> RegexAst {
    RegexAst::Concat(vec![lit("-"), r])
}

/// Number texts (optional `-`, no exponent) that are `>= a` (or `> a`).
pub(crate) fn ge(a: &Bound) -> RegexAst {
    let m = a.value.abs();
    if a.value.is_zero() {
        if a.exclusive {
            mag_cmp(&m, false, false)
        } else {
            RegexAst::Or(vec![mag_any(), neg(mag_cmp(&m, true, true))])
        }
    } else if !a.value.neg {
        mag_cmp(&m, false, !a.exclusive)
    } else {
        RegexAst::Or(vec![mag_any(), neg(mag_cmp(&m, true, !a.exclusive))])
    }
}

/// Number texts (optional `-`, no exponent) that are `<= b` (or `< b`).
pub(crate) fn le(b: &Bound) -> RegexAst {
    let m = b.value.abs();
    if b.value.is_zero() {
        if b.exclusive {
            neg(mag_cmp(&m, false, false))
        } else {
            RegexAst::Or(vec![neg(mag_any()), mag_cmp(&m, true, true)])
        }
    } else if !b.value.neg {
        RegexAst::Or(vec![neg(mag_any()), mag_cmp(&m, true, !b.exclusive)])
    } else {
        neg(mag_cmp(&m, false, !b.exclusive))
    }
}

/// Number texts equal to `v` (any number of trailing fraction zeros).
pub(crate) fn equal(v: &Decimal) -> RegexAst {
    let b = Bound { value: v.clone(), exclusive: false };
    RegexAst::And(vec![ge(&b), le(&b)])
}

/// Any JSON number, exponent included.
pub(crate) const JSON_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?";
/// A JSON number without exponent.
pub(crate) const PLAIN_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?";

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Texts (optional `-`, no exponent) whose value is a multiple of `d` (positive).
///
/// derivre's `MultipleOf(c, s)` reads a text with no fraction or with exactly
/// `s` fraction digits as a multiple of `c * 10^-s`. A text with `f < s`
/// fraction digits is a multiple of `c * 10^-s` iff its digits, as an
/// integer, are a multiple of `c / gcd(c, 10^(s-f))`; a text with more than `s`
/// fraction digits is a multiple iff the extra digits are zeros and the rest is.
pub(crate) fn multiple_of(d: &Decimal) -> Option<RegexAst> {
    let (coef, scale) = d.to_scaled()?;
    // derivre's remainder automaton computes `remainder * 10` and
    // `remainder + 9 * 10^scale` in u32: keep both in range.
    let coef = u32::try_from(coef).ok()?;
    if coef == 0 || coef >= 400_000_000 || scale > 8 {
        return None;
    }
    if (coef as u64) * 10 + 9 * 10u64.pow(scale) >= u32::MAX as u64 {
        return None;
    }
    let exact = |f: u32| {
        if f == 0 { rx("[0-9]+") } else { rx(&format!(r"[0-9]+\.[0-9]{{{f}}}")) }
    };
    let mut alts = Vec::new();
    for f in 0..=scale {
        let c = coef as u64 / gcd(coef as u64, 10u64.pow(scale - f));
        alts.push(RegexAst::And(vec![exact(f), RegexAst::MultipleOf(c as u32, f)]));
    }
    let full = RegexAst::And(vec![exact(scale), RegexAst::MultipleOf(coef, scale)]);
    if scale == 0 {
        alts.push(RegexAst::Concat(vec![full, rx(r"\.0+")]));
    } else {
        alts.push(RegexAst::Concat(vec![full, rx("0+")]));
    }
    Some(RegexAst::Concat(vec![rx("-?"), RegexAst::Or(alts)]))
}

#[cfg(test)]
mod tests {
    /// The lexer parses these once per process (`lexer::PREPARSED`); a
    /// pattern the lowering writes differently would be parsed again in
    /// every lexer.
    #[test]
    fn the_common_number_and_text_patterns_are_preparsed() {
        let written = [
            super::JSON_NUMBER.to_owned(),
            super::PLAIN_NUMBER.to_owned(),
            super::INT_MAG.to_owned() + super::FRAC_ANY,
            super::FRAC_ANY.to_owned(),
            crate::lower::array::FREE_INT.to_owned(),
            "(?s:.*)".to_owned(),
            "true|false".to_owned(),
        ];
        let options = crate::Options::default();
        let separators = [options.item_separator.clone(), options.key_separator.clone()];
        let ws = [crate::Whitespace::bounded(), crate::Whitespace::unbounded()];
        let ws = separators.into_iter().chain(ws.iter().filter_map(|w| match w {
            crate::Whitespace::Pattern(p) => Some(p.clone()),
            _ => None,
        }));
        for p in written.into_iter().chain(ws) {
            assert!(lexer::PREPARSED.contains(&p.as_str()), "{p} is not preparsed");
        }
    }
}
