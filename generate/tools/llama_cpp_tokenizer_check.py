"""Token ids of `bpe::Tokenizer::from_gguf` against llama.cpp's own tokenizer.

The differential test in CI (`compare/tests/it/gguf.rs`) checks the GGUF
tokenizer against Hugging Face `tokenizers` built from the same vocabulary
and merges; this script checks it against llama.cpp itself, through
llama-cpp-python (installed as for `llama_cpp_reference.py`), on the shared
text corpora and a UTF-8 stress text:

    target/llama-venv/bin/python generate/tools/llama_cpp_tokenizer_check.py \
        --model "$(cargo xtask model)" --structgen target/native/release/structgen

Texts are cut at a character boundary (a text cut inside a UTF-8 sequence
is not valid text, and the two handle its last bytes differently).
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

from llama_cpp import Llama

CORPORA = [
    "pride_and_prejudice.txt.gz",
    "ulysses.md.gz",
    "wagahai.txt.gz",
    "code-regex-automata.rs.gz",
]

STRESS = (
    "naïve café 🤖🦀 \u200b\t\t  \n\n\r\n 1234567 1,000.5e-3 \"quotes\" don't I'M "
    "ÀÉÎ ＡＢＣ 한국어 العربية हिन्दी "
) * 50


def ours(structgen: str, model: str, text: str) -> list:
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as f:
        f.write(text)
        f.flush()
        out = subprocess.run(
            [structgen, "tokenize", "--json", "--tokenizer", model, f.name],
            check=True,
            capture_output=True,
        )
    return json.loads(out.stdout)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--structgen", required=True, help="the structgen binary")
    p.add_argument("--shared", default=os.environ.get("STRUCTGEN_SHARED", "../shared"))
    p.add_argument("--chars", type=int, default=100_000, help="characters per corpus")
    args = p.parse_args()
    llm = Llama(model_path=args.model, vocab_only=True, verbose=False)
    texts = [("stress", STRESS)]
    for name in CORPORA:
        with gzip.open(os.path.join(args.shared, "data", "text", name)) as f:
            texts.append((name, f.read().decode("utf-8")[: args.chars]))
    failed = 0
    for name, text in texts:
        ref = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        got = ours(args.structgen, args.model, text)
        if ref == got:
            print(f"{name}: {len(ref)} tokens, equal")
        else:
            failed += 1
            first = next(
                (i for i, (a, b) in enumerate(zip(ref, got)) if a != b), min(len(ref), len(got))
            )
            print(f"{name}: llama.cpp {len(ref)} tokens, ours {len(got)}; first difference at {first}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
