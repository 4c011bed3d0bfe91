"""Template text for the offline synthesizer.

Keys are slot families (the part of a slot name before ``/``). Placeholders:
``{v}`` the new value (its text or one of its aliases), ``{old}`` the previous value,
``{topic}`` an opinion topic, ``{fp}`` a first-person phrasing of the value, ``{name}`` the
principal's first name, ``{label}`` the slot's label. Templates that use ``{old}`` are used only
when there is an old value. Every template must express the value, which the answerability audit
checks on the final text.
"""

from __future__ import annotations

# --- signal events: the turn in which the event emerges, said by the principal --------------

SIGNAL: dict[str, tuple[str, ...]] = {
    "employer": (
        "We signed the offer from {v} last night, so my last day at {old} is Friday.",
        "First full week at {v} done. The onboarding there is intense.",
        "Can you help me update my bio? I'm at {v} now, not {old}.",
        "I handed in my notice at {old}; {v} made me an offer I couldn't refuse.",
        "My new manager at {v} wants a weekly status note. Could you draft a template?",
        "So, I officially work for {v} as of Monday.",
        "HR at {v} sent my contract today and I start next week.",
        "Badge photo day at {v}. Terrible lighting, but I'm in!",
        "Need a polite goodbye email for my team at {old}; I'm joining {v}.",
        "Switching desks for real this time: I accepted the job at {v}.",
        "I work at {v} now, so please update my details.",
        "New job news: I'm working for {v} from this week.",
        "Where I work changed again. It's {v} now.",
    ),
    "city": (
        "The movers finally dropped everything off in {v}; the new flat is full of boxes.",
        "Still getting used to the trams here in {v} since we moved.",
        "We moved to {v} last weekend, so I need to register with a new GP.",
        "Can you find me a climbing gym? I live in {v} now.",
        "After the move from {old} to {v} my commute is half as long.",
        "Change my weather widget to {v}, please. That's home now.",
        "First night in our new place in {v}. Neighbours seem friendly.",
        "Signed the lease in {v} today. Goodbye, {old}!",
        "I live in {v} now; the new city is growing on me.",
        "We moved, so the city I live in is {v} these days.",
    ),
    "relationship": (
        "Bit of personal news: I'm {v} now.",
        "Since I'm {v} now, can you help me rethink the holiday plans?",
        "I should tell you, because it changes some plans: I'm {v}.",
        "Update my emergency contact notes, would you? I'm {v} these days.",
        "It's been a strange month. Long story short, I'm {v} now.",
        "Relationship update, since you asked last time: I'm {v}.",
        "My relationship status changed. I'm {v}.",
    ),
    "health": (
        "The doctor confirmed it: I'm {v}.",
        "Can you move my Thursday plans? I'm {v} and need to take it easy.",
        "Note for the calendar: I'm {v}, so no heavy lifting for a while.",
        "Quick health update since you keep my schedule: I'm {v}.",
        "Got the results back. I'm {v}, which explains a lot.",
        "Health-wise, I'm {v} at the moment.",
        "My health situation right now: I'm {v}.",
    ),
    "opinion": (
        "Honestly, I've come round on {topic}: I'm {v} now.",
        "I read that long report on {topic}, and now I'm {v}.",
        "I used to think differently, but on {topic} I'm {v} these days.",
        "After the debate at work I changed my mind about {topic}. I'm {v}.",
        "If anyone asks where I stand on {topic}: {v}. That's my view now.",
    ),
    "constraints": (
        "Please keep this in mind for any bookings: {fp}.",
        "{fp}, so the steakhouse idea is out.",
        "Heads up before you plan the dinner: {fp}.",
        "One thing I never told you: {fp}. Can you factor that in from now on?",
        "For the conference form, {fp}.",
        "A constraint to respect whenever you plan anything for me: {fp}.",
        "When planning for me, keep this constraint in mind: {fp}.",
    ),
    "response_format": (
        "From now on, please {v}.",
        "New rule for your replies: {v}.",
        "Change of plan on formatting. Please {v}, starting today.",
        "Going forward I'd like you to {v} whenever you answer me.",
        "Can you {v} from here on? It's easier for me to scan.",
        "Standing instruction for how you format replies: {v}.",
        "Please format your replies differently from now on: {v}.",
    ),
    "completed_tasks": (
        "Great, so {v} is finally done. Thanks for finishing it!",
        "Perfect, that wraps up {v}. Consider it complete.",
        "Looks good, I've sent it off, so {v} is done.",
        "Checked your last version: {v} is finished, nothing left to do there.",
        "Task completed: {v} is done. Thank you!",
        "You can mark {v} as a completed task.",
    ),
    "preferred_name": (
        "Actually, please call me {v}. Nobody uses my full name.",
        "Small correction: it's {v}, not {name}, when you address me.",
        "You can drop the formal {name}; I go by {v}.",
        "By the way, I prefer {v}. Please use that from now on.",
        "I want to be called {v} from now on.",
        "Please call me {v}; that's what I like to be called.",
    ),
}

# --- soft signals: one mention of an accumulating habit or preference ----------------------

SOFT: dict[str, tuple[str, ...]] = {
    "habits": (
        "Squeezed in some {v} again this morning.",
        "Week three of {v} and I'm hooked.",
        "{v} is slowly becoming part of my routine.",
        "Did my {v} before anything else today.",
        "Skipped {v} yesterday and felt off all day.",
        "{v} is turning into a proper habit.",
        "My new habit of {v} is sticking.",
    ),
    "preference": (
        "I really do prefer {v}.",
        "Could we go with {v}? That works best for me.",
        "As usual, {v} please.",
        "{v} suit me better, to be honest.",
        "You know me: {v}, every time.",
        "I prefer {v}, honestly.",
    ),
    "workflow_preferences": (
        "Please {v}, like last time.",
        "Again, it really helps when you {v}.",
        "Remember to {v}; that's how I like it.",
        "Same as always: {v}.",
        "I like it when you {v}; that's how I like you to work.",
    ),
}

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

# --- noise: adversarial content that must not be stored as the principal's own state --------

NOISE: dict[str, tuple[str, ...]] = {
    "third_party": (
        "My sister just moved to {city}.",
        "My friend got a job at {employer}, lucky her.",
        "My colleague went {constraint_word} last month and won't shut up about it.",
        "My neighbour has taken up {habit} and now I hear it every morning.",
        "My brother is {relationship} now, apparently.",
        "My dad is {health}, so I've been driving him around.",
        "A guy on my team is {opinion} on {topic}, which makes lunch awkward.",
        "My cousin prefers {preference}; drives me mad.",
        "Our old flatmate is about to start at {employer}.",
    ),
    "hypothetical": (
        "If I ever quit, I'd probably apply to {employer}.",
        "If we ever moved, {city} would be top of the list.",
        "Imagine if I took up {habit}. Ha.",
        "Maybe one day I'll try being {constraint_word}, who knows.",
        "What if I just packed it all in and moved to {city}?",
        "I might be {opinion} on {topic} if the numbers were different.",
        "Would it be crazy to apply at {employer} someday?",
    ),
    "question": (
        "Is {city} nice in spring?",
        "What do you think it's like working at {employer}?",
        "Do people who are {constraint_word} struggle at conferences?",
        "Is {habit} actually good for you or is that a myth?",
        "Why are people so {opinion} about {topic}?",
        "How far is {city} from the coast?",
    ),
    "sarcasm": (
        "Oh sure, I'm totally moving to {city} tomorrow. 🙄",
        "Yeah right, like {employer} would ever hire me.",
        "Great, another Monday. I'm so thrilled.",
        "Oh yes, I'm definitely taking up {habit} at 5am. As if.",
        "Sure, I'm the world's biggest fan of {topic} now. /s",
        "I've answered about a million emails today.",
    ),
    "small_talk": (
        "Rainy again today.",
        "Watched a great documentary about {thing} last night.",
        "The coffee machine at work broke again.",
        "Traffic was awful this morning.",
        "Finally finished that book about {thing}.",
        "Long week. Glad it's almost over.",
        "The cat knocked my book about {thing} off the shelf at 3am.",
        "Do you ever get tired of people asking about {thing}?",
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
            "Done. I kept it to three sentences and moved the ask about {thing2} to the top.",
        ),
    ),
    (
        "units",
        (
            "How many kilometres is {n} miles?",
            "Convert {n} degrees Fahrenheit to Celsius for me.",
            "What's {n} grams in ounces?",
        ),
        (
            "That's roughly {n2} in the other unit; I rounded to one decimal place.",
            "About {n2}. Want me to keep a conversion table handy?",
            "It comes to {n2}, give or take a little.",
        ),
    ),
    (
        "planning",
        (
            "Can you help me plan {day}? I've got {n} things to fit in.",
            "What's a sensible order for errands on {day}: bank, pharmacy, {thing2}?",
            "Block out two hours on {day} for the {thing2} review.",
        ),
        (
            "I'd do the {thing2} first while you're fresh, then the rest after lunch.",
            "Here's a rough schedule for {day}: mornings for deep work, errands after {n2}.",
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
            "Three options: 'Notes on {thing}', 'Why {thing} matter', and 'A field guide to {thing}'.",
            "In short: {thing} are more interesting than they look, and the article explains why.",
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
            "Probably a text value in column {col}; wrap it in VALUE() or clean the input.",
            "Use SUMIF on column {col} with 'done' as the criterion.",
            "A pivot table would group the {thing2} rows by category and total them for you.",
        ),
    ),
    (
        "gift",
        (
            "Any gift ideas for {person}? Budget is about {n} euros.",
            "What should I write in a birthday card for {person}?",
            "Help me pick between a book and a plant for {person}.",
        ),
        (
            "For around {n} euros: a nice notebook, a class voucher, or a book about {thing}.",
            "Something short and warm: 'Happy birthday, {person}! Here's to a great year.'",
            "The plant lasts longer; the book about {thing} is more personal. I'd lean book.",
        ),
    ),
)

TASKS += (
    (
        "travel",
        (
            "What's the cheapest way to get from the airport to the centre on {day}?",
            "Pack list for a {n}-day work trip, please.",
            "Which is better for a {n}-hour layover: stay airside or go into town?",
        ),
        (
            "The train is usually cheapest; book ahead for {day} and it's about {n2} euros.",
            "Basics: charger, two shirts per {n} days, documents, and something about {thing} to read.",
            "With {n} hours I'd stay airside unless the city centre is under 30 minutes away.",
        ),
    ),
    (
        "cooking",
        (
            "I have rice, spinach and {n} eggs. Dinner ideas?",
            "How long do I roast potatoes at {n} degrees?",
            "Scale this recipe from 4 to {n} servings for me.",
        ),
        (
            "A quick spinach fried rice would use all of it; crack the eggs in at the end.",
            "Roughly {n2} minutes, turning once halfway.",
            "Multiply everything by {n2} and round the spices down a little.",
        ),
    ),
    (
        "tech",
        (
            "My laptop fan is loud whenever I open the {thing2} dashboard. Normal?",
            "How do I share a calendar with {person} without giving edit rights?",
            "Is it worth upgrading to {n} GB of RAM?",
        ),
        (
            "Dashboards with live charts can spike the CPU; try closing other tabs first.",
            "Share it with {person} as 'see all event details' rather than 'make changes'.",
            "For your workload, {n} GB is plenty; I'd spend the money on storage instead.",
        ),
    ),
    (
        "money",
        (
            "Help me split a {n} euro dinner bill between {n3} people with a tip.",
            "Is {pct}% interest on a savings account good right now?",
            "What should I track in a monthly budget for {thing2} costs?",
        ),
        (
            "With a 10% tip that's about {n2} euros each.",
            "It's competitive, but check whether the {pct}% rate drops after an intro period.",
            "Track fixed costs, variable costs and one-off {thing2} items separately.",
        ),
    ),
)

PEOPLE = ("Priya", "Marcus", "Elena", "Tobias", "Grace", "Omar", "Lena", "Felix", "Hana", "Diego")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
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
