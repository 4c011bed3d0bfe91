"""``python -m drift_pipeline.braincore``: the BrainCore evaluator, as ``drift braincore``."""

from drift_pipeline.braincore._cli import braincore_command

braincore_command(prog_name="python -m drift_pipeline.braincore")
