//! Phrases with distinct members (`uniqueItems`): acceptance and masks
//! against a hand-written oracle of one small array language.
//!
//! The language: `[` items separated by `,` `]` with pairwise distinct
//! values, an item being a string of `a`, `b` and `\u0061` (another
//! spelling of `a`), an integer `-?(0|[1-9][0-9]*)` (`-0` is `0`), or
//! `null` (a named member).

use earley::{GrammarBuilder, Limits, Parser, Permutation};
use lexer::LexemeSpec;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use toktrie::{TokTrie, TokenId, TokenSet};

fn grammar() -> earley::Grammar {
    let mut b = GrammarBuilder::new();
    let string = b.add_lexeme(LexemeSpec::regex(r#""([ab]|\\u0061)*""#));
    let int = b.add_lexeme(LexemeSpec::regex("-?(0|[1-9][0-9]*)"));
    let null = b.literal("null");
    let (open, close, comma) = (b.literal("["), b.literal("]"), b.literal(","));
    let items = b.add_nonterminal("items");
    b.add_permutation(
        items,
        Permutation {
            members: vec![(string, None), (int, None), (null, Some(0))],
            required: vec![],
            separator: Some(comma),
            min: 0,
            max: None,
            distinct: true,
            search: false,
            ordered: false,
        },
    );
    let array = b.add_nonterminal("array");
    b.add_rule(array, &[open, items, close]);
    b.build(array, Limits::default()).unwrap()
}

#[derive(Clone, PartialEq, Debug)]
enum Value {
    Str(String),
    Int(i64),
    Null,
}

/// Whether `text` is a prefix of some sentence, by hand: the complete
/// items must be distinct, and a partial item must have a completion no
/// complete item equals.
fn viable(text: &[u8]) -> bool {
    let Some(rest) = text.strip_prefix(b"[") else { return text.is_empty() };
    let mut seen: Vec<Value> = Vec::new();
    let mut i = 0;
    let fresh = |v: &Value, seen: &[Value]| !seen.contains(v);
    loop {
        // At the start of an item (or of `]` when no item came yet).
        if i == rest.len() {
            return true;
        }
        if rest[i] == b']' && seen.is_empty() && (i == 0) {
            return i + 1 == rest.len();
        }
        let start = i;
        let value = match rest[i] {
            b'"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    if i == rest.len() {
                        return true; // an open string: infinitely many endings
                    }
                    match rest[i] {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'a' | b'b' => {
                            s.push(rest[i] as char);
                            i += 1;
                        }
                        b'\\' => {
                            let esc = &rest[i..];
                            let full = b"\\u0061";
                            let n = esc.len().min(full.len());
                            if esc[..n] != full[..n] {
                                return false;
                            }
                            if n < full.len() {
                                return true;
                            }
                            s.push('a');
                            i += full.len();
                        }
                        _ => return false,
                    }
                }
                Value::Str(s)
            }
            b'n' => {
                let full = b"null";
                let n = (rest.len() - i).min(4);
                if rest[i..i + n] != full[..n] {
                    return false;
                }
                i += n;
                if n < 4 {
                    return fresh(&Value::Null, &seen);
                }
                Value::Null
            }
            b'-' | b'0'..=b'9' => {
                let neg = rest[i] == b'-';
                if neg {
                    i += 1;
                }
                let ds = i;
                while i < rest.len() && rest[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = &rest[ds..i];
                if digits.is_empty() {
                    return i == rest.len(); // `-` alone: any digits may follow
                }
                if digits[0] == b'0' && digits.len() > 1 {
                    return false;
                }
                let v: i64 = std::str::from_utf8(digits).unwrap().parse().unwrap();
                let v = Value::Int(if neg { -v } else { v });
                if i == rest.len() && digits[0] != b'0' {
                    return true; // more digits make infinitely many values
                }
                v
            }
            _ => return false,
        };
        let _ = start;
        if !fresh(&value, &seen) {
            return false;
        }
        seen.push(value);
        if i == rest.len() {
            return true;
        }
        match rest[i] {
            b',' => i += 1,
            b']' => return i + 1 == rest.len(),
            _ => return false,
        }
    }
}

fn accepts(g: &earley::Grammar, text: &[u8]) -> bool {
    g.accepts(text).unwrap()
}

#[test]
fn json_equal_items_are_refused() {
    let g = grammar();
    for t in
        [r#"[]"#, r#"["a"]"#, r#"["a","b"]"#, r#"["","a",1,"1x"]"#, r#"[1,-1,0]"#, r#"[null,"a"]"#]
    {
        if t.contains('x') {
            assert!(!accepts(&g, t.as_bytes()), "{t}");
        } else {
            assert!(accepts(&g, t.as_bytes()), "{t}");
        }
    }
    for t in [
        r#"["a","a"]"#,
        r#"["a","\u0061"]"#,
        r#"["\u0061b","ab"]"#,
        r#"[1,2,1]"#,
        r#"[0,-0]"#,
        r#"[null,null]"#,
        r#"["b","a","b"]"#,
    ] {
        assert!(!accepts(&g, t.as_bytes()), "{t}");
    }
}

fn vocabulary() -> Vec<Vec<u8>> {
    let alphabet = b"[],\"ab\\u061-nl";
    let mut v: Vec<Vec<u8>> = Vec::new();
    for &x in alphabet {
        v.push(vec![x]);
        for &y in alphabet {
            v.push(vec![x, y]);
        }
    }
    for t in ["null", "\\u0061", "\",\"", "\"]", "a\"", "ab\"]", "0,", "1]", ",-0"] {
        v.push(t.as_bytes().to_vec());
    }
    v
}

fn random_array(rng: &mut SmallRng) -> (String, bool) {
    let n = rng.random_range(0..5);
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for _ in 0..n {
        let (text, v) = match rng.random_range(0..3) {
            0 => {
                let s: String = (0..rng.random_range(0..3))
                    .map(|_| if rng.random() { 'a' } else { 'b' })
                    .collect();
                let spelled: String = s
                    .chars()
                    .map(|c| {
                        if c == 'a' && rng.random() { "\\u0061".to_string() } else { c.to_string() }
                    })
                    .collect();
                (format!("\"{spelled}\""), Value::Str(s))
            }
            1 => {
                let v: i64 = [0, 1, -1, 12, 10][rng.random_range(0..5)];
                let text = if v == 0 && rng.random() { "-0".to_string() } else { v.to_string() };
                (text, Value::Int(v))
            }
            _ => ("null".to_string(), Value::Null),
        };
        parts.push(text);
        values.push(v);
    }
    let distinct = (0..values.len()).all(|i| !values[..i].contains(&values[i]));
    (format!("[{}]", parts.join(",")), distinct)
}

#[test]
fn acceptance_and_masks_equal_the_oracle() {
    let g = grammar();
    let vocab = vocabulary();
    let trie = TokTrie::from_token_bytes(&vocab).unwrap();
    let mut rng = SmallRng::seed_from_u64(0xd15c);
    let mut masks = 0;
    let mut by_state_fallbacks = 0;
    let mut by_state_inside = 0;
    for case in 0..120 {
        let (text, distinct) = random_array(&mut rng);
        assert_eq!(accepts(&g, text.as_bytes()), distinct, "case {case}: {text}");
        assert_eq!(viable(text.as_bytes()), distinct, "oracle, case {case}: {text}");
        // Masks along a prefix of the text (the whole text when valid).
        let cut = if distinct { text.len() } else { rng.random_range(0..text.len()) };
        let mut parser = Parser::new(&g, &|_| None).unwrap();
        assert!(parser.has_distinct());
        let bytes = text.as_bytes();
        for at in 0..=cut {
            if at > 0 {
                let ok = parser.try_consume_byte(bytes[at - 1]).unwrap();
                assert_eq!(ok, viable(&bytes[..at]), "case {case}: {text} at {at}");
                if !ok {
                    break;
                }
            }
            if at % 3 != 0 && at != cut {
                continue;
            }
            // Until the array has an item a walk by state serves, unless
            // it reaches one: then it says so.
            let mut by_state = None;
            if !parser.needs_byte_walk() {
                let mut m = TokenSet::new(vocab.len());
                trie.compute_mask_by_state(&mut parser, &mut m);
                if parser.take_byte_walk_required() {
                    by_state_fallbacks += 1;
                } else {
                    by_state_inside += usize::from(bytes[..at].contains(&b'['));
                    by_state = Some(m);
                }
                parser.check().unwrap();
            }
            let mut mask = TokenSet::new(vocab.len());
            trie.compute_mask(&mut parser, &mut mask);
            parser.check().unwrap();
            if let Some(m) = by_state {
                assert_eq!(m, mask, "case {case}: walk by state at {at}");
            }
            let mut expected = TokenSet::new(vocab.len());
            for (i, t) in vocab.iter().enumerate() {
                let mut x = bytes[..at].to_vec();
                x.extend_from_slice(t);
                if viable(&x) {
                    expected.insert(TokenId(i as u32));
                }
            }
            let show = |m: &TokenSet| -> Vec<String> {
                m.iter().map(|t| String::from_utf8_lossy(&vocab[t.index()]).into_owned()).collect()
            };
            assert_eq!(
                show(&mask),
                show(&expected),
                "case {case}: mask after {:?}",
                String::from_utf8_lossy(&bytes[..at])
            );
            masks += 1;
        }
    }
    assert!(masks > 200, "{masks} masks checked");
    assert!(by_state_fallbacks > 10, "{by_state_fallbacks} walks by state gave up");
    assert!(by_state_inside > 10, "{by_state_inside} walks by state inside the array");
}

#[test]
fn rollback_restores_the_set_of_items() {
    let g = grammar();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    for &b in br#"["a","b""# {
        assert!(p.try_consume_byte(b).unwrap());
    }
    // `,"a"` would repeat "a": the closing quote is refused.
    for &b in br#","a"# {
        assert!(p.try_consume_byte(b).unwrap());
    }
    assert!(!p.try_consume_byte(b'"').unwrap());
    p.pop_bytes(3);
    // Back after `["a","b"`: the same items, "b" still taken.
    for &b in br#","b"# {
        assert!(p.try_consume_byte(b).unwrap());
    }
    assert!(!p.try_consume_byte(b'"').unwrap());
    p.pop_bytes(7);
    // After `["a"`, "b" is free again.
    for &b in br#","b"]"# {
        assert!(p.try_consume_byte(b).unwrap(), "{}", b as char);
    }
    assert!(p.is_accepting().unwrap());
}

#[test]
fn the_walk_by_state_reports_that_it_cannot_check() {
    let g = grammar();
    let vocab = vocabulary();
    let trie = TokTrie::from_token_bytes(&vocab).unwrap();
    let mut p = Parser::new(&g, &|_| None).unwrap();
    // The first item may not repeat anything; the second may.
    for &b in br#"["a","b"# {
        assert!(p.try_consume_byte(b).unwrap());
    }
    let mut mask = TokenSet::new(vocab.len());
    trie.compute_mask_by_state(&mut p, &mut mask);
    assert!(matches!(p.check(), Err(earley::ParseError::ByteWalkRequired { .. })));
}
