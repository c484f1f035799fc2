//! Regexes (derivre syntax, over the decoded string) for `format` values.
//!
//! Each regex accepts a subset of the format's language as its RFC defines it
//! (never a superset): leap seconds, quoted e-mail local parts and punycode
//! (`xn--`) host labels are left out because checking them exactly is not regular
//! or not worth the size.

use derivre::RegexAst;

fn date() -> String {
    let leap = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)";
    let md = "((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))";
    format!("([0-9]{{4}}-{md}|{leap}-02-29)")
}

fn time() -> String {
    "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
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

/// The regex of a format it matches exactly (the whole language its RFC
/// defines, not a subset), so that its complement is exact too: what `not`
/// and `oneOf` need. `date` checks leap years; `date-time` and `time` are
/// not here (no leap seconds), nor `email`, `hostname`, `uri` and the other
/// subsets.
pub(crate) fn lookup_exact(name: &str) -> Option<RegexAst> {
    match name {
        "date"
        | "ipv4"
        | "ipv6"
        | "uuid"
        | "duration"
        | "json-pointer"
        | "relative-json-pointer" => lookup(name),
        _ => None,
    }
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
        "relative-json-pointer" => "(0|[1-9][0-9]*)(#|(/([^/~]|~[01])*)*)".to_string(),
        _ => return None,
    })
}
