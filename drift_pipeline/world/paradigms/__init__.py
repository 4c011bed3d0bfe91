"""Paradigm generators beyond the single principal: the multi-peer world (spec §4).

Registered by import path in :mod:`drift_pipeline.world._paradigms`; nothing here is imported
until a world of that paradigm is generated.
"""
