//! Helpers shared by the test modules.

/// Feeds `input` byte by byte to a fresh parser of `g`: the number of bytes
/// accepted before the first rejected one, and whether the parser accepts
/// after all of them.
pub(crate) fn viable_prefix(g: &earley::Grammar, input: &[u8]) -> (usize, bool) {
    let mut p = earley::Parser::new(g, &|_| None).expect("parser");
    for (i, &b) in input.iter().enumerate() {
        if !p.try_consume_byte(b).expect("within limits") {
            return (i, false);
        }
        // Each byte is a token: hidden stop text (`stop=`) is taken here.
        p.take_hidden(&input[..=i]);
    }
    (input.len(), p.is_accepting().expect("within limits"))
}

/// Whether `g` accepts exactly `input`.
pub(crate) fn accepts(g: &earley::Grammar, input: &str) -> bool {
    viable_prefix(g, input.as_bytes()) == (input.len(), true)
}
