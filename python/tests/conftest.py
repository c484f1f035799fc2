"""Fixtures of the structgen Python tests: the shared corpora, the
tokenizers, and visible skips.

A test whose corpus or optional library is missing is skipped with its
reason (pytest prints it with ``-rs``, which ``cargo xtask ci`` passes);
with ``STRUCTGEN_REQUIRE_DATA=1`` (set by ``cargo xtask ci``) a missing
corpus fails instead, as in the Rust tests. Optional libraries
(transformers + torch, llama-cpp-python) always skip loudly when absent.
"""

import gzip
import os
from pathlib import Path

import pytest

import structgen

REPO = Path(__file__).resolve().parents[2]


def data_dir():
    """The shared ``data`` folder (``STRUCTGEN_SHARED``/data, or
    ``../shared/data`` beside the repository), or ``None``."""
    shared = os.environ.get("STRUCTGEN_SHARED")
    base = Path(shared) if shared else REPO.parent / "shared"
    data = base / "data"
    return data if data.is_dir() else None


def require(what, why):
    """Skips (or, under STRUCTGEN_REQUIRE_DATA=1, fails) test ``what``."""
    if os.environ.get("STRUCTGEN_REQUIRE_DATA") == "1":
        pytest.fail(f"{what} cannot run: {why} (STRUCTGEN_REQUIRE_DATA=1 forbids skipping)")
    pytest.skip(f"SKIPPED {what}: {why}")


def read_data(what, relative):
    """A file of the shared corpora (gunzipped when it ends in .gz)."""
    d = data_dir()
    if d is None:
        require(what, "the shared corpora are absent (set STRUCTGEN_SHARED)")
    path = d / relative
    if not path.exists():
        require(what, f"{path} is absent")
    raw = path.read_bytes()
    return gzip.decompress(raw) if relative.endswith(".gz") else raw


@pytest.fixture(scope="session")
def o200k():
    return structgen.Tokenizer.o200k_base()


@pytest.fixture(scope="session")
def llama3_json():
    """The Llama-3 tokenizer.json text."""
    return read_data("Llama-3 tokenizer tests", "tokenizers/llama3.tokenizer.json.gz").decode()


@pytest.fixture(scope="session")
def llama3(llama3_json):
    return structgen.Tokenizer.from_json(llama3_json)


def bits(bitmask_row, vocab_size):
    """One bitmask row as a boolean array over the ids below ``vocab_size``."""
    import numpy as np

    words = np.ascontiguousarray(np.asarray(bitmask_row).astype(np.uint32).astype("<u4"))
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab_size].astype(bool)


def allowed(bitmask_row, vocab_size):
    """The token ids whose bit is set in one bitmask row (token ``i`` is bit
    ``i % 32`` of word ``i // 32``), below ``vocab_size``."""
    import numpy as np

    return [int(i) for i in np.flatnonzero(bits(bitmask_row, vocab_size))]
