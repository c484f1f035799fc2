//! Minimized failures found by fuzz campaigns, kept as tests.

use fuzz::Target;

/// Runs `input` on `target`: it must not fail (panic or break a property).
fn replay(target: Target, input: &[u8]) {
    if let Err(e) = target.run(input) {
        panic!("{}: {e} on {:?}", target.name(), String::from_utf8_lossy(input));
    }
}

#[test]
fn hostile_regexes_do_not_fail() {
    for rx in ["((a*){100}){100}b", "(a?){0,100000}", "\\d{1,100000}", "[", "(?<=a)b", "a{2,1}"] {
        replay(Target::Regex, rx.as_bytes());
    }
}
