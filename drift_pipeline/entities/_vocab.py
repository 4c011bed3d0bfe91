"""Value pools for the built-in entity types.

Values are fictional or generic on purpose: a memory system cannot answer from world knowledge,
and every value is distinctive enough to be matched word-bounded in retrieved text. The same pools
feed adversarial noise (third-party mentions, hypotheticals), so a value a principal never held
still appears in transcripts.
"""

from __future__ import annotations

from ._types import Value


def values(*entries: str | tuple[str, ...]) -> tuple[Value, ...]:
    """Build values from ``"text"`` or ``("text", "alias", ...)`` entries."""
    built: list[Value] = []
    for entry in entries:
        if isinstance(entry, str):
            built.append(Value(entry))
        else:
            built.append(Value(entry[0], tuple(entry[1:])))
    return tuple(built)


EMPLOYERS = values(
    ("Northwind Traders", "Northwind"),
    ("Contoso Health", "Contoso"),
    ("Fabrikam Robotics", "Fabrikam"),
    ("Globex Logistics", "Globex"),
    ("Initech Software", "Initech"),
    ("Vandelay Imports", "Vandelay"),
    ("Tessellate Bio", "Tessellate"),
    ("Halvorsen & Pike", "Halvorsen"),
    ("Brightwater Energy", "Brightwater"),
    ("Quillfeather Press", "Quillfeather"),
    ("Lumen Cartography", "Lumen"),
    ("Osprey Analytics", "Osprey"),
    ("Marrowind Studios", "Marrowind"),
    ("Copperleaf Bank", "Copperleaf"),
    ("Stillwater Schools", "Stillwater"),
    ("Kestrel Aerospace", "Kestrel"),
    ("Pemberton Foods", "Pemberton"),
    ("Ravelin Security", "Ravelin"),
    ("Saltmarsh Architects", "Saltmarsh"),
    ("Thistledown Games", "Thistledown"),
    ("Ambergate Hospital", "Ambergate"),
    ("Wexford Civic Trust", "Wexford"),
    ("Zephyr Mobility", "Zephyr"),
    ("Orchid Dental Group", "Orchid Dental"),
)

CITIES = values(
    "Lisbon",
    "Porto",
    "Valencia",
    "Tallinn",
    "Ljubljana",
    "Utrecht",
    "Bristol",
    "Halifax",
    "Kyoto",
    "Montreal",
    "Edinburgh",
    "Denver",
    "Wellington",
    "Gothenburg",
    "Bologna",
    "Krakow",
    "Galway",
    "Tucson",
    "Adelaide",
    "Bergen",
    "Leipzig",
    "Nantes",
    "Asheville",
    "Cork",
)

RELATIONSHIP = values(
    "single",
    ("dating someone new", "dating"),
    ("in a long-distance relationship", "long-distance"),
    ("living with a partner", "living together", "moved in together"),
    "engaged",
    "married",
    "separated",
    "divorced",
)

HEALTH = values(
    ("recovering from knee surgery", "knee surgery"),
    ("managing type 2 diabetes", "diabetes"),
    ("dealing with chronic migraines", "migraines", "migraine"),
    ("recovering from a broken wrist", "broken wrist"),
    ("managing high blood pressure", "blood pressure"),
    ("in physiotherapy for a back injury", "back injury"),
    ("recovering from pneumonia", "pneumonia"),
    ("managing asthma", "asthma"),
    ("cleared after a full check-up", "full check-up", "clean bill of health"),
    ("recovering from a torn Achilles tendon", "Achilles"),
)

OPINION_TOPICS = {
    "remote_work": "remote work",
    "electric_cars": "electric cars",
    "nuclear_power": "nuclear power",
    "cryptocurrency": "cryptocurrency",
    "open_plan_offices": "open-plan offices",
    "four_day_week": "the four-day work week",
}

OPINIONS = values(
    ("strongly in favour", "in favour", "in favor"),
    ("cautiously optimistic", "optimistic"),
    ("skeptical", "sceptical"),
    ("firmly opposed", "opposed"),
    ("undecided", "on the fence"),
)

HABITS = values(
    ("running before work", "running"),
    ("journaling every evening", "journaling"),
    ("learning Portuguese", "Portuguese"),
    ("meditating daily", "meditating", "meditation"),
    ("baking sourdough", "sourdough"),
    ("rock climbing", "climbing"),
    ("cycling to work", "cycling"),
    ("reading before bed", "reading before bed"),
    ("swimming laps", "swimming"),
    ("taking cold showers", "cold showers", "cold shower"),
    ("playing chess online", "chess"),
    ("gardening on weekends", "gardening"),
    ("practising the cello", "cello"),
    ("doing yoga", "yoga"),
)

CONSTRAINTS = values(
    "vegetarian",
    ("does not drink alcohol", "sober", "drink alcohol"),
    ("allergic to peanuts", "peanuts", "peanut"),
    ("lactose intolerant", "lactose"),
    ("gluten-free", "gluten"),
    ("no meetings before 10am", "before 10am"),
    ("cannot take long-haul flights", "long-haul"),
    ("vegan", "vegan"),
    ("keeps kosher", "kosher"),
    ("avoids caffeine", "caffeine"),
    ("needs step-free access", "step-free", "wheelchair"),
    ("keeps Sundays work-free", "Sundays"),
)

PREFERENCE_DIMENSIONS: dict[str, tuple[str, tuple[Value, ...]]] = {
    "venue": (
        "venues",
        values(
            ("outdoor venues", "outdoor", "outdoors"),
            ("quiet indoor venues", "quiet indoor", "somewhere quiet"),
        ),
    ),
    "response_length": (
        "answer length",
        values(
            ("brief answers", "brief", "short answers"),
            ("detailed answers", "detailed", "in depth"),
        ),
    ),
    "format": (
        "information layout",
        values(
            ("bullet points", "bullet points", "bullets"), ("flowing prose", "prose", "paragraphs")
        ),
    ),
    "units": (
        "units",
        values(("metric units", "metric", "kilometres"), ("imperial units", "imperial", "miles")),
    ),
    "meeting_time": (
        "meeting times",
        values(("morning meetings", "mornings"), ("afternoon meetings", "afternoons")),
    ),
    "contact_channel": (
        "contact channel",
        values(
            ("email", "email"), ("phone calls", "phone", "call"), ("text messages", "texts", "text")
        ),
    ),
}

RESPONSE_FORMATS = values(
    ("reply in bullet points", "bullet points"),
    ("reply in short paragraphs", "short paragraphs"),
    ("start every answer with a TL;DR", "TL;DR", "TLDR"),
    ("write in British English", "British English"),
    ("use a formal tone", "formal tone"),
    ("use plain language with no jargon", "plain language", "no jargon"),
    ("include a numbered action list", "numbered", "action list"),
)

TASKS = values(
    ("the quarterly budget spreadsheet", "budget spreadsheet"),
    ("the wedding seating plan", "seating plan"),
    ("the grant proposal draft", "grant proposal"),
    ("the conference talk slides", "talk slides", "slides"),
    ("the apartment lease comparison", "lease comparison"),
    ("the tax return checklist", "tax return"),
    ("the onboarding guide", "onboarding guide"),
    ("the garden planting schedule", "planting schedule"),
    ("the holiday itinerary", "itinerary"),
    ("the cover letter", "cover letter"),
    ("the newsletter draft", "newsletter"),
    ("the car insurance comparison", "insurance comparison"),
)

WORKFLOW_PREFERENCES = values(
    ("cite sources for factual claims", "cite sources", "sources"),
    ("show code examples in Python", "Python"),
    ("ask before running code", "ask before running"),
    ("end with a one-line summary", "one-line summary"),
    ("use tables for comparisons", "tables", "table"),
    ("search the web before answering", "search the web"),
)

NICKNAMES = values(
    "Sam", "Alex", "Jo", "Kit", "Robin", "Max", "Dani", "Teddy", "Bea", "Nico", "Rae", "Lou"
)

FIRST_NAMES = (
    "Maren",
    "Tomasz",
    "Aiyana",
    "Rafferty",
    "Noor",
    "Emeka",
    "Saoirse",
    "Haruto",
    "Ines",
    "Dmitri",
    "Priya",
    "Lucian",
    "Yetunde",
    "Oskar",
    "Marisol",
    "Callum",
    "Anouk",
    "Teodor",
    "Zainab",
    "Rhiannon",
)
SURNAMES = (
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castellano",
    "Nakamura",
    "Brennan",
    "Haddad",
    "Kowalczyk",
    "Abernethy",
    "Varga",
    "Delacroix",
    "Oyelaran",
    "Sundberg",
    "Pereira",
    "Whitcombe",
    "Arslan",
)
