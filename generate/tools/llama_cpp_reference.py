"""The llama.cpp reference row of `structgen generate --eval`.

Runs the unconstrained half of the eval with llama.cpp (through
llama-cpp-python) on the same GGUF file, the same prompts and the same
greedy decoding with the same repetition penalty, and prints tokens per
second measured as `structgen generate` measures them: generated tokens
divided by the time after the prompt's evaluation.

llama.cpp is not built by the project or by CI (it compiles from source
for several minutes); install it into a virtual environment of your own:

    python3 -m venv target/llama-venv
    target/llama-venv/bin/pip install llama-cpp-python numpy
    target/llama-venv/bin/python generate/tools/llama_cpp_reference.py \
        --model "$(cargo xtask model)" --tasks generate/tasks/maskbench-dev.jsonl

The prompt text is SmolLM2's ChatML with the default system turn its GGUF
template adds when the conversation has none (what `structgen generate`
renders with minijinja), tokenized with special tokens.
"""

import argparse
import json
import sys
import time

import llama_cpp
import numpy as np
from llama_cpp import Llama

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chatml(user: str) -> str:
    """SmolLM2's chat template applied to one user message."""
    return (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        f"<|im_start|>user\n{user}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def penalize(logits: np.ndarray, recent: list, penalty: float) -> None:
    """llama.cpp's repetition penalty, as `structgen generate` applies it."""
    for t in set(recent):
        logits[t] = logits[t] / penalty if logits[t] > 0 else logits[t] * penalty


def last_logits(llm: Llama) -> np.ndarray:
    """The logits of the last evaluated token, copied. `Llama.scores` holds
    them only with `logits_all=True` since llama-cpp-python 0.3 (sampling
    moved into llama.cpp's sampler), which would compute logits for every
    prompt token; the C API gives the last row directly."""
    ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()


def run_task(llm: Llama, prompt: str, args, stops: set) -> dict:
    tokens = llm.tokenize(chatml(prompt).encode(), add_bos=False, special=True)
    llm.reset()
    start = time.perf_counter()
    llm.eval(tokens)
    after_prompt = time.perf_counter()
    out = []
    while len(out) < args.max_tokens:
        logits = last_logits(llm)
        if args.repeat_penalty != 1.0:
            penalize(logits, out[-args.repeat_last_n :], args.repeat_penalty)
        t = int(np.argmax(logits))
        if t in stops:
            break
        out.append(t)
        llm.eval([t])
    end = time.perf_counter()
    decode = end - after_prompt
    return {
        "prompt_tokens": len(tokens),
        "generated_tokens": len(out),
        "prefill_ms": (after_prompt - start) * 1e3,
        "decode_ms": decode * 1e3,
        "tokens_per_s": len(out) / decode if decode > 0 else 0.0,
        "at_limit": len(out) >= args.max_tokens,
        "output": llm.detokenize(out).decode("utf-8", "replace"),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--tasks", required=True)
    p.add_argument("--limit", type=int)
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--repeat-penalty", type=float, default=1.1)
    p.add_argument("--repeat-last-n", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", action="store_true", help="one JSON line per task, then the summary")
    args = p.parse_args()

    llm = Llama(
        model_path=args.model,
        n_ctx=4096,
        n_batch=512,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    stops = {llm.token_eos()}
    for name in ("<|im_end|>", "<|endoftext|>"):
        ids = llm.tokenize(name.encode(), add_bos=False, special=True)
        if len(ids) == 1:
            stops.add(ids[0])

    with open(args.tasks, encoding="utf-8") as f:
        tasks = [json.loads(line) for line in f if line.strip()]
    if args.limit is not None:
        tasks = tasks[: args.limit]

    generated = decode_ms = 0.0
    at_limit = 0
    for i, task in enumerate(tasks, 1):
        r = run_task(llm, task["prompt"], args, stops)
        generated += r["generated_tokens"]
        decode_ms += r["decode_ms"]
        at_limit += r["at_limit"]
        print(
            f"[{i}/{len(tasks)}] {task['id']}: {r['generated_tokens']} tokens, "
            f"{r['tokens_per_s']:.1f} tokens/s",
            file=sys.stderr,
        )
        if args.json:
            print(json.dumps({"id": task["id"], **r}), flush=True)
    summary = {
        "engine": "llama.cpp (llama-cpp-python)",
        "tasks": len(tasks),
        "generated_tokens": int(generated),
        "decode_ms": decode_ms,
        "tokens_per_s": generated * 1e3 / decode_ms if decode_ms > 0 else 0.0,
        "ended_at_max_tokens": at_limit,
    }
    print(json.dumps({"summary": summary}) if args.json else json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
