"""`cargo xtask bench python [--stride K] [--limit N] [--steps N] [--no-xgrammar]`:
structgen's Python package side by side with llguidance's wheel (and with
XGrammar when it is installed) in one Python process, on the MaskBench dev
split with the Llama-3 ``tokenizer.json``.

Columns, each over the work every engine in it did:

- **correctness**: schemas compiled, valid instances accepted, invalid
  instances accepted (each instance tokenized canonically and walked
  token by token, then the matcher must accept).
- **time to first mask**: grammar from the schema + matcher + first mask
  (our process-wide compile cache is cleared before each schema).
- **per-mask time**: one ``fill_next_token_bitmask`` Python call, end to
  end (the calling thread's CPU time, as time to first mask and overhead), at every step of every valid instance, slicers on for both; mean,
  p50, p99. Before timing, each step's sampled token must be in both masks.
- **batch fill**: B in {1, 16, 64, 256} sessions decoding in lockstep;
  ``fill_next_token_bitmask_batch`` on 1 and 2 threads, llguidance's
  ``fill_next_token_bitmask_par`` (an ``LLExecutor`` of 2 threads) and its
  one-row loop; rows per second of wall-clock time, best of 3 passes.
- **call overhead**: the Python call on a mask with one allowed token (a
  3-token vocabulary, where the mask itself costs nothing; and Llama-3 at a
  state where only the end-of-text token may come).

Writes ``target/bench/python.md`` and ``target/bench/python.json``. XGrammar
(``xgrammar`` with ``torch`` and ``transformers``) is measured when it
imports; otherwise its columns say "not installed" and a line says so.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import structgen

REPO = Path(__file__).resolve().parents[2]
NS = 1e-9
# Single-threaded timings use the calling thread's CPU time: both engines
# compute a single mask on the calling thread, and on a shared, loaded
# machine the CPU time is what a descheduled wall clock is not: repeatable.
# Batch fills run on several threads and use the wall clock.
CLOCK = time.thread_time_ns


def shared_data():
    base = Path(os.environ.get("STRUCTGEN_SHARED", REPO.parent / "shared"))
    data = base / "data"
    if not data.is_dir():
        sys.exit(f"the shared corpora are absent ({data}); set STRUCTGEN_SHARED")
    return data


def stats(ns):
    a = np.asarray(ns, dtype=np.float64)
    if len(a) == 0:
        return {"n": 0, "mean": float("nan"), "p50": float("nan"), "p99": float("nan")}
    return {
        "n": int(len(a)),
        "mean": float(a.mean() / 1000),
        "p50": float(np.percentile(a, 50) / 1000),
        "p99": float(np.percentile(a, 99) / 1000),
    }


def bit(row, t):
    return (int(row[t // 32]) >> (t % 32)) & 1


class Ours:
    name = "structgen"

    def __init__(self, tokenizer_json, eos):
        self.tok = structgen.Tokenizer.from_json(tokenizer_json)
        self.eos = eos
        self.vocab = self.tok.vocab_size

    def compile(self, schema):
        return structgen.Grammar.from_llguidance({"grammars": [{"json_schema": schema}]})

    def matcher(self, grammar):
        return structgen.Matcher(self.tok, grammar, stop_tokens=self.eos)

    def fill(self, m, b, i=0):
        m.fill_next_token_bitmask(b, i)

    def accept(self, m, t):
        return m.accept_token(t)

    def accepting(self, m):
        return m.is_accepting()


class Llg:
    name = "llguidance"

    def __init__(self, llguidance, path):
        import llguidance.numpy

        self.llg = llguidance
        self.np = llguidance.numpy
        self.tok = llguidance.LLTokenizer(str(path))
        self.eos = self.tok.eos_tokens
        self.vocab = self.tok.vocab_size

    def compile(self, schema):
        g = self.llg.LLMatcher.grammar_from_json_schema(schema)
        m = self.llg.LLMatcher(self.tok, g, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def matcher(self, grammar):
        return grammar.deep_copy()

    def fill(self, m, b, i=0):
        self.np.fill_next_token_bitmask(m, b, i)

    def accept(self, m, t):
        return m.consume_token(t)

    def accepting(self, m):
        return m.is_accepting()


class Xgr:
    name = "xgrammar"

    def __init__(self, path, vocab):
        import torch
        import xgrammar as xgr
        from transformers import PreTrainedTokenizerFast

        self.torch, self.xgr = torch, xgr
        hf = PreTrainedTokenizerFast(tokenizer_file=str(path))
        self.info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=vocab)
        # No cache: every compile is timed as a first compile.
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)
        self.vocab = vocab
        self.version = getattr(xgr, "__version__", "?")

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True)

    def matcher(self, grammar):
        return self.xgr.GrammarMatcher(grammar)

    def fill(self, m, b, i=0):
        m.fill_next_token_bitmask(b, i)

    def accept(self, m, t):
        return m.accept_token(t)

    def accepting(self, m):
        # XGrammar takes a stop token exactly when the grammar may end.
        return m.accept_token(self.info.stop_token_ids[0]) and m.is_terminated()

    def bitmask(self, batch):
        return self.xgr.allocate_token_bitmask(batch, self.vocab)


def load(data, stride, limit):
    recs = []
    with gzip.open(data / "maskbench" / "dev.jsonl.gz", "rt") as f:
        for i, line in enumerate(f):
            if i % stride == 0:
                recs.append(json.loads(line))
                if limit and len(recs) >= limit:
                    break
    return recs


def compile_timed(engine, schema):
    """(grammar or None, nanoseconds to grammar + matcher + first mask)."""
    if engine.name == "structgen":
        structgen.clear_grammar_cache()
    b = engine.bitmask(1) if hasattr(engine, "bitmask") else structgen.allocate_token_bitmask(1, engine.vocab)
    t0 = CLOCK()
    try:
        g = engine.compile(schema)
        m = engine.matcher(g)
        engine.fill(m, b)
    except Exception:
        return None, None
    return g, CLOCK() - t0


def walk(engine, grammar, ids):
    """Whether the engine accepts the token sequence ``ids`` and then ends."""
    m = engine.matcher(grammar)
    for t in ids:
        if not engine.accept(m, t):
            return False
    return engine.accepting(m)


def correctness_and_ttfm(engines, recs, encode):
    out = {e.name: {"compiled": 0, "valid": 0, "valid_accepted": 0, "invalid": 0, "invalid_accepted": 0} for e in engines}
    ttfm = {e.name: [] for e in engines}
    grammars = []
    for rec in recs:
        row = {}
        times = {}
        for e in engines:
            g, ns = compile_timed(e, rec["schema"])
            if g is not None:
                out[e.name]["compiled"] += 1
                row[e.name] = g
                times[e.name] = ns
        if len(times) == len(engines):
            for name, ns in times.items():
                ttfm[name].append(ns)
        for t in rec.get("tests", []):
            ids = encode(json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False))
            key = "valid" if t.get("valid") else "invalid"
            for e in engines:
                out[e.name][key] += 1
                if e.name in row and walk(e, row[e.name], ids):
                    out[e.name][key + "_accepted"] += 1
        grammars.append(row)
    return out, {k: stats(v) for k, v in ttfm.items()}, grammars


def per_mask(engines, recs, grammars, encode):
    """Interleaved per-step timing over valid instances every engine
    compiled; each sampled token must be in every engine's mask."""
    times = {e.name: [] for e in engines}
    masks = {e.name: (e.bitmask(1) if hasattr(e, "bitmask") else structgen.allocate_token_bitmask(1, e.vocab)) for e in engines}
    steps = 0
    for rec, row in zip(recs, grammars):
        if len(row) != len(engines):
            continue
        for t in rec.get("tests", []):
            if not t.get("valid"):
                continue
            ids = encode(json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False))
            ms = {e.name: e.matcher(row[e.name]) for e in engines}
            ok = True
            for step in range(len(ids) + 1):
                for e in engines:
                    b = masks[e.name]
                    t0 = CLOCK()
                    e.fill(ms[e.name], b)
                    times[e.name].append(CLOCK() - t0)
                steps += 1
                if step == len(ids):
                    break
                tok = ids[step]
                for e in engines:
                    b = masks[e.name]
                    allowed = bit(b[0], tok) if isinstance(b, np.ndarray) else (int(b[0, tok // 32]) >> (tok % 32)) & 1
                    if not allowed or not e.accept(ms[e.name], tok):
                        ok = False
                if not ok:
                    # Drop this walk's samples of the step that failed
                    # (engines disagree on the instance; rare).
                    break
    return {k: stats(v) for k, v in times.items()}, steps


def batch_fill(ours, llg, recs, grammars, encode, steps, batches):
    """Rows per second of the batch calls at each batch size: B sessions
    (valid instances, repeated when there are fewer) decode in lockstep;
    each step fills every row (timed), then every session consumes its next
    token (not timed; a finished session starts over, not timed either)."""
    sessions = []
    for rec, row in zip(recs, grammars):
        if "structgen" in row and "llguidance" in row:
            for t in rec.get("tests", []):
                if t.get("valid"):
                    sessions.append((row, encode(json.dumps(t["data"], separators=(",", ":"), ensure_ascii=False))))
    results = []
    executors = {n: llg.llg.LLExecutor(num_threads=n) for n in (2,)}
    for B in batches:
        picked = [sessions[i % len(sessions)] for i in range(B)]

        def fresh():
            return (
                [ours.matcher(r["structgen"]) for r, _ in picked],
                [llg.matcher(r["llguidance"]) for r, _ in picked],
                [0] * B,
            )

        configs = {
            "structgen, 1 thread": lambda o, l, b: structgen.fill_next_token_bitmask_batch(o, b, num_threads=1),
            "structgen, 2 threads": lambda o, l, b: structgen.fill_next_token_bitmask_batch(o, b, num_threads=2),
            "llguidance, loop (1 thread)": lambda o, l, b: [llg.fill(m, b, i) for i, m in enumerate(l)],
            "llguidance, par (2 threads)": lambda o, l, b: llg.np.fill_next_token_bitmask_par(
                executors[2], [(m, i) for i, m in enumerate(l)], b
            ),
        }
        bitmask = structgen.allocate_token_bitmask(B, ours.vocab)
        # First, the result: every config's rows equal ours on 1 thread at
        # the first step (the canonical forcing aside, which llguidance may
        # apply: then its row is one of ours).
        o, l, _ = fresh()
        ref = bitmask.copy()
        structgen.fill_next_token_bitmask_batch(o, ref, num_threads=1)
        for name, fill in configs.items():
            o, l, _ = fresh()
            bitmask[:] = 0
            fill(o, l, bitmask)
            if name.startswith("structgen"):
                assert (bitmask == ref).all(), name
            else:
                assert ((bitmask & ~ref) == 0).all(), name
        row = {"B": B}
        for name, fill in configs.items():
            # A warm-up pass (both engines build lexer states on first
            # use), then the best of three timed passes.
            best = None
            for run in range(4):
                o, l, pos = fresh()
                total = 0
                for _ in range(steps):
                    t0 = time.perf_counter_ns()
                    fill(o, l, bitmask)
                    total += time.perf_counter_ns() - t0
                    for i, (r, ids) in enumerate(picked):
                        if pos[i] >= len(ids):
                            o[i], l[i], pos[i] = ours.matcher(r["structgen"]), llg.matcher(r["llguidance"]), 0
                            continue
                        t = ids[pos[i]]
                        if name.startswith("structgen"):
                            o[i].accept_token(t)
                        else:
                            l[i].consume_token(t)
                        pos[i] += 1
                if run > 0:
                    best = total if best is None else min(best, total)
            row[name] = B * steps / (best * NS)
        results.append(row)
    return results


def overhead(ours, llg, calls):
    out = {}
    tiny = structgen.Tokenizer.from_vocab([b"a", b"b", b"<eos>"], [2], [2])
    m = structgen.Matcher(tiny, structgen.Grammar.regex("a+"))
    b = structgen.allocate_token_bitmask(1, 3)
    m.fill_next_token_bitmask(b)
    assert [t for t in range(3) if bit(b[0], t)] == [0]
    out["structgen, 3-token vocabulary"] = time_calls(lambda: m.fill_next_token_bitmask(b), calls)
    x = ours.tok.encode("x")[0]
    regex = {
        "structgen": lambda: structgen.Matcher(ours.tok, structgen.Grammar.regex("x"), stop_tokens=ours.eos),
        "llguidance": lambda: llg.llg.LLMatcher(llg.tok, llg.llg.LLMatcher.grammar_from_regex("x")),
    }
    for e in (ours, llg):
        mm = regex[e.name]()
        assert e.accept(mm, x)
        bb = structgen.allocate_token_bitmask(1, e.vocab)
        e.fill(mm, bb)
        assert [t for t in range(e.vocab) if bit(bb[0], t)] == e.eos[:1], e.name
        out[f"{e.name}, Llama-3, only <|end_of_text|>"] = time_calls(lambda: e.fill(mm, bb), calls)
    return out


def time_calls(f, calls):
    f()
    best = float("inf")
    for _ in range(5):
        t0 = CLOCK()
        for _ in range(calls):
            f()
        best = min(best, (CLOCK() - t0) / calls)
    return best / 1000


def fmt(x, digits=1):
    return "-" if x != x else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", type=int, default=8, help="every K-th schema of the dev split")
    ap.add_argument("--limit", type=int, default=0, help="at most N schemas")
    ap.add_argument("--steps", type=int, default=30, help="lockstep steps per batch size")
    ap.add_argument("--calls", type=int, default=20000, help="calls per overhead sample")
    ap.add_argument("--no-xgrammar", action="store_true")
    args = ap.parse_args()

    import llguidance

    data = shared_data()
    tmp = REPO / "target" / "bench"
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "llama3.tokenizer.json"
    path.write_bytes(gzip.decompress((data / "tokenizers" / "llama3.tokenizer.json.gz").read_bytes()))
    llg = Llg(llguidance, path)
    ours = Ours(str(path), llg.eos)
    encode = ours.tok.encode
    engines = [ours, llg]
    xgr_note = None
    if args.no_xgrammar:
        xgr_note = "not measured (--no-xgrammar)"
    else:
        try:
            engines.append(Xgr(path, ours.vocab))
        except ImportError as e:
            xgr_note = f"not installed ({e.name}): its columns are skipped"
    if xgr_note:
        print(f"SKIPPED xgrammar: {xgr_note}", file=sys.stderr)

    recs = load(data, args.stride, args.limit)
    print(f"python bench: {len(recs)} schemas (stride {args.stride}), engines {[e.name for e in engines]}", file=sys.stderr)
    correct, ttfm, grammars = correctness_and_ttfm(engines, recs, encode)
    masks, steps = per_mask(engines, recs, grammars, encode)
    batches = batch_fill(ours, llg, recs, grammars, encode, args.steps, [1, 16, 64, 256])
    over = overhead(ours, llg, args.calls)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "llguidance": llguidance.__version__ if hasattr(llguidance, "__version__") else "?",
        "xgrammar": xgr_note or engines[-1].version,
        "schemas": len(recs),
        "stride": args.stride,
        "mask_steps": steps,
    }
    names = [e.name for e in engines]
    md = [
        "# Python: structgen vs llguidance" + (" vs XGrammar" if not xgr_note else ""),
        "",
        f"`cargo xtask bench python --stride {args.stride}`; {meta['date']}, commit {commit}, {meta['machine']}; "
        f"MaskBench dev, every {args.stride}th schema ({len(recs)}), Llama-3 tokenizer.json. XGrammar: {meta['xgrammar']}.",
        "",
        "| correctness | " + " | ".join(names) + " |",
        "| --- |" + " --- |" * len(names),
    ]
    for key in ("compiled", "valid_accepted", "invalid_accepted"):
        md.append(f"| {key.replace('_', ' ')} | " + " | ".join(str(correct[n][key]) for n in names) + " |")
    md.append(f"| (valid / invalid instances) | " + " | ".join(f"{correct[n]['valid']} / {correct[n]['invalid']}" for n in names) + " |")
    md += ["", "| µs | " + " | ".join(names) + " | ours / llguidance |" + (" ours / XGrammar |" if not xgr_note else ""),
           "| --- |" + " --- |" * (len(names) + 1 + (0 if xgr_note else 1))]
    for label, table in (("time to first mask", ttfm), ("per mask", masks)):
        for k in ("mean", "p50", "p99"):
            cells = [fmt(table[n][k]) for n in names]
            ratio = table["structgen"][k] / table["llguidance"][k]
            line = f"| {label}, {k} (n={table['structgen']['n']}) | " + " | ".join(cells) + f" | {ratio:.2f} |"
            if not xgr_note:
                line += f" {table['structgen'][k] / table['xgrammar'][k]:.2f} |"
            md.append(line)
    md += ["", "| batch fill, rows/s | " + " | ".join(k for k in batches[0] if k != "B") + " | ours 2 thr / 1 thr | ours 2 thr / llguidance par |",
           "| --- |" + " --- |" * (len(batches[0]) + 1)]
    for r in batches:
        cells = [f"{r[k]:.0f}" for k in r if k != "B"]
        md.append(
            f"| B = {r['B']} | " + " | ".join(cells)
            + f" | {r['structgen, 2 threads'] / r['structgen, 1 thread']:.2f} | {r['structgen, 2 threads'] / r['llguidance, par (2 threads)']:.2f} |"
        )
    md += ["", "| call overhead, one allowed token | µs per call |", "| --- | --- |"]
    for k, v in over.items():
        md.append(f"| {k} | {v:.2f} |")
    text = "\n".join(md) + "\n"
    print(text)
    (tmp / "python.md").write_text(text)
    (tmp / "python.json").write_text(
        json.dumps({"meta": meta, "correctness": correct, "ttfm_us": ttfm, "mask_us": masks, "batch_rows_per_s": batches, "overhead_us": over}, indent=1)
    )


if __name__ == "__main__":
    main()
