"""Event stems of the agents' slot families: a project's decisions, tests and a crawl's frontier.

The principal (the person, or the agent that issued the objective) states them to the agents
it directs, as it would in a stand-up or a task hand-over. The placeholders are those of the
other stems (see ``_stems``): ``{v}`` the value, ``{old}`` the value it replaces, ``{when}`` a
time phrase, ``{day}`` a weekday.
"""

from __future__ import annotations

AGENT_STEMS: dict[str, tuple[tuple[str, str], ...]] = {
    "decision": (
        ("settled", "we settled on {v}"),
        ("going_with", "we're going with {v} from here on"),
        ("moved_to", "we moved over to {v} {when}"),
        ("replaced", "we replaced {old} with {v}"),
        ("dropped", "{old} is out and {v} is in"),
        ("signed_off", "the architecture review signed off on {v} {when}"),
        ("standard", "{v} is the standard for this service now"),
        ("migrated", "the migration to {v} finished on {day}"),
        ("decided", "the decision is made: the service runs on {v}"),
    ),
    "active_modules": (
        ("working_on", "most of the work this week is in the {v} module"),
        ("focus", "the {v} module is where our focus is now"),
        ("busy", "the {v} module is getting most of the commits"),
        ("picked_up", "we picked the {v} module back up {when}"),
        ("sprint", "this sprint is mostly about the {v} module"),
        ("open_prs", "nearly every open pull request touches the {v} module"),
        ("hot", "the {v} module is the busy part of the codebase right now"),
        ("owners", "the {v} module has three people working on it now"),
        ("reopened", "we reopened work on the {v} module on {day}"),
    ),
    "failing_tests": (
        ("failing", "{v} is failing on main"),
        ("red", "{v} went red {when}"),
        ("broke", "the last merge broke {v}"),
        ("still_failing", "{v} fails on every run now"),
        ("ci", "CI shows {v} failing since {day}"),
        ("flaky_no_more", "{v} is not flaky, it fails every time"),
        ("bisect", "I bisected it and {v} started failing with the last release"),
        ("known", "{v} is a known failure on the main branch"),
        ("nightly", "the nightly build fails on {v}"),
    ),
    "anti_patterns": (
        ("burned", "we got burned by {v}, so never again"),
        ("banned", "{v} is banned in this codebase"),
        ("caused", "the outage {when} was caused by {v}"),
        ("reverted", "we reverted the change that introduced {v}"),
        ("lesson", "the lesson from last sprint is to avoid {v}"),
        ("postmortem", "the postmortem traced the bug to {v}"),
        ("review_rule", "reviewers now reject anything with {v}"),
        ("failed", "the approach built on {v} failed in production"),
        ("no_more", "no more {v} anywhere in the service"),
    ),
    "style": (
        ("use", "we use {v} for every name in the code"),
        ("switch", "we switched from {old} to {v} for naming"),
        ("rule", "the naming rule is {v}, no exceptions"),
        ("linter", "the linter now enforces {v}"),
        ("renamed", "I renamed everything to {v} {when}"),
        ("guide", "the style guide says {v} for all identifiers"),
        ("convention", "our naming convention is {v}"),
        ("review", "reviewers will ask you for {v} in every name"),
        ("from_now", "it's {v} from now on, not {old}"),
    ),
    "dependencies": (
        ("added", "we added {v} as a dependency {when}"),
        ("pinned", "{v} is pinned in the lock file now"),
        ("pulled_in", "we pulled in {v}"),
        ("approved", "security approved {v} for the project"),
        ("installed", "{v} is installed in every environment"),
        ("relies", "the service relies on {v} now"),
        ("brought", "I brought {v} into the project on {day}"),
        ("requirements", "{v} is in the requirements since the last release"),
        ("vendor", "we depend on {v} from this release on"),
    ),
    "objective": (
        ("now", "the objective now is to {v}"),
        ("new_goal", "your new goal is to {v}"),
        ("changed", "the objective changed {when}: {v}"),
        ("done_next", "{old} is done, so next we {v}"),
        ("priority", "the priority from now on is to {v}"),
        ("focus", "focus everything on this: {v}"),
        ("task", "the task for this phase is to {v}"),
        ("instead", "instead of trying to {old}, we now {v}"),
        ("mission", "the mission for the rest of the run is to {v}"),
    ),
    "visited_patterns": (
        ("crawled", "{v} has been crawled successfully"),
        ("covered", "we covered every page under {v}"),
        ("finished", "the crawl of {v} finished {when}"),
        ("indexed", "everything matching {v} is indexed now"),
        ("complete", "coverage of {v} is complete"),
        ("fetched", "all pages under {v} were fetched without errors"),
        ("done", "{v} is done, no need to revisit it"),
        ("stored", "the pages under {v} are all stored"),
        ("walked", "we walked the whole {v} tree on {day}"),
    ),
    "dead_ends": (
        ("dead_end", "{v} is a dead end"),
        ("loops", "{v} just loops back on itself"),
        ("blocked", "{v} blocks every crawler we send"),
        ("skip", "skip {v}, it leads nowhere"),
        ("wasted", "we wasted hours on {v} {when}"),
        ("nothing", "there is nothing to find under {v}"),
        ("errors", "{v} returns errors for every request"),
        ("trap", "{v} is a crawler trap"),
        ("avoid", "avoid {v} from now on"),
    ),
    "environment": (
        ("now", "the site is served as a {v} now"),
        ("changed", "the site changed {when} and is a {v} now"),
        ("rebuilt", "they rebuilt the site as a {v}"),
        ("switched", "the site switched from a {old} to a {v}"),
        ("relaunch", "since the relaunch on {day} the site is a {v}"),
        ("layout", "the new layout is a {v}"),
        ("noticed", "I noticed the site moved to a {v}"),
        ("redeploy", "after their redeploy the site runs as a {v}"),
        ("served_as", "pages come back from a {v} these days"),
    ),
}
"""Event stems per agent slot family (the part of a slot name before ``/``)."""

AGENT_CONFIRM_PROMPTS: dict[str, str] = {
    "decision": "The build config points at {v} now; is that the decision?",
    "active_modules": "Most of the open work is in the {v} module; is that where we are?",
    "failing_tests": "The dashboard shows {v} in red; is it really failing?",
    "anti_patterns": "Should I flag {v} in every review from now on?",
    "style": "Should every new name follow {v}?",
    "dependencies": "The lock file lists {v}; is it part of the project now?",
    "objective": "Should I switch to this: {v}?",
    "visited_patterns": "The log shows {v} finished; can I mark it covered?",
    "dead_ends": "Should I stop sending requests to {v}?",
    "environment": "The pages look like a {v} now; has the site changed?",
}
"""The agent's question before a ``confirm`` family's sentence, per slot family."""

AGENT_TOPIC_WORDS: dict[str, str] = {
    "decision": "architecture",
    "active_modules": "project",
    "failing_tests": "test",
    "anti_patterns": "review",
    "style": "style",
    "dependencies": "dependency",
    "objective": "objective",
    "visited_patterns": "crawl",
    "dead_ends": "crawl",
    "environment": "site",
}
"""The topic word of lead-ins and correction cues, per slot family."""
