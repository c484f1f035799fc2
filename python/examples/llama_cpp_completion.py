"""JSON from a GGUF model through llama-cpp-python, constrained by a schema.

    pip install ./python llama-cpp-python
    cargo xtask model          # prints the path of a small GGUF (SmolLM2-135M)
    python python/examples/llama_cpp_completion.py MODEL.gguf [tokenizer.json]

Without a tokenizer.json the vocabulary is read from the GGUF itself
(structgen.llama_cpp.tokenizer_from_llama).
"""

import json
import sys

import structgen
import structgen.llama_cpp
from llama_cpp import Llama, LogitsProcessorList

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 30},
        "population": {"type": "integer", "minimum": 0},
    },
    "required": ["city", "population"],
}


def main() -> None:
    llm = Llama(model_path=sys.argv[1], n_ctx=512, verbose=False)
    if len(sys.argv) > 2:
        tokenizer = structgen.Tokenizer.from_json(sys.argv[2], vocab_size=llm.n_vocab())
    else:
        tokenizer = structgen.llama_cpp.tokenizer_from_llama(llm)
    processor = structgen.llama_cpp.LogitsProcessor(structgen.Grammar.json_schema(SCHEMA), tokenizer)
    out = llm.create_completion(
        "The largest city of France, as JSON: ",
        max_tokens=60,
        temperature=0.7,
        logits_processor=LogitsProcessorList([processor]),
    )
    text = out["choices"][0]["text"]
    print(text)
    if processor.matcher.is_accepting() or processor.matcher.stop_reason == "stop_token":
        print("parsed:", json.loads(text))


if __name__ == "__main__":
    main()
