//! Alternative token paths for the same forced text (the .txt framework):
//! every way to spell the bytes with tokens of the vocabulary.

use toktrie::{TokTrie, TokenId};

/// Token sequences whose bytes are exactly `bytes`, at most `limit` of them,
/// fewest tokens first (ties in the order found, longest first token
/// first). The canonical tokenization is one of them when the text is
/// short enough for the limit; [`crate::Coalescer::forced_tokens`] gives it.
///
/// Cost: a depth-first search over the trie's prefix tokens, stopped at
/// `limit` paths; the number of paths grows exponentially with the length
/// (`name` has 8), so keep `limit` small for long texts.
pub fn alternatives(trie: &TokTrie, bytes: &[u8], limit: usize) -> Vec<Vec<TokenId>> {
    // Tokens starting at each position, longest first.
    let starts: Vec<Vec<TokenId>> = (0..bytes.len())
        .map(|i| {
            let mut v = trie.prefix_tokens(&bytes[i..]);
            v.reverse();
            v
        })
        .collect();
    // reach[i]: whether the end can be reached from position i.
    let mut reach = vec![false; bytes.len() + 1];
    reach[bytes.len()] = true;
    for i in (0..bytes.len()).rev() {
        reach[i] = starts[i].iter().any(|&t| {
            let n = trie.token_bytes(t).map_or(0, <[u8]>::len);
            n > 0 && reach[i + n]
        });
    }
    let mut out = Vec::new();
    let mut path = Vec::new();
    if reach[0] && !bytes.is_empty() {
        search(trie, &starts, &reach, 0, &mut path, &mut out, limit);
    }
    out.sort_by_key(Vec::len);
    out
}

fn search(
    trie: &TokTrie,
    starts: &[Vec<TokenId>],
    reach: &[bool],
    pos: usize,
    path: &mut Vec<TokenId>,
    out: &mut Vec<Vec<TokenId>>,
    limit: usize,
) {
    if out.len() >= limit {
        return;
    }
    if pos == starts.len() {
        out.push(path.clone());
        return;
    }
    for &t in &starts[pos] {
        let n = trie.token_bytes(t).map_or(0, <[u8]>::len);
        if n == 0 || !reach[pos + n] {
            continue;
        }
        path.push(t);
        search(trie, starts, reach, pos + n, path, out, limit);
        path.pop();
        if out.len() >= limit {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_has_eight_paths() {
        // The .txt example: "name" with n, a, m, e, na, am, me, nam, ame, name.
        let vocab: Vec<&[u8]> =
            vec![b"n", b"a", b"m", b"e", b"na", b"am", b"me", b"nam", b"ame", b"name"];
        let trie = TokTrie::from_token_bytes(&vocab).unwrap();
        let all = alternatives(&trie, b"name", 100);
        assert_eq!(all.len(), 8);
        assert_eq!(all[0], [TokenId(9)]);
        for p in &all {
            assert_eq!(trie.decode(p), b"name");
        }
        assert_eq!(alternatives(&trie, b"name", 3).len(), 3);
        assert!(alternatives(&trie, b"nx", 10).is_empty());
    }
}
