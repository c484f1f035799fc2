"""JSON from a Hugging Face model, constrained by a JSON Schema.

    pip install ./python torch transformers
    python python/examples/hf_generate.py [MODEL]   # default: SmolLM2-135M-Instruct

Every row of the batch is held to the schema by structgen's logits
processor; the output parses and validates.
"""

import json
import sys

import structgen
import structgen.hf
from transformers import AutoModelForCausalLM, AutoTokenizer

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "languages": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 4},
    },
    "required": ["name", "age", "languages"],
    "additionalProperties": False,
}


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "HuggingFaceTB/SmolLM2-135M-Instruct"
    hf_tok = AutoTokenizer.from_pretrained(name)
    hf_tok.padding_side = "left"
    if hf_tok.pad_token is None:
        hf_tok.pad_token = hf_tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(name)

    tokenizer = structgen.Tokenizer.from_hf(hf_tok, vocab_size=model.config.vocab_size)
    grammar = structgen.Grammar.json_schema(SCHEMA)
    processor = structgen.hf.LogitsProcessor(grammar, tokenizer)

    people = ["a retired sailor", "a young programmer", "a violinist"]
    prompts = [
        hf_tok.apply_chat_template(
            [{"role": "user", "content": f"Describe {p} as JSON with name, age and languages."}],
            tokenize=False,
            add_generation_prompt=True,
        )
        for p in people
    ]
    inputs = hf_tok(prompts, return_tensors="pt", padding=True)
    out = model.generate(
        **inputs, logits_processor=[processor], max_new_tokens=120, do_sample=True, top_p=0.9
    )
    for row, matcher in zip(out, processor.matchers):
        text = hf_tok.decode(row[inputs["input_ids"].shape[1] :], skip_special_tokens=True)
        print(text)
        if matcher.is_accepting() or matcher.stop_reason == "stop_token":
            print("  parsed:", json.loads(text))
        else:
            print("  (cut by max_new_tokens before the JSON ended)")


if __name__ == "__main__":
    main()
