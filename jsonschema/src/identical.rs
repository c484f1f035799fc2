//! Identity of JSON values as a schema compiler sees them: the same members
//! in the same order, the same numbers written the same way.
//!
//! `serde_json::Value`'s own `==` is the wrong test for a compile cache:
//! with `preserve_order` it treats objects with the same members in another
//! order as equal, but property order is part of what a schema compiles to
//! (`properties` in schema order), and it compares floats numerically
//! (`0.0 == -0.0`) although the two are written differently. Two values
//! [`json_identical`] compile to the same grammar; [`hash_json`] feeds a
//! hasher consistently with it, without serializing.

use std::fmt::{self, Write as _};
use std::hash::Hasher;

use serde_json::{Number, Value};

/// Whether `a` and `b` are the same JSON text up to whitespace and string
/// escapes: the same types, numbers that print the same, object members
/// with the same keys and values in the same order.
pub fn json_identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_identical(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && json_identical(vx, vy))
        }
        _ => false,
    }
}

/// Feeds `v` into `h` so that [`json_identical`] values hash alike.
pub fn hash_json<H: Hasher>(v: &Value, h: &mut H) {
    match v {
        Value::Null => h.write_u8(0),
        Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            h.write_u8(3);
            // Display goes straight into the hasher: no allocation.
            let _ = write!(HashWriter(h), "{n}");
            h.write_u8(0xff);
        }
        Value::String(s) => {
            h.write_u8(4);
            h.write_usize(s.len());
            h.write(s.as_bytes());
        }
        Value::Array(items) => {
            h.write_u8(5);
            h.write_usize(items.len());
            for item in items {
                hash_json(item, h);
            }
        }
        Value::Object(members) => {
            h.write_u8(6);
            h.write_usize(members.len());
            for (k, v) in members {
                h.write_usize(k.len());
                h.write(k.as_bytes());
                hash_json(v, h);
            }
        }
    }
}

/// Integers compare as integers; anything else by its printed form
/// (exact for every representation `serde_json` may hold).
fn same_number(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b && x.is_u64() == y.is_u64();
    }
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b && x.is_i64() == y.is_i64();
    }
    x.to_string() == y.to_string()
}

struct HashWriter<'a, H: Hasher>(&'a mut H);

impl<H: Hasher> fmt::Write for HashWriter<'_, H> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, RandomState};

    use serde_json::json;

    use super::*;

    fn hash(v: &Value, s: &RandomState) -> u64 {
        let mut h = s.build_hasher();
        hash_json(v, &mut h);
        h.finish()
    }

    #[test]
    fn identical_means_same_text() {
        let s = RandomState::new();
        let same = [
            (json!({"a": 1, "b": [true, null]}), json!({"a": 1, "b": [true, null]})),
            (json!(1.5), json!(1.5)),
            (json!("x\u{e9}"), json!("x\u{e9}")),
        ];
        for (a, b) in &same {
            assert!(json_identical(a, b), "{a} vs {b}");
            assert_eq!(hash(a, &s), hash(b, &s));
        }
        let different = [
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1})),
            (json!(0.0), json!(-0.0)),
            (json!(1), json!(1.0)),
            (json!([1, 2]), json!([2, 1])),
            (json!({"a": [1]}), json!({"a": [1, 1]})),
            (json!(null), json!(false)),
            (json!(u64::MAX), json!(-1)),
        ];
        for (a, b) in &different {
            assert!(!json_identical(a, b), "{a} vs {b}");
            assert_ne!(a.to_string(), b.to_string());
        }
    }

    #[test]
    fn identical_agrees_with_the_printed_form() {
        // Seeded pairs of small random values: identical exactly when
        // their compact texts are equal.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        fn random_value(next: &mut dyn FnMut() -> u64, depth: u32) -> Value {
            match next() % if depth == 0 { 4 } else { 6 } {
                0 => Value::Null,
                1 => json!(next() % 3),
                2 => json!([0.5, -0.0, 0.0, 1.0, 2.0][(next() % 5) as usize]),
                3 => json!(["a", "b"][(next() % 2) as usize]),
                4 => Value::Array((0..next() % 3).map(|_| random_value(next, depth - 1)).collect()),
                _ => {
                    let mut m = serde_json::Map::new();
                    for _ in 0..next() % 3 {
                        m.insert(
                            ["x", "y", "z"][(next() % 3) as usize].into(),
                            random_value(next, depth - 1),
                        );
                    }
                    Value::Object(m)
                }
            }
        }
        let s = RandomState::new();
        let mut equal = 0;
        for _ in 0..20_000 {
            let (a, b) = (random_value(&mut next, 2), random_value(&mut next, 2));
            let (text_a, text_b) = (a.to_string(), b.to_string());
            let same_text = text_a == text_b;
            assert_eq!(json_identical(&a, &b), same_text, "{a} vs {b}");
            if same_text {
                equal += 1;
                assert_eq!(hash(&a, &s), hash(&b, &s));
            }
        }
        assert!(equal > 100, "the generator must produce equal pairs too ({equal})");
    }
}
