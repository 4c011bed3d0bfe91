"""``drift braincore``: the BrainCore evaluator (also ``python -m drift_pipeline.braincore``)."""

from drift_pipeline.braincore._cli import braincore_command as command

__all__ = ["command"]
