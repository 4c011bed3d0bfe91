"""Words of multi-peer sessions: team decisions, hand-over lines, agents' task chatter.

Decision values and task fills are kept apart from every slot pool, so a decision or a routine
line never states an entity's fact, and a canary's value never appears in any of them.
"""

from __future__ import annotations

from typing import Final

from drift_pipeline.entities._vocab import OPINION_TOPICS

DECISION_TOPICS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "release_day": ("release day", ("Tuesday", "Wednesday", "Thursday")),
    "standup_time": ("stand-up time", ("9:15", "9:45", "10:30")),
    "review_rule": (
        "review rule",
        ("two approvals", "one approval and a green build", "pair review"),
    ),
    "demo_format": ("demo format", ("a live demo", "a recorded walkthrough", "a written memo")),
    "retro_cadence": (
        "retrospective cadence",
        ("every sprint", "once a month", "every other sprint"),
    ),
}
"""Topic key → (topic in words, the values a team may agree on)."""

PROPOSALS: Final = (
    "I propose we make {v} the {topic}.",
    "My suggestion for the {topic} is {v}.",
    "I'd like {v} as our {topic}.",
    "I'm proposing {v} for the {topic}.",
)
"""How the proposer puts a decision (``{v}`` the value, ``{topic}`` the topic)."""

AGREEMENTS: Final = (
    "Agreed, {v} for the {topic}.",
    "{v} works for me as the {topic}.",
    "Fine by me: {v} is the {topic} then.",
    "Sounds good, the {topic} is {v}.",
)
"""How the other participants accept it."""

BRIEFING_LEADS: Final = (
    "For {newcomer}'s benefit: {c}.",
    "Since {newcomer} is new here, {c}.",
    "Catching {newcomer} up: {c}.",
    "{newcomer}, one thing you should know: {c}.",
)
"""How a hand-over line opens (``{c}`` the restated fact)."""

BRIEFINGS: Final[dict[str, str]] = {
    "employer": "I work at {v}",
    "city": "I live in {v}",
    "relationship": "I'm {v}",
    "health": "I'm {v}",
    "opinion": "on {topic}, I'm {v}",
    "constraints": "{fp}",
    "habits": "{v} is part of my routine",
    "preference": "I prefer {v}",
    "response_format": "I want replies to {v}",
    "completed_tasks": "{v} is already done",
    "preferred_name": "I go by {v}",
    "workflow_preferences": "I like my assistants to {v}",
    "decision": "we run on {v}",
    "active_modules": "most of the work is in the {v} module",
    "failing_tests": "{v} is failing on main",
    "anti_patterns": "{v} is banned here",
    "style": "we use {v} for names",
    "dependencies": "the project depends on {v}",
    "objective": "the objective is to {v}",
    "visited_patterns": "{v} has been crawled already",
    "dead_ends": "{v} is a dead end",
    "environment": "the site is a {v}",
}
"""A fact that holds, restated, per slot family (the part of a slot name before ``/``)."""

AGENT_TASKS: Final = (
    ("Please run the {suite} suite and report back.", "Ran the {suite} suite: {n} tests passed."),
    ("Can you profile the {job} job?", "Profiled the {job} job; the slowest step takes {n} ms."),
    ("Rebase the {branch} branch on main, please.", "Rebased {branch}; {n} commits replayed."),
    ("Check the logs of the {job} job.", "Checked the {job} logs: {n} warnings, no errors."),
    ("Open a draft pull request for the {branch} branch.", "Draft pull request #{n} is open."),
    ("Fetch the sitemap and count the {job} pages.", "The sitemap lists {n} {job} pages."),
    ("Clean up the temporary files from the {job} run.", "Removed {n} temporary files."),
    ("Bump the version in the {suite} package.", "Bumped {suite} to version 1.{n}."),
)
"""An agent's routine task: (request, reply) with ``{suite}``, ``{job}``, ``{branch}``, ``{n}``."""

TASK_FILLS: Final[dict[str, tuple[str, ...]]] = {
    "suite": ("smoke", "integration", "contract", "end-to-end", "unit"),
    "job": ("nightly", "export", "thumbnail", "cleanup", "digest"),
    "branch": (
        "feature/retry-banner",
        "fix/timezone-edge",
        "chore/docs-links",
        "feature/csv-export",
    ),
}
"""Fills of the agents' task lines (none is a slot value)."""

AGENT_ACKS: Final = (
    "On it.",
    "Noted.",
    "Understood, will do.",
    "Got it, thanks.",
    "Acknowledged.",
    "Okay, picking that up now.",
)
"""Short replies of an agent that has nothing else to say in its turn."""

DELEGATIONS: Final = (
    "@{worker}, {task}",
    "{worker}, can you take this one: {task}",
    "Passing this to {worker}: {task}",
)
"""How an orchestrator hands a task to a worker."""

OPINION_TOPIC_WORDS: Final[dict[str, str]] = dict(OPINION_TOPICS)
"""Opinion topic key → its words, for restating a view."""
