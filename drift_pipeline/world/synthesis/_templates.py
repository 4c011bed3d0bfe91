"""Template text for the offline synthesizer.

The routine tasks every session is built around, their numbers, the assistant's replies and
the style pools (openers, closers). The sentences that carry events and decoys are built by the
phrasing grammar (the ``grammar`` package); this module holds the first-person phrasings of
constraint values it embeds.
"""

from __future__ import annotations

# --- first-person phrasings for values that do not read as "I'm {v}" ----------------------

FIRST_PERSON: dict[str, tuple[str, ...]] = {
    "vegetarian": (
        "I'm vegetarian",
        "I went vegetarian a while ago",
        "I don't eat meat; I'm vegetarian",
    ),
    "does not drink alcohol": ("I don't drink alcohol at all", "I'm sober these days"),
    "allergic to peanuts": ("I'm allergic to peanuts", "I have a serious allergy to peanuts"),
    "lactose intolerant": (
        "I'm lactose intolerant",
        "dairy is a problem for me; I'm lactose intolerant",
    ),
    "gluten-free": ("I have to eat gluten-free", "I'm strictly gluten-free"),
    "no meetings before 10am": (
        "I can't do meetings before 10am",
        "no meetings before 10am for me, ever",
    ),
    "cannot take long-haul flights": (
        "I can't take long-haul flights anymore",
        "long-haul travel is off the table for me",
    ),
    "vegan": ("I'm vegan now", "I eat vegan"),
    "keeps kosher": ("I keep kosher", "everything has to be kosher for me"),
    "avoids caffeine": ("I avoid caffeine completely", "no caffeine for me"),
    "needs step-free access": (
        "I need step-free access everywhere",
        "I use a wheelchair, so step-free access matters",
    ),
    "keeps Sundays work-free": (
        "I keep Sundays completely free of work",
        "Sundays are off limits for work",
    ),
}

THINGS = (
    "octopuses",
    "lighthouses",
    "medieval maps",
    "volcanoes",
    "jazz drummers",
    "bridges",
    "chess openings",
    "bees",
    "the deep sea",
    "old trains",
    "glass blowing",
    "tea ceremonies",
    "mushrooms",
    "ancient Rome",
    "typefaces",
    "glaciers",
    "radio telescopes",
    "clockmakers",
)

# --- routine tasks: the scaffolding of every session ----------------------------------------
# Each task pairs requests with the replies at the same index. Number placeholders draw from
# NUMBERS (realistic ranges per quantity); DERIVED ones are computed from them (conversions,
# shares), so every figure in a reply is right for the figure in its request.

TASKS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "email",
        (
            "Can you tighten up this email to {person} about the {thing2} deadline?",
            "Help me reply to {person}; they asked about the {thing2} budget.",
            "Draft a short note to {person} pushing our call to {day}.",
        ),
        (
            "Here's a tighter version: 'Hi {person}, quick update on {thing2}: we're on track for {day}.'",
            "Sure. I'd open with the decision, then the {thing2} numbers, then a clear ask.",
            "Done. I kept it to three sentences and put the new time for {day} at the top.",
        ),
    ),
    (
        "units",
        (
            "How many kilometres is {miles} miles?",
            "Convert {fahrenheit} degrees Fahrenheit to Celsius for me.",
            "What's {grams} grams in ounces?",
        ),
        (
            "{miles} miles is about {km} kilometres.",
            "{fahrenheit}°F is {celsius}°C, rounded to one decimal place.",
            "{grams} grams comes to about {ounces} ounces.",
        ),
    ),
    (
        "planning",
        (
            "Can you help me plan {day}? I've got {errand_count} things to fit in.",
            "What's a sensible order for my errands on {day}: the bank, the pharmacy and the {errand}?",
            "Block out two hours on {day} for the {thing2} review.",
        ),
        (
            "With {errand_count} things, I'd do the hardest first while you're fresh and batch the rest after lunch.",
            "Bank first, then the {errand}, and the pharmacy last so nothing sits in a warm car.",
            "Added to {day}. You still have a free slot after the {thing2} review.",
        ),
    ),
    (
        "writing",
        (
            "Give me three title ideas for a post about {thing}.",
            "Summarise this article about {thing} in two lines.",
            "Proofread my paragraph on {thing}, please.",
        ),
        (
            "Three options: 'Notes on {thing}', 'What I got wrong about {thing}', and 'A field guide to {thing}'.",
            "In short: the article makes a case for paying more attention to {thing}.",
            "Fixed two typos and one run-on sentence; the point about {thing} reads clearly now.",
        ),
    ),
    (
        "spreadsheet",
        (
            "My spreadsheet formula for the {thing2} column returns an error. Ideas?",
            "How do I sum column {col} only where the status says done?",
            "Can you explain what a pivot table would do for my {thing2} data?",
        ),
        (
            "Probably a text value in the column; wrap it in VALUE() or clean the input.",
            "Use SUMIF on column {col} with 'done' as the criterion.",
            "A pivot table would group the {thing2} rows by category and total them for you.",
        ),
    ),
    (
        "gift",
        (
            "Any gift ideas for {person}? Budget is about {budget} euros.",
            "What should I write in a birthday card for {person}?",
            "Help me pick between a book and a plant for {person}.",
        ),
        (
            "For around {budget} euros: a nice notebook, a class voucher, or a book about {thing}.",
            "Something short and warm: 'Happy birthday, {person}! Here's to a great year.'",
            "The plant lasts longer; the book about {thing} is more personal. I'd lean book.",
        ),
    ),
    (
        "travel",
        (
            "What's the cheapest way to get from the airport to the centre on {day}?",
            "Pack list for a work trip of {trip_days} days, please.",
            "Which is better for a layover of {layover} hours: stay airside or go into town?",
        ),
        (
            "The train is usually cheapest; book ahead for {day} and it's about {fare} euros.",
            "Basics: charger, {shirts} shirts for the {trip_days} days, documents, and a book about {thing}.",
            "With {layover} hours I'd stay airside unless the centre is under 30 minutes away.",
        ),
    ),
    (
        "cooking",
        (
            "I have rice, spinach and {eggs} eggs. Dinner ideas?",
            "How long do I roast potatoes at {oven} degrees Celsius?",
            "Scale this recipe from 4 to {servings} servings for me.",
        ),
        (
            "A quick spinach fried rice would use all {eggs} eggs; crack them in at the end.",
            "At {oven}°C, roughly {roast_minutes} minutes, turning once halfway.",
            "Multiply every quantity by {scale} and round the spices down a little.",
        ),
    ),
    (
        "tech",
        (
            "My laptop fan is loud whenever I open the {thing2} dashboard. Normal?",
            "How do I share a calendar with {person} without giving edit rights?",
            "Is it worth upgrading to {ram} GB of RAM?",
        ),
        (
            "Dashboards with live charts can spike the CPU; try closing other tabs first.",
            "Share it with {person} as 'see all event details' rather than 'make changes'.",
            "For your workload, {ram} GB is plenty; I'd spend the money on storage instead.",
        ),
    ),
    (
        "money",
        (
            "Help me split a dinner bill of {bill} euros between {diners} people with a 10% tip.",
            "Is {pct}% interest on a savings account good right now?",
            "What should I track in a monthly budget for {thing2} costs?",
        ),
        (
            "With the 10% tip that's {share} euros each.",
            "It's competitive, but check whether the {pct}% rate drops after an intro period.",
            "Track fixed costs, variable costs and one-off {thing2} items separately.",
        ),
    ),
)

NUMBERS: dict[str, tuple[int, ...]] = {
    "miles": tuple(range(1, 501)),
    "fahrenheit": tuple(range(-4, 111)),
    "grams": tuple(range(25, 1001, 25)),
    "errand_count": tuple(range(2, 9)),
    "budget": tuple(range(15, 121, 5)),
    "trip_days": tuple(range(2, 11)),
    "layover": tuple(range(1, 13)),
    "fare": tuple(range(4, 26)),
    "eggs": tuple(range(2, 13)),
    "oven": tuple(range(180, 231, 10)),
    "servings": (2, 3, 5, 6, 8, 10, 12),
    "ram": (8, 16, 32, 64),
    "bill": tuple(range(40, 401, 5)),
    "diners": tuple(range(2, 9)),
    "pct": (1, 2, 3, 4, 5),
}
"""Number placeholders: the values each quantity may take (realistic for what it counts)."""

DERIVED: dict[str, tuple[str, ...]] = {
    "km": ("miles",),
    "celsius": ("fahrenheit",),
    "ounces": ("grams",),
    "shirts": ("trip_days",),
    "roast_minutes": ("oven",),
    "scale": ("servings",),
    "share": ("bill", "diners"),
}
"""Derived number placeholders and the numbers they are computed from."""

PEOPLE = ("Priya", "Marcus", "Elena", "Tobias", "Grace", "Omar", "Lena", "Felix", "Hana", "Diego")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ERRANDS = ("post office", "dry cleaner", "hardware store", "library", "bakery", "bike shop")
THINGS2 = (
    "Q3",
    "supplier",
    "onboarding",
    "venue",
    "website",
    "audit",
    "hiring",
    "launch",
    "training",
)
COLUMNS = ("B", "C", "D", "F", "H")

# --- assistant acknowledgements of an event turn -------------------------------------------

ACKS: tuple[str, ...] = (
    "Thanks for telling me. I'll keep that in mind.",
    "Noted. That's useful context.",
    "Got it, I'll factor that in.",
    "Understood, thanks for the update.",
    "Okay! I'll remember that going forward.",
    "Good to know. Let's carry on with the rest.",
)

NOISE_REPLIES: dict[str, tuple[str, ...]] = {
    "third_party": ("Oh, good for them!", "That's quite a change for them.", "Ha, fair enough."),
    "hypothetical": ("Worth thinking about, maybe.", "Fun to imagine!", "Could be, who knows."),
    "question": (
        "Good question; it depends a lot on the details.",
        "Opinions differ on that one.",
        "I can look into it properly if you want.",
    ),
    "sarcasm": ("Ha, sounds like quite a week.", "I sense some irony there.", "I hear you."),
    "small_talk": ("Sounds nice.", "Ha, classic.", "Interesting! Anyway, back to your question."),
}

# --- communication style ------------------------------------------------------------------

OPENERS: dict[str, tuple[str, ...]] = {
    "casual": ("hey!", "hiya.", "ok so", "morning!", "yo,", ""),
    "neutral": ("Hi.", "Hello.", "Quick question.", ""),
    "formal": (
        "Good morning.",
        "Good afternoon.",
        "Hello, I hope you are well.",
        "Dear assistant,",
    ),
}
CLOSERS: dict[str, tuple[str, ...]] = {
    "casual": ("thx!", "cheers", "ty", "lol ok", ""),
    "neutral": ("Thanks.", "Thanks a lot.", ""),
    "formal": ("Thank you very much.", "Many thanks for your help.", "Kind regards."),
}
PRIOR_CONTEXT = (
    "Like I mentioned before, ",
    "As we discussed last time, ",
    "Going back to our earlier chat, ",
    "Same as the other day, ",
)
FILLERS = (
    "It's been a busy stretch.",
    "No rush on this.",
    "I'm trying to get ahead of things this week.",
    "This has been on my list for ages.",
    "Let me know if anything is unclear.",
)

# The assistant sometimes addresses the principal by name (the name probes ask about), always in
# a world's first session.
ADDRESSES = (
    "Sure, {name}.",
    "Happy to help, {name}.",
    "Of course, {name}.",
    "Hi {name}!",
    "Good to hear from you, {name}.",
)
