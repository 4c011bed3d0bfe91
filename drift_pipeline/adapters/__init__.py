"""Adapters that put real memory services and libraries behind DRIFT's backend interface.

Each adapter lives in its own module and imports its SDK only when its backend is built, so
``import drift_pipeline`` works without any adapter extra installed. Install one with
``pip install drift-pipeline[mem0]`` (or ``[honcho]``, ``[zep]``, ``[letta]``, ``[mcp]``).
"""
