//! Regexes (derivre syntax, over the decoded string) for `format` values.
//!
//! Each regex accepts a subset of the format's language as its RFC defines it
//! (never a superset): leap seconds, quoted e-mail local parts and punycode
//! (`xn--`) host labels are left out because checking them exactly is not regular
//! or not worth the size.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use derivre::RegexAst;
use lexer::Preparsed;

fn date() -> String {
    let leap = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)";
    let md = "((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))";
    format!("([0-9]{{4}}-{md}|{leap}-02-29)")
}

fn time() -> String {
    "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
        .to_string()
}

/// [`time`] with second 60 allowed at any time (a superset of the times
/// with leap seconds).
fn time_with_leap_second() -> String {
    "([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
        .to_string()
}

fn duration() -> String {
    let time = "T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)";
    let date = "([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)";
    format!("P({date}({time})?|{time}|[0-9]+W)")
}

const IPV4: &str = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}";

fn ipv6() -> String {
    let h = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("({h}:{h}|{IPV4})");
    let pre = |n: usize| -> String {
        if n == 0 { String::new() } else { format!("({h}:){{0,{}}}{h}", n - 1) }
    };
    let forms = [
        format!("({h}:){{6}}{ls32}"),
        format!("::({h}:){{5}}{ls32}"),
        format!("({h})?::({h}:){{4}}{ls32}"),
        format!("({})?::({h}:){{3}}{ls32}", pre(2)),
        format!("({})?::({h}:){{2}}{ls32}", pre(3)),
        format!("({})?::{h}:{ls32}", pre(4)),
        format!("({})?::{ls32}", pre(5)),
        format!("({})?::{h}", pre(6)),
        format!("({})?::", pre(7)),
    ];
    format!("({})", forms.join("|"))
}

fn hostname() -> RegexAst {
    // Labels of 1..63 letters, digits and hyphens, not starting or ending
    // with a hyphen, without `--` in positions 3-4 (RFC 5891 4.2.3.1),
    // written positively so that the lexer's emptiness checks stay cheap.
    let a = "[A-Za-z0-9]";
    let h = "[A-Za-z0-9-]";
    let label = format!("({a}|{a}{a}|{a}{h}{a}|{a}{h}{h}{a}|{a}{h}({a}{h}|-{a}){h}{{0,58}}{a})");
    RegexAst::And(vec![
        RegexAst::Regex(format!("{label}(\\.{label})*")),
        RegexAst::Regex(".{1,253}".to_string()),
    ])
}

fn email() -> RegexAst {
    let atom = r"[A-Za-z0-9!#$%\&'*+/=?^_`{|}\~-]+";
    RegexAst::Concat(vec![
        RegexAst::Regex(format!("{atom}(\\.{atom})*@")),
        RegexAst::Or(vec![hostname(), RegexAst::Regex(format!("\\[{IPV4}\\]"))]),
    ])
}

fn uri_parts() -> (String, String, String, String, String) {
    let unreserved = r"A-Za-z0-9\-._~";
    let sub = r"!$&'()*+,;=";
    let pct = "%[0-9A-Fa-f]{2}";
    let pchar = format!("([{unreserved}{sub}:@]|{pct})");
    let userinfo = format!("([{unreserved}{sub}:]|{pct})*");
    let reg_name = format!("([{unreserved}{sub}]|{pct})*");
    let ip_future = format!("[vV][0-9A-Fa-f]+\\.[{unreserved}{sub}:]+");
    let host = format!("(\\[({}|{ip_future})\\]|{IPV4}|{reg_name})", ipv6());
    let authority = format!("({userinfo}@)?{host}(:[0-9]*)?");
    let seg = format!("{pchar}*");
    let seg_nz = format!("{pchar}+");
    let abempty = format!("(/{seg})*");
    let absolute = format!("/({seg_nz}(/{seg})*)?");
    let rootless = format!("{seg_nz}(/{seg})*");
    let query = format!("({pchar}|[/?])*");
    let hier = format!("(//{authority}{abempty}|{absolute}|{rootless}|)");
    let noscheme = format!("([{unreserved}{sub}@]|{pct})+(/{seg})*");
    let relative = format!("(//{authority}{abempty}|{absolute}|{noscheme}|)");
    let uri = format!("[A-Za-z][A-Za-z0-9+\\-.]*:{hier}(\\?{query})?(#{query})?");
    (uri, relative, query.clone(), query, authority)
}

/// Regexes (the `regex` format, ECMA-262 by the spec; validators often
/// check it with their own dialect): a regular subset valid in ECMA-262
/// and in the common dialects alike. Atoms are plain characters, `.`,
/// escapes of punctuation and of `d D w W s S t n r f`, classes of single
/// characters, escapes and the ranges `0-9`, `a-z`, `A-Z`, `a-f`, `A-F`
/// (and a `-` last),
/// and groups (`(...)`, `(?:...)`) nested at most 3 deep; quantifiers are
/// `* + ?` (optionally lazy), `{n}`, `{n,}` and `{n,m}` with `n <= m < 100`;
/// `^` and `$` stand alone. Left out (a stricter grammar): other counts
/// and ranges, lookarounds, backreferences, named groups, control
/// characters (U+001F also keeps derivre's JSON quoting of the negated
/// classes exact, see `ecma.rs`).
fn regex() -> String {
    let punct = r"[\\^$.|?*+()\[\]{}/\-]";
    let escape = format!(r"\\({punct}|[dDwWsStnrf])");
    let plain = r"[^\\^$.|?*+()\[\]{}\x00-\x1F]";
    let class_char = r"[^\\\[\]^\-\x00-\x1F]";
    let item = format!(r"({class_char}|{escape}|0-9|a-z|A-Z|a-f|A-F)");
    let class = format!(r"\[\^?{item}+-?\]");
    let quant = format!(r"([*+?]|\{{([0-9]+,?|{})\}})\??", ordered_counts());
    let mut seq = String::new();
    for depth in 0..=3 {
        let group = if depth == 0 { String::new() } else { format!(r"|\((\?:)?{seq}\)") };
        let atom = format!("({plain}|{escape}|\\.|{class}{group})");
        let piece = format!("({atom}({quant})?|\\^|\\$)");
        // Empty alternatives are valid (`a||b`), so `|` may stand anywhere.
        seq = format!("({piece}|\\|)*");
    }
    seq
}

/// `n,m` with `n <= m < 100` (no leading zeros).
fn ordered_counts() -> String {
    // The numbers from `lo` to 99, as a regex.
    let at_least = |lo: u32| -> String {
        let (t, u) = (lo / 10, lo % 10);
        let mut alts = Vec::new();
        if lo < 10 {
            alts.push(format!("[{u}-9]"));
            alts.push("[1-9][0-9]".to_string());
        } else {
            alts.push(format!("{t}[{u}-9]"));
            if t < 9 {
                alts.push(format!("[{}-9][0-9]", t + 1));
            }
        }
        format!("({})", alts.join("|"))
    };
    let alts: Vec<String> = (0..100).map(|lo| format!("{lo},{}", at_least(lo))).collect();
    format!("({})", alts.join("|"))
}

/// RFC 6570 URI templates, without `iprivate` and the `ucschar` planes above
/// the BMP in literals (a subset).
fn uri_template() -> String {
    let pct = "%[0-9A-Fa-f]{2}";
    let lit = format!(
        "([\\x21\\x23\\x24\\x26\\x28-\\x3B\\x3D\\x3F-\\x5B\\x5D\\x5F\\x61-\\x7A\\x7E\\x{{A0}}-\\x{{D7FF}}\\x{{F900}}-\\x{{FDCF}}\\x{{FDF0}}-\\x{{FFEF}}]|{pct})"
    );
    let varchar = format!("([A-Za-z0-9_]|{pct})");
    let varspec = format!("{varchar}(\\.?{varchar})*(:[1-9][0-9]{{0,3}}|\\*)?");
    format!("({lit}|\\{{[+#./;?&=,!@|]?{varspec}(,{varspec})*\\}})*")
}

/// The regex of a known format, or `None`. The internationalized formats
/// take their ASCII subsets (every host name is an IDN host name, every URI
/// an IRI, every ASCII address an internationalized one).
pub(crate) fn lookup(name: &str) -> Option<RegexAst> {
    Some(match name {
        "hostname" | "idn-hostname" => hostname(),
        "email" | "idn-email" => email(),
        _ => RegexAst::Regex(lookup_text(name)?),
    })
}

/// A regex containing every string of the format's language as its RFC
/// defines it: the format's own regex when that is the whole language
/// (`date` checks leap years), a superset for the formats whose regex is a
/// subset. Its complement is a subset of the format's complement, which is
/// what `not`, `oneOf` and `if` need to stay exact or stricter.
pub(crate) fn lookup_superset(name: &str) -> Option<RegexAst> {
    let rx = |s: String| Some(RegexAst::Regex(s));
    match name {
        "date"
        | "ipv4"
        | "ipv6"
        | "uuid"
        | "duration"
        | "json-pointer"
        | "relative-json-pointer" => lookup(name),
        // Leap seconds: any second 60.
        "time" => rx(time_with_leap_second()),
        "date-time" => rx(format!("{}[Tt]{}", date(), time_with_leap_second())),
        // Quoted local parts, address literals: anything with an `@`.
        "email" | "idn-email" => rx("(?s:.*@.*)".to_string()),
        // Punycode labels are labels of letters, digits and hyphens.
        "hostname" => Some(RegexAst::And(vec![
            RegexAst::Regex(r"[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})*".to_string()),
            RegexAst::Regex(".{1,253}".to_string()),
        ])),
        // Any scheme followed by anything.
        "uri" | "iri" => rx("[A-Za-z][A-Za-z0-9+\\-.]*:(?s:.*)".to_string()),
        // Nearly any text is a relative reference or a template.
        "idn-hostname" | "uri-reference" | "iri-reference" | "uri-template" | "regex" => {
            rx("(?s:.*)".to_string())
        }
        _ => None,
    }
}

/// Every format name [`lookup`] knows.
const KNOWN: &[&str] = &[
    "date",
    "time",
    "date-time",
    "duration",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
    "iri",
    "uri-template",
    "uri-reference",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "hostname",
    "idn-hostname",
    "email",
    "idn-email",
];

/// The formats' pattern groups (each the pattern strings of a format's
/// regex and of its superset, less those every lexer has parsed already,
/// [`lexer::PREPARSED`]; formats with the same strings share one), and
/// which groups each pattern string is in.
struct Groups {
    groups: Vec<Vec<String>>,
    owners: HashMap<String, Vec<usize>>,
    /// The lengths of the strings in `owners`: most strings of a grammar
    /// are not format patterns, and their length says so without hashing.
    lengths: HashSet<usize>,
}

fn groups() -> &'static Groups {
    static GROUPS: OnceLock<Groups> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups: Vec<Vec<String>> = Vec::new();
        for &name in KNOWN {
            let asts: Vec<RegexAst> =
                [lookup(name), lookup_superset(name)].into_iter().flatten().collect();
            let mut g: Vec<String> = lexer::pattern_strings(&asts)
                .filter(|p| !lexer::PREPARSED.contains(p))
                .map(str::to_owned)
                .collect();
            g.sort();
            g.dedup();
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let mut owners: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, g) in groups.iter().enumerate() {
            for p in g {
                owners.entry(p.clone()).or_default().push(i);
            }
        }
        let lengths = owners.keys().map(String::len).collect();
        Groups { groups, owners, lengths }
    })
}

/// The pattern strings a lexer (or an emptiness check) over `asts` should
/// start from parsed: the group of the format whose patterns make up most
/// of the text `asts` use, parsed once per process on first use, or `None`
/// when they use no format. Parsing a format's regex costs far more than
/// copying it (a URI regex takes about half a millisecond to parse, and
/// `format: uri` is in one MaskBench schema of thirteen); only one group
/// is copied, so a second format in the same grammar is parsed as before.
/// A group is parsed when a grammar first uses it, so a process pays for
/// the formats it meets, once.
pub(crate) fn preparsed_for<'a>(
    asts: impl IntoIterator<Item = &'a RegexAst>,
) -> Option<Arc<Preparsed>> {
    static SETS: OnceLock<Vec<OnceLock<Arc<Preparsed>>>> = OnceLock::new();
    let Groups { groups, owners, lengths } = groups();
    let mut score = vec![0usize; groups.len()];
    for s in lexer::pattern_strings(asts) {
        if lengths.contains(&s.len())
            && let Some(gs) = owners.get(s)
        {
            gs.iter().for_each(|&g| score[g] += s.len());
        }
    }
    let (best, &top) = score.iter().enumerate().max_by_key(|&(i, &x)| (x, usize::MAX - i))?;
    if top == 0 {
        return None;
    }
    let sets = SETS.get_or_init(|| groups.iter().map(|_| OnceLock::new()).collect());
    let set = sets[best].get_or_init(|| {
        let refs: Vec<&str> = groups[best].iter().map(String::as_str).collect();
        Arc::new(Preparsed::new(&refs))
    });
    Some(set.clone())
}

fn lookup_text(name: &str) -> Option<String> {
    Some(match name {
        "date" => date(),
        "time" => time(),
        "date-time" => format!("{}[Tt]{}", date(), time()),
        "duration" => duration(),
        "ipv4" => IPV4.to_string(),
        "ipv6" => ipv6(),
        "uuid" => "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
            .to_string(),
        "uri" | "iri" => uri_parts().0,
        "uri-template" => uri_template(),
        "uri-reference" | "iri-reference" => {
            let (uri, relative, query, fragment, _) = uri_parts();
            format!("({uri}|{relative}(\\?{query})?(#{fragment})?)")
        }
        "json-pointer" => "(/([^/~]|~[01])*)*".to_string(),
        "regex" => regex(),
        "relative-json-pointer" => "(0|[1-9][0-9]*)(#|(/([^/~]|~[01])*)*)".to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use derivre::RegexAst;

    use std::sync::Arc;

    use super::{KNOWN, lookup, lookup_superset, preparsed_for};

    /// The pattern strings of `ast`.
    fn patterns_of(ast: &RegexAst, out: &mut Vec<String>) {
        out.extend(lexer::pattern_strings([ast]).map(str::to_owned));
    }

    #[test]
    fn a_format_regex_starts_from_its_group_parsed_once() {
        for &name in KNOWN {
            let own = lookup(name).unwrap_or_else(|| panic!("{name} is known"));
            let superset = lookup_superset(name).unwrap_or_else(|| panic!("{name} has a superset"));
            let set = preparsed_for([&own]).unwrap_or_else(|| panic!("{name} has a group"));
            let (mut mine, mut sup) = (Vec::new(), Vec::new());
            patterns_of(&own, &mut mine);
            patterns_of(&superset, &mut sup);
            for p in mine.iter().chain(&sup) {
                assert!(set.contains(p), "{name}: {p}");
            }
            // Parsed once: the same set the next time.
            assert!(Arc::ptr_eq(&set, &preparsed_for([&own]).unwrap()), "{name}");
        }
        assert!(lookup("not-a-format").is_none());
        let plain = RegexAst::Regex("[a-z]+".to_owned());
        assert!(preparsed_for([&plain]).is_none());
        // A pattern every lexer has parsed picks no format's set.
        let any = RegexAst::Regex("(?s:.*)".to_owned());
        assert!(preparsed_for([&any]).is_none());
    }

    #[test]
    fn the_group_holding_most_of_the_text_wins() {
        // An e-mail address uses the host-name patterns too, and more.
        let email = lookup("email").unwrap();
        let set = preparsed_for([&email, &lookup("hostname").unwrap()]).unwrap();
        let mut mine = Vec::new();
        patterns_of(&email, &mut mine);
        assert!(mine.iter().all(|p| set.contains(p)));
    }
}
