"""DRIFT benchmark pipeline."""
