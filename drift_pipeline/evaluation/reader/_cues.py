"""Cue rules that decide whether a mention is the subject's sincere, current assertion.

Each rule looks at the clause holding the mention (lower-cased, whitespace collapsed), split
around the mention into the text on its left and on its right. A *window* is the left text
after the previous candidate mention in the clause, so that in "I left Kestrel for Lumen" the
verb "left" governs Kestrel and not Lumen. Rules are tried in a fixed order and the first that
fires names the frame:

- ``retracted``: a tag or marker says the value no longer holds (``(outdated)``,
  ``no longer true since …``, a closed validity interval), or a retraction verb governs it
  ("used to", "left", "last day at", "moved from … to"), or a past state ("I was vegan").
- ``negated``: a negation governs it ("not vegetarian", "never lived in").
- ``sarcasm``, ``question``, ``hypothetical`` (conditionals, modals, wishes, plans),
  ``visit`` (a trip is not a residence), ``third_party`` (someone else's fact),
  ``not_about_subject`` (the assistant's own words, another speaker), ``generic_word`` (a
  short alias used as a common word: "kestrel nesting boxes").
- otherwise ``asserted``.

A "(may be outdated)"-style hedge changes nothing: the value is still what the memory states,
as a careful reader would take it, until something later replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._dates import DATE_TEXT


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split(" "))


__all__ = ["Frame", "MentionContext", "frame_of", "split_clauses", "strip_hedges"]

Frame = Literal[
    "asserted",
    "other_topic",
    "retracted",
    "negated",
    "sarcasm",
    "question",
    "hypothetical",
    "visit",
    "third_party",
    "not_about_subject",
    "generic_word",
    "aside",
    "vague",
]
_D = DATE_TEXT

_REL = (
    r"(?:sister|brother|sibling|mum|mom|mother|dad|father|parent|wife|husband|spouse|partner|"
    r"girlfriend|boyfriend|fianc[ée]e?|friend|mate|buddy|pal|colleague|coworker|co-worker|boss|"
    r"neighbour|neighbor|cousin|aunt|auntie|uncle|son|daughter|kid|child|children|flatmate|"
    r"roommate|housemate|grandma|grandmother|grandpa|grandfather|granny|teammate|classmate|"
    r"niece|nephew|in-law|guy|woman|man|girl|boy|lady|bloke|client|landlord|landlady|"
    r"family|folks|students?|customer|ex|stepmother|stepfather|stepsister|stepbrother|twin|"
    r"professor|teacher|lecturer|tutor|coach|trainer|therapist|dentist|doctor|mentor|"
    r"supervisor|grandad|granddad|nan|nana|gran|bf|gf|hubby|missus|crush|godmother|godfather|"
    r"baby|toddler|relative|acquaintance|officemate|manager|lead|tech lead|team lead|cto|ceo|"
    r"founder|cofounder|co-founder|intern|recruiter|hr)s?"
)
_THIRD = re.compile(
    r"\b(?:my|our|his|her|their|your|a|an|the|this|that|one of my|some)\s+"
    rf"(?:[a-z'-]+\s+){{0,2}}?{_REL}\b"
    rf"|\b[a-z]+'s\s+(?:[a-z'-]+\s+){{0,2}}?{_REL}\b"
    r"|\b(?:someone|somebody|people|everyone|everybody|nobody|no one|folks|they say)\b"
    rf"|^\W*{_REL}\b(?!\s*[:=])"
)
# The value goes to someone else: "an oat flat white for my manager".
_FOR_OTHER = re.compile(
    rf"^[\s,]*(?:for|to)\s+(?:my|our|his|her|their|the)\s+(?:[a-z'-]+\s+)?{_REL}\b"
)
# The value said to be someone else's: "the under-12s are her husband's squad".
_BELONGS_RIGHT = re.compile(
    rf"^\s+(?:is|are|was|were)\s+(?:my|his|her|their|our)\s+{_REL}(?:'s|s')"
)
_PRONOUN_THIRD = re.compile(r"\b(?:he|she|they|he's|she's|they're|him|them|his|her|their)\b")
# Subject pronouns only: "my" and "me" name the speaker without making them the one who acts
# ("a guy on my team is undecided" is the guy's view).
_FIRST = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll)\b")
_YOU = re.compile(r"\b(?:you|you're|youre|you've|you'll|you'd|your|yours|yourself)\b")
_MODAL_AGENT = re.compile(r"^(?:i'd|i'll|we'd|we'll)$")
# "My new manager at Lumen …": a relation that places the speaker at the value.
_AT_MINE = re.compile(
    r"\bmy\s+(?:new\s+|current\s+|first\s+)?(?:manager|boss|team|colleagues?|co-?workers?|"
    r"office|desk|job|role|position|contract|badge|onboarding|first (?:day|week)|flat|"
    r"apartment|place|house|home|landlord|neighbours?|neighbors?|gp|commute|lease)\s+"
    r"(?:at|in|here in|with)\s*$"
)

_SARCASM = re.compile(
    r"\b(?:oh sure|oh yeah|oh yes|oh great|oh joy|oh wonderful|oh totally|yeah right|yeah, right|"
    r"as if|said no one|said nobody|in my dreams|like that's going to happen|"
    r"like that'll happen|that'll be the day|what a joke|lol no|haha no|sure, jan|"
    r"because that's so likely|not!|great plan|what a treat|what fun|just what i needed|"
    r"sure,? i'll just|yeah,? because|i'd sooner|over my dead body|not in a million years|"
    r"in a million years|sarcastic\w*|sarcasm|ironic\w*|tongue[- ]in[- ]cheek|deadpan|"
    r"mock(?:ing|ingly)|i live for|yeah,? me (?:on|in|at|with|doing|going|being)|"
    r"yeah,? totally|nothing says [\w ]{1,20} like)(?![\w'])|"
    r"/s\b|🙄|😒|😏|\blike [\w' ]{1,30} would ever\b"
)
_SARCASM_FACES = frozenset({"🙄", "😒", "😏"})
_QUESTION_WORDS = re.compile(
    r"\b(?:i wonder|wondering|curious (?:about|whether|if)|do you know|any idea|"
    r"what do you think|should i|is it worth|query|queries|query log|search(?:ed|es)? for|"
    r"user question|search history|"
    r"ask(?:s|ed|ing)? (?:about|how|whether|if|what|which|why|when|where|for|me about))\b"
)
_CAUSAL = re.compile(
    r"\b(?:since|because|as|now that|given that|seeing as|cause)\s+(?:i|i'm|i've|we|we're|my)\b"
)
_REQUEST = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|and|also|please|actually),?\s+)*(?:can|could|would|will)\s+"
    r"(?:you|we)\s+(?:please\s+)?(?:always\s+)?(?:use|go with|stick (?:to|with)|switch to|keep|"
    r"format|start|reply|answer|write|call me|put|include|add|send|address me|do)\b"
)
_INSTRUCTION = re.compile(
    r"(?:'d|would)\s+(?:like|love|prefer)\s+(?:you|it if you|that you)|want you to|"
    r"'d prefer|would prefer|'d rather you|would rather you|"
    r"(?:want|like|prefer)s?\s+to\s+be\s+(?:called|addressed|known)|"
    # A preference about one's own name is a standing request, not a wish: "I'd rather be
    # called Lou".
    r"(?:'d|would)\s+(?:much\s+)?rather\s+be\s+(?:called|addressed|known)"
)
_STANDING = re.compile(r"\b(?:from now on|from here on|going forward|from today|as usual)\b")
_STRONG_HYPO = re.compile(
    r"\b(?:if|imagine|imagining|suppose|supposing|what if|hypothetical\w*|conditional|in theory|"
    r"theoretically|in another life|pretend|unless|whether|wish|wishing|dream|dreams|dreaming|"
    r"dreamt|fantasi[sz]\w*|maybe|perhaps|possibly|probably|someday|some day|one day|eventually|"
    r"in the future|hopefully|daydream\w*|dreams? (?:about|of)|"
    r"wonder(?:s|ed)?(?: aloud)? (?:what|whether|if|how)|"
    r"what it(?:'d| would| might) be like|(?:talk|talks|talked|talking) about (?:getting|buying|"
    r"moving|going|becoming|adopting|switching|trying|taking)|scenario|at some point|"
    r"one of these days|nothing decided|not decided)\b"
)
_STAYING = re.compile(
    r"\b(?:intend\w*|plan\w*|want\w*|going|gonna|hop\w*|mean\w*|expect\w*) to "
    r"(?:stay|remain|keep|stick)\b|\b(?:staying|remaining|sticking) (?:at|in|with)\b"
)
# Saying one would not call oneself so: "I wouldn't say I'm vegetarian".
_DENIAL = re.compile(
    r"\b(?:wouldn't|would not|won't|can't|cannot|couldn't|don't|do not|never) (?:really )?"
    r"(?:say|call myself|claim|describe myself as|consider myself)\b"
)
# Words of a song, show, book or sign, quoted: "favourite line from the show: "I'm a lawyer"".
_QUOTED_WORK = re.compile(
    r"\b(?:line|quote|lyrics?|song|show|film|movie|book|sign|t-shirt|poster|mug|slogan|motto|"
    r"caption|meme)s?\b"
)
# A label that makes what follows an aim: "new year's goal: start learning the harp".
_GOAL_LABEL = re.compile(
    r"\b(?:goals?|plans?|resolutions?|wish(?:list)?|to-?do|aims?|bucket list|someday)\s*[:=-]\s"
)
_CONDITIONS = frozenset({"if", "unless", "whether", "suppose", "supposing", "imagine", "what if"})
_WEAK_HYPO = re.compile(
    r"\b(?:would|wouldn't|could|couldn't|might|may(?! \d)|maybe|perhaps|possibly|probably|"
    r"should|someday|some day|one day|eventually|in the future|hope|hoping|hopefully|tempted|"
    r"considering|consider|considered|thinking (?:of|about)|think about|plan|plans|planning|"
    r"intend\w*|wants? to(?! (?:let you know|tell you|say|mention|flag|update you)\b)|"
    r"wanted to(?! (?:let you know|tell you|say|mention|flag|update you)\b)|love to|going to|"
    r"gonna|about to|apply\w*|applied|"
    r"interview\w*|looking (?:at|into)|research\w*|shortlist\w*|fancy|try|trying|curious|"
    r"will|won't|'ll|aim\w* to|keen to|eyeing|toying with|weighing|debating|planned|upcoming|"
    r"to-?do|wish ?list|bucket list|interests?|interested|would like|goals?|resolution|"
    r"leaning|tempted by|not sure|unsure|comparing|weighing up|deciding between|"
    r"saving (?:up )?(?:for|to buy)|(?:it|that|there|this|he|she|they|you)'d|"
    r"choosing between|"
    r"(?:'d|would) (?:love|like|prefer|rather)(?! to be called))\b"
)
# A change still ahead: "I'm moving to Lisbon next month", "once we move to Lisbon".
_PLANNED = re.compile(r"\b(?:moving|relocating|joining|switching|transferring|heading)\b[^.;]*$")
_FUTURE_TIME = re.compile(
    r"^[^.;]{0,40}\b(?:next (?:week|month|year|spring|summer|autumn|fall|winter|quarter)|"
    r"in (?:a|one|two|three|four|five|six|a few|\d+) (?:weeks?|months?|years?)|soon|"
    r"later this (?:year|month)|tomorrow|at the end of the (?:month|year))\b"
)
_WHEN_FUTURE = re.compile(
    r"\b(?:once|when|after|as soon as) (?:i|we) (?:move|get|start|switch|join|become|go)\b"
)
_RIGHT_MODAL = re.compile(r"^\W*(?:would|could|might|may|sounds|seems|looks)\b")
_VISIT = re.compile(
    r"\b(?:trial|one-off|taster|day pass|guest pass|visit\w*|trip|holiday|vacation|weekend|"
    r"travel\w*|fly\w*|flew|stopover|layover|"
    r"conference|tour\w*|stay\w* (?:in|at) a hotel|passing through|day out|heading (?:up |down |"
    r"over |back )?to|test[- ]dr\w*|tried out|borrowed|rented|hired a)\b"
)
# A stay that the words after the value make temporary: "in Oslo for the long weekend".
_VISIT_RIGHT = re.compile(
    r"^\s*(?:trip|holiday|vacation|visit|getaway|city break|weekend away)\b|"
    r"^[\s,]*(?:just\s+|only\s+)?(?:for (?:the|a) (?:\w+ )?(?:weekend|week|trip|holiday|"
    r"vacation|visit|conference|few days|night)|on (?:holiday|vacation|a trip|business)|"
    r"to see (?:friends|family))"
)
# "no" followed by a pause or an interjection is an answer ("no, Cardiff", "wait no lol"),
# not a negation of what follows.
_NEGATION = re.compile(
    r"\b(?:not|never|nor|neither|hardly|barely|without|non|none)\b|n't\b|\bcannot\b"
    r"|\bno\b(?!\s*[,.!?;:…—–-])(?!\s+(?:wait|lol|haha|sorry|worries|problem|way|doubt)\b)"
)
_RETRACT_WINDOW = re.compile(
    r"\b(?<!getting )(?<!get )(?<!got )used to\b|\b(?:formerly|previously|former|previous|"
    r"prior|ex-|back when|initially|originally|at first|cancell?ed(?: my)?|terminated|"
    r"closed my|ended my|"
    r"back then|in the past|no longer|not anymore|until recently|grew up|was born|last day at|"
    r"notice at|goodbye|bye|farewell|left|leaving|quit|quitting|resigned|gave up|give up|"
    r"stopped|done with|broke up|split from|instead of|rather than|replacing|replaced|"
    r"in place of|no more|ditched|sold|selling|got rid of|returned(?! to\b)|traded in|fired from|"
    r"laid off (?:from|by)|let go (?:from|by)|made redundant (?:at|from|by)|"
    r"moved (?:away |out )?(?:from|of)|moving (?:away )?from|"
    r"out of|switched (?:away )?from|changed from|transferred from|came from|relocated from|"
    r"turned down|declined|passed on|said no to|walked away from)\b"
)
# A time of life that is over: "we had a greyhound when I was a kid".
_PAST_TIME = re.compile(
    r"\b(?:when (?:i|we) (?:was|were) (?:a |an |still )?(?:kid|child|teen\w*|student|young|"
    r"little|younger|small|at (?:school|uni|university|college))|as (?:a |an )?(?:kid|child|"
    r"teen\w*|student|youngster)|(?<!is )(?<!are )(?<!'s )(?<!'re )growing up|"
    r"in (?:college|high school|uni|university|school)|"
    r"back in (?:the day|college|school|\d{4})|in my (?:twenties|teens|thirties|20s|30s)|"
    r"back when|those were the days|in my (?:old|former|previous|last) (?:job|role|life|place|"
    r"flat|house|team|company)|my (?:old|former|previous|last) (?:job|role|position|employer|"
    r"company|flat|place|house|car))\b"
)
# The value told off as a joke or to be forgotten: "forget what I said about Bobby".
_DISREGARD = re.compile(
    r"\b(?:disregard|ignore|forget|scratch)\b(?! (?:it|to)\b)|"
    r"\b(?:joking|kidding|jk|was a joke|not serious|retract\w*|(?:took|take|takes|taking) "
    r"(?:that|it|this) back)\b"
)
# A slip corrected right after it: "my husband Taro — sorry, Hiro".
_SELF_CORRECTED = re.compile(
    r"^[\s,.;:!()\-–—]*(?:sorry|i mean|i meant|no wait|wait,? no|er+|um+|correction|"
    r"scratch that|actually,? no|oops|my bad)\b"
)
# The value as the subject of its own ending: "Halcyon let me go", "the Utrecht move fell
# through", "Manchester contract ended".
_ENDED_RIGHT = re.compile(
    r"^[\s,]*(?:\w+\s+)?(?:let (?:me|him|her|us) go|"
    r"(?:and (?:i|we) )?(?:broke up|split up|parted ways|went separate ways)|"
    r"fired (?:me|him|her)|laid (?:me|him|her) off|"
    r"dumped (?:me|him|her)|ended|is over|was over|fell through|(?:was|got|is) cancell?ed|"
    r"cancell?ed|(?:was|got|is) called off|called off|didn't work out|did not work out|"
    r"is off|was off|(?:was|were) (?:stolen|sold|given away|rehomed)|"
    r"(?:wasn't|isn't|was not|is not) for (?:me|us)|didn't stick|did not stick|didn't last|"
    r"died|broke down|stopped working|packed up|(?:was|got) (?:written off|totalled|stolen)|"
    r"handed back|given back|(?:was |got )?returned|(?:is|was) (?:sold|discontinued|"
    r"written off)|(?:was|were|got|has been|have been|'s been) (?:archived|deleted|removed|"
    r"invalidated|pulled|scrapped|cancell?ed|called off))\b"
    # Someone of that name leaving: "Colm left :(", "Priya's gone to Dublin".
    r"|^(?:'s|\s+(?:has|have|had|just))?\s*(?:gone|left|moved on)\b(?! (?:me|us|him|her|it|them)\b)"
)
# A past tense right after the value makes it the subject of a past state ("Accenture was
# the old job", "berlin was fun but the winters …").
# The value said to be no problem: "gluten's fine for me", "peanuts are weirdly fine".
# "Sage was such a good boy today": what happened today is no state that is over.
_TODAY = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening)|just now)\b")
_FINE_RIGHT = re.compile(
    r"^(?:'s|\s+(?:is|are))\s+(?:\w+\s+)?(?:fine|ok|okay|no problem|not a problem)\b"
)
_PAST_RIGHT = re.compile(
    r"^[\s,]*(?:was|were|used to)\b(?!\s+(?:hired|offered|promoted|accepted|confirmed))"
)
# Someone else's reply or approach, not the subject's state: "Halcyon interviewed me",
# "Halcyon Robotics is hiring".
_APPROACH_RIGHT = re.compile(
    r"^[\s,]*(?:\w+\s+)?(?:interviewed|rejected|turned down|ghosted|contacted|emailed|"
    r"called|reached out|approached|is hiring|are hiring|was hiring|has (?:an? )?(?:opening|"
    r"vacanc|role)\w*|wants? me|invited me)\b"
)
# A change still ahead, anywhere in the clause: "I start at Halcyon on the 1st of next month",
# "going vegan from January", "picking up the puppy in 3 weeks".
_MONTHS = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_DAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_AHEAD = re.compile(
    rf"\b(?:next (?:week|month|year|spring|summer|autumn|fall|winter|quarter|term|semester|"
    rf"weekend|{_DAYS}|{_MONTHS})|tomorrow|soon|in (?:a|an|one|two|three|four|five|six|a few|"
    rf"a couple of|\d+) (?:days?|weeks?|months?|years?)|later this (?:week|month|year)|"
    rf"this coming|the week after|from (?:next|{_DAYS}|{_MONTHS})\b|of next (?:week|month)|"
    rf"start date|tbd|tbc|upcoming|not yet|yet to)\b"
)
# Progressive or bare forms that, with a month, speak of what is to come: "starting at Airbnb
# in September".
_AHEAD_VERB_MONTH = re.compile(
    # Not after "before", "after" or "since": "before joining Monzo in 2026" is a change made.
    rf"(?<!before )(?<!after )(?<!since )\b(?:starting|moving|joining|going|getting|switching|"
    rf"relocating|picking up|adopting|beginning|start|starts|move|join)\b[^.;]*"
    rf"\b(?:in|on|from) (?:{_MONTHS}|{_DAYS}|\d{{4}})\b"
)
_FOR_A_WHILE = re.compile(
    r"^[^.;]{0,12}\bfor (?:(?:a|an|one|two|three|four|five|a few|a couple of|several|\d+) "
    r"(?:days?|weeks?|months?|years?|while)|years|ages|decades|a long time)\b"
)
# What the value was done with later in the sentence: "had a Saab, sold it last spring".
_OBJECT_PRONOUN = re.compile(r" (?:it|him|her|them)\b")
_DONE_WITH_IT = re.compile(
    r"^[^.;?!]{0,60}?\b(?:sold|got rid of|gave away|returned|cancell?ed|quit|ditched|scrapped|"
    r"traded in|wrote off|crashed|lost|left|deleted|removed|rehomed)\s+(?:it|him|her|them)\b"
)
_UNTIL_RIGHT = re.compile(r"^[^.;]{0,30}?\b(?:until|till|up to|up until)\b")
_HAD = re.compile(r"\b(?<!'ve )(?<!have )(?<!has )(?<!'d )had\b")
_AHEAD_VERB = re.compile(
    r"\b(?:starting|moving|joining|going|getting|switching|relocating|picking up|adopting|"
    r"beginning|start|starts|move|join)\b"
)
_BEEN = re.compile(
    r"\b(?:since|ago|last|already|been|yesterday|today|this morning|finally|did|now)\b"
)
# A name frame: what stands before a place, employer or person when a word is used as a name.
_NAME_FRAME = re.compile(
    r"(?:\b(?:in|at|(?<!had )(?<!have )(?<!has )(?<!need )(?<!needs )(?<!want )(?<!got )"
    r"(?<!going )(?<!used )to|from|near|into|outside|around|for|with|joined|join|joining|"
    r"left|leave|leaving|quit|moved|move|moving|relocated|based|live|lives|living|work|works|working|"
    r"employer|company|city|town|hometown|called|named|name is)|[:=|])\s*$"
)
# What stands before a word used as an adjective or a common noun ("an apple", "really nice").
_COMMON_FRAME = re.compile(
    r"\b(?:a|an|the|some|any|every|each|another|my|your|his|her|our|their|this|that|so|"
    r"really|very|too|pretty|quite|such|more|most|less|how|no|much|many|enough|lots of|"
    r"plenty of|bit of|watch|watching|watched|play|playing|played|eat|eating|ate|drink|"
    r"drinking|drank|cook|cooking|cooked|add|adding|added)\s*$"
)
_PAST_STATE = re.compile(
    r"\b(?<!'ve )(?<!have )(?<!has )(?<!'s )(?:was|were|lived|worked|studied|stayed|spent|"
    r"had been|used to be|played|owned|drove|attended)\b"
    r"(?!\s+(?:hired|offered|accepted|promoted|taken on|diagnosed|told|confirmed|given|"
    r"transferred|moved|just|finally|officially|back|now))"
)
_RIGHT_RETRACT = re.compile(
    r"^\s*no more\b|"  # "vegan no more"; after a pause it is a limit ("£1,200, no more")
    r"^[\s,.;:!()-]*(?:not anymore|not any more|anymore|any more|no longer\b|"
    r"is over|is history|is behind (?:me|us|her|him|them)|days are over|is a thing of the past|"
    r"→|->|=>|⇒|"
    r"(?:feels |felt |seems |was )?(?:like )?(?:ages|years|months|a lifetime|long) ago)"
)
_WRONG = r"(?:wrong|incorrect|a mistake|a typo|not true|untrue|false|out of date)\b"
_CORRECTED = re.compile(rf"^[^.;]{{0,40}}\b(?:was|is|that's|that was) {_WRONG}")
_CORRECTED_NEXT = re.compile(rf"^\W*(?:that|this|it)(?:'s| was| is) (?:\w+ )?{_WRONG}")
_FROM_TO = re.compile(r"\bfrom\s*$")
_TO_RIGHT = re.compile(r"^\s*(?:to|→|->|=>)\b|^\s*(?:→|->|=>)")
_TAG_RETRACT = re.compile(
    r"\((?:outdated|superseded|obsolete|retracted|old|former|formerly|previous|previously|"
    r"stale|ended|expired|past|no longer)\b[^)]*\)|\[(?:outdated|superseded|obsolete|old|"
    r"former|previous|stale|retracted|withdrawn|deleted)\b[^\]]*\]|"
    r"\bstatus\s*[=:]?\s*(?:[a-z]+[_ ])?(?:withdrawn|retracted|deleted|cancell?ed)\b|"
    r"\bno longer true\b|\bsuperseded\b|\bobsolete\b"
    r"|\bstatus\s*[=:]\s*(?:old|inactive|expired|superseded|past|former|sold|ended|closed|"
    r"terminated|lapsed|discontinued|left|quit|returned|cancell?ed)\b|\bcurrent\s*[=:]\s*false\b",
    re.IGNORECASE,
)
# The tags that carry dates (a closed validity interval). Every date form the reader knows has
# a four-digit year, so text without one skips this costlier pattern.
_TAG_RETRACT_DATED = re.compile(
    rf"\bvalid[_ ]?to\s*[=:]\s*(?:{_D})"
    rf"|\bvalid\s+(?:from\s+)?(?:{_D})\s*(?:to|until|till|–|—|-|→|->)\s*(?:{_D})"
    rf"|(?:{_D})\s*(?:→|->|–|—|to|until|till)\s*(?:{_D})|\buntil\s+(?:{_D})|\bended\s+(?:{_D})",
    re.IGNORECASE,
)
_YEAR_DIGITS = re.compile(r"\d{4}")
# A closed span of years before the value: "--taught_at (2014-2025)--> Greyfriars".
_YEAR_SPAN = re.compile(r"\(\s*(?:19|20)\d\d\s*(?:-|–|—|to)\s*(?:19|20)\d\d\s*\)")
# A record whose status says it is not settled: "seat_status: REQUESTED", "status: pending".
_PENDING = re.compile(
    r"\bstatus[\"']?\s*[=:]?\s*[\"']?(?:[a-z]+[_ ])?(?:pending|requested|awaiting|tentative|"
    r"proposed|unconfirmed|planned|draft|on hold)\b",
    re.IGNORECASE,
)
# A closed validity interval written before the value, as graph renderings do:
# "(maria)-[WORKS_AT {valid_from: 2027-01-04, valid_to: 2027-03-01}]->(Kestrel)".
_VALIDITY_CLOSED = re.compile(
    rf"\b(?:valid[_ ]?(?:to|until|till)|expire[sd]?(?:_at|_on)?|ended(?:_at|_on)?|end_date|"
    rf"invalid(?:_at|_from|_since)?|invalidated(?:_at|_on)?)"
    rf"[\"']?\s*[=:]?\s*[\"']?(?:{_D})",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\(\s*(?:may|might|could|possibly|probably|perhaps)\s+(?:be\s+)?(?:outdated|out of date|"
    r"stale|old|out-of-date)\s*\)|\((?:unverified|older|unconfirmed|low confidence)\)"
    # Discourse markers that look like negations or modals but assert: "not gonna lie, …".
    r"|\b(?:(?:i'm |im )?not (?:gonna|going to) lie|ngl|no lie|not gonna pretend|"
    r"i won't lie|i'm not going to pretend|can't lie)\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(
    r";|:\s|\s[-–—]\s|,?\s+but\s|,\s*(?:though|although|whereas|while|so|yet)\s|\s+whereas\s|"
    r",\s+and\s+(?=(?:i|i'm|we|my|now)\b)|\(|\)|\s+and\s+now\s|\s+meanwhile\s"
)
_SENTENCE_END = re.compile(
    r"(?<=[.!?…])[\"')\]]*\s+|\s+(?=/s\b)|(?<=[\U0001F300-\U0001FAFF\u2600-\u27BF])\s+(?=\w)"
)
# Words that may follow a one-word value without making it part of a compound ("vegan now",
# but "kestrel nesting boxes" and "a single page" are other things).
_FUNCTION_WORDS = _word_set(
    "a an the and or but so nor yet for from to at in on of off by with without as than then "
    "is are was were be been being am has have had do does did will would can could may "
    "might must shall should now these those this that today tomorrow yesterday too again "
    "already still since because though although while when where who which whose what "
    "there here it its it's i i'm me my we our you your he she they them their all every "
    "each any some no not never ever always forever anymore lately recently finally "
    "officially honestly really very just only also even full-time part-time please thanks "
    "thank ok okay lol haha yes yeah after before until till about around through "
    "starting effective these days now-a-days nowadays instead either both like made makes "
    "make sent offered hired gave got get said says told asked wants wanted needs needed "
    "seems feels felt looks looked became become becomes started starts joined suits suit "
    "suited works worked fits fit wins won's last next first new old current latest "
    "confirmed noted updated update please, mode style-wise full stop period anyway though "
    "one's everyone's mornings"
)


def strip_hedges(text: str) -> str:
    """``text`` with hedging tags ("(may be outdated)") blanked out, same length."""
    return _HEDGE.sub(lambda m: " " * len(m.group(0)), text)


def split_clauses(text: str) -> list[tuple[int, int, int, int]]:
    """``(sentence_start, sentence_end, clause_start, clause_end)`` for each clause of ``text``."""
    spans: list[tuple[int, int, int, int]] = []
    start = 0
    sentence_bounds = [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    for end in sentence_bounds:
        if end <= start:
            continue
        clause_start = start
        for match in _CLAUSE_BREAK.finditer(text, start, end):
            spans.append((start, end, clause_start, match.start()))
            clause_start = match.end()
        spans.append((start, end, clause_start, end))
        start = end
    return spans


@dataclass(frozen=True)
class MentionContext:
    """One mention inside its clause.

    Attributes:
        left: Clause text before the mention (lower case).
        right: Clause text after it.
        window: ``left`` after the previous candidate mention in the clause.
        sentence_left: Sentence text before the mention.
        sentence: The whole sentence.
        next_sentence: The sentence after it, if any.
        tail: Text after the mention up to the next ``;`` or the sentence end (where a tag
            such as "(outdated)" that belongs to the mention sits).
        speaker: Who says the line (``subject``, ``assistant``, ``other``, ``note``).
        phrase_raw: The mention as written (original case).
        phrase_given: The candidate phrase it matched (as the probe spells it).
        raw_sentence_left: ``sentence_left`` in its original case.
        weak: The phrase is one word of a longer value ("Kestrel" for "Kestrel Aerospace").
        negative_value: The value's own wording negates ("does not drink alcohol").
        line_has_ack: The (assistant) line acknowledges something ("noted", "got it").
        addressed: The sentence names the subject (an assistant talking to them).
        sentence_start: The mention opens its sentence.
        other_name_at: Where, in ``left``, another person named by name acts (−1: nowhere).
        narrated: The line is a note headed by the subject's name ("Gus: renewed his lease"),
            where he/she is the subject.
        in_aside: The mention sits in brackets after another value's mention on its line.
        line_cased: The line has capitals anywhere (so a lower-case name is a common word).
        labelled: The line's content follows a label ("Home town: Reading").
        until_next: The sentence after the mention up to the next value's mention.
        asked: Relation words the question asks about ("partner", "gf", …): a relation that
            is the asked-about slot names the value, not someone else.
    """

    left: str
    right: str
    window: str
    sentence_left: str
    sentence: str
    next_sentence: str
    tail: str
    speaker: str
    phrase_raw: str
    phrase_given: str
    raw_sentence_left: str
    weak: bool
    negative_value: bool
    line_has_ack: bool
    other_name_at: int
    addressed: bool = False
    sentence_start: bool = False
    narrated: bool = False
    in_aside: bool = False
    line_cased: bool = True
    asked: frozenset[str] = frozenset()
    asked_place: bool = False
    labelled: bool = False
    until_next: str = ""


def _last(pattern: re.Pattern[str], text: str) -> int:
    last = -1
    for match in pattern.finditer(text):
        last = match.start()
    return last


_ALNUM = re.compile(r"[^\W_]")
_STRETCH_BREAK = re.compile(r"[,!]\s|\s[-–—]\s")
_CAN_YOU = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|and|also|please|actually),?\s+)*(?:can|could|would|will)\s+you\b"
)
_CLAUSE_PAUSE = re.compile(r"[,;!]|\s[-–—]\s")
_PRESUPPOSED = re.compile(
    r"\b(?:my|our|here in|since i'm|as an?|now that i'm)\s+$"
    r"|\b(?:my|our)\s+\w+\s+(?:in|at|near)\s+(?:[\w-]+,\s+)?$"
)
# "I graduated in Business Administration, any career tips?": a statement, then a question of
# its own after a break. The value's clause is the statement when it opens without a question
# word or an inverted auxiliary and has the subject speaking in the first person.
_OPENS_AS_QUESTION = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|and|also|but|um|hmm|quick question),?\s+)*"
    r"(?:what|where|when|who|whom|whose|which|why|how|do|does|did|is|are|was|were|am|can|could|"
    r"should|would|will|shall|have|has|had|may|might|must|isn't|aren't|wasn't|don't|doesn't|"
    r"didn't|any)\b"
)
_FIRST_PERSON_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b")
_BREAK_BEFORE_QUESTION = re.compile(r"(?:,|;|:|\s[-–—])\s+\S[^,;:]*\?\W*$")


def _stated_then_asked(m: MentionContext) -> bool:
    after = m.sentence[len(m.sentence_left) + len(m.phrase_raw) :]
    return bool(
        _BREAK_BEFORE_QUESTION.search(after)
        and not _OPENS_AS_QUESTION.match(m.sentence_left)
        and _FIRST_PERSON_SUBJECT.search(m.sentence_left)
    )


# Small patterns used inside the rules, compiled once.
_WORD = re.compile(r"[a-z]+")
_COMPARED = re.compile(r"\b(?:than|compared (?:to|with)|versus|vs\.?)\s+$")
_GOING = re.compile(r"\bgoing\s+(?:full\s+|fully\s+)?$")
_STILL_NOW = re.compile(r"\b(?:now|still)\b")
_FILLER = re.compile(r"\b(?:and|but|so|oh|ah|well|lol|ugh|no|yes|yeah)\b|\W")
_PAUSE = re.compile(r"[,;!?]|\s[-–—]\s")
_TOKEN = re.compile(r"[\w']+")
_QUANTIFIER_BEFORE = re.compile(r"\b(?:a|an|every|each|any|some|no|another)\s*$")
_FOLLOWER = re.compile(r" ([a-z][\w'-]*)")
_DEFINITE_BEFORE = re.compile(r"\b(?:the|this|that|these|those|our|their)\s*$")
_LABEL_BEFORE = re.compile(r"[:=|]\s*[\"'(\[]*$")
_BEING_AFTER = re.compile(r"^\s*(?:is|'s|has|was)\b")
_DESCRIBES = re.compile(r"\b(?:is|am|i'm|im|'m|was|as|being|works as|working as)\s*$")


def _agents(
    left: str,
    speaker: str,
    other_name_at: int,
    narrated: bool = False,
    asked: frozenset[str] = frozenset(),
) -> tuple[int, int, int]:
    """Positions of the last first-person, third-party and second-person agent in ``left``."""
    third = other_name_at
    found = list(_THIRD.finditer(left)) if left else []
    for match in found:
        if asked and asked & frozenset(_WORD.findall(match.group(0))):
            continue  # the asked-about relation is the slot ("my gf Alex")
        if _DESCRIBES.search(left, 0, match.start()):
            continue  # "Rebekah is a teacher who lives in …": what the subject is
        third = max(third, match.start())
    masked = left
    for match in found:  # blank the third-party phrases so their words are no agents
        masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end() :]
    first = _last(_FIRST, masked)
    if speaker in ("subject", "other") and not narrated:
        third = max(third, _last(_PRONOUN_THIRD, masked))
    you = _last(_YOU, masked)
    return first, third, you


def frame_of(mention: MentionContext) -> tuple[Frame, str]:
    """The frame of one mention and the cue that decided it."""
    m = mention
    tagged = m.left + m.phrase_raw.lower() + m.tail
    tag = _TAG_RETRACT.search(tagged)
    if tag is None and _YEAR_DIGITS.search(tagged):
        tag = _TAG_RETRACT_DATED.search(tagged)
    if tag is None and _YEAR_DIGITS.search(m.sentence_left + m.tail):
        tag = (
            _VALIDITY_CLOSED.search(m.sentence_left)
            or _VALIDITY_CLOSED.search(m.tail)
            or _YEAR_SPAN.search(m.sentence_left)
        )
    if tag:
        return "retracted", tag.group(0).strip()
    pending = _PENDING.search(tagged) if "status" in tagged else None
    if pending:
        return "hypothetical", pending.group(0).strip()
    if m.speaker == "other":
        return "not_about_subject", "another speaker's line"
    # Most mentions close their clause: the rules that read the words after the value are
    # skipped when there are none (the reader runs on every probe of every cell).
    right = m.right if _ALNUM.search(m.right) else ""
    # Up to the next value only: in "Leeds, York wasn't for us" the ending is York's.
    own_right = right[: len(m.until_next)] if m.until_next else right
    ended = (own_right and _ENDED_RIGHT.search(own_right)) or (
        _ALNUM.search(m.tail) and _SELF_CORRECTED.search(m.tail)
    )
    if ended:
        return "retracted", ended.group(0).strip(" ,.-–—")
    disregard = _last_match(_DISREGARD, m.sentence_left)
    if disregard and not _governs(m.sentence_left[disregard.end() :]):
        disregard = None
    if disregard is None and right:
        disregard = _JOKE_RIGHT.search(right)
    if disregard:
        return "retracted", disregard.group(0)
    if m.in_aside:
        return "aside", "an aside about another value"
    # "… an iguana, then clarified that was a joke": owned as untrue later in the sentence,
    # before any other value ("lives in Abuja (I typed Lagos by mistake)" is about Lagos).
    later = m.until_next
    untrue = _UNTRUE_LATER.search(later) if len(later) > 3 else None
    if untrue:
        return "retracted", untrue.group(0)
    if _COMPARED.search(m.left):
        return "aside", "the other side of a comparison"
    if (
        right
        and m.asked_place
        and _ARTICLE_BEFORE.search(m.left)
        and (follower := _FOLLOWER.match(right))
        and follower.group(1) not in _FUNCTION_WORDS
        and follower.group(1) not in _DWELLERS
        and " " not in m.phrase_given.strip()
    ):
        return "aside", "the place naming a kind of thing (a Milan agency)"
    if right and m.asked_place and _PERSON_ACTS.match(right) and m.phrase_raw[:1].isupper():
        return "aside", "a person of that name"
    if (
        right
        and m.asked_place
        and _PRAISED.match(right)
        and not _FILLER.sub("", m.left[m.left.rfind(",") + 1 :])
    ):
        return "aside", "an opinion of the place"
    role = _ANOTHER_ROLE_RIGHT.search(right) if right else None
    if role and not (m.asked and m.asked & frozenset(_WORD.findall(role.group(0)))):
        return "aside", "named for another role"
    if _is_generic(m):
        return "generic_word", f"{m.phrase_raw!r} used as a common word"
    for text in (m.sentence, m.next_sentence if len(m.next_sentence.split()) <= 4 else ""):
        sarcasm = _SARCASM.search(text)
        if sarcasm and sarcasm.group(0) in _SARCASM_FACES and text is m.sentence:
            # An eye-roll speaks of its own clause: in "my cat's Marmalade (you wrote
            # Margarine 🙄)" the cat's name is sincere.
            clause = m.left + m.phrase_raw.lower() + m.right
            sarcasm = sarcasm if _SARCASM.search(clause) else None
        if sarcasm:
            return "sarcasm", sarcasm.group(0)
    instruction = _INSTRUCTION.search(m.left) or (
        _REQUEST.search(m.sentence_left + m.phrase_raw.lower())
    )
    if not instruction and _STANDING.search(m.sentence) and _CAN_YOU.match(m.sentence):
        instruction = _STANDING.search(m.sentence)  # "Can you … from here on?" asks for a habit
    # A question can still presuppose the subject's own fact: "my parrot keeps plucking its
    # feathers, vet or diet?", "a good climbing gym here in Denver?".
    presupposed = _PRESUPPOSED.search(m.left)
    if not instruction and not presupposed:
        if (
            m.sentence.rstrip(" \"')]!.🙂😊").endswith("?")
            and not _CAUSAL.search(m.left)
            and not _stated_then_asked(m)
        ):
            return "question", "asked, not stated"
        asked = _QUESTION_WORDS.search(m.left)
        if asked:
            return "question", asked.group(0)
    denial = (
        _DENIAL.search(m.left)
        if ("n't" in m.left or "not" in m.left or "never" in m.left)
        else None
    )
    if denial and not m.negative_value:
        return "negated", denial.group(0)
    quoted = m.sentence_left.count('"') % 2 == 1 and _QUOTED_WORK.search(m.sentence_left)
    if quoted:
        return "aside", f"words quoted from elsewhere ({quoted.group(0)})"
    first, third, you = _agents(m.left, m.speaker, m.other_name_at, m.narrated, m.asked)
    agent = max(first, third, you if m.speaker in ("assistant", "note") else -1)
    after_agent = m.left[agent:] if agent >= 0 else m.left
    window = m.window if len(m.window) < len(after_agent) else after_agent
    if not instruction:
        strong = _last_match(_STRONG_HYPO, m.left)
        # A condition ends at its comma: "if I lived somewhere warmer I'd be happier lol,
        # helsinki in feb is brutal" states Helsinki; the consequent of "If we moved,
        # Edinburgh would be …" is caught by its modal.
        if (
            strong
            and strong.group(0) in _CONDITIONS
            and _CLAUSE_PAUSE.search(m.left[strong.end() :])
        ):
            strong = None
        if strong is None and (
            ":" in m.sentence_left or "=" in m.sentence_left or " - " in m.sentence_left
        ):
            strong = _GOAL_LABEL.search(m.sentence_left)
        if strong:
            return "hypothetical", strong.group(0)
        # A modal reaches the value only within its stretch of the clause: in "if i lived
        # somewhere warmer i'd be happier lol, helsinki in feb is brutal" it stops at the comma.
        stretch = _STRETCH_BREAK.split(after_agent)[-1]
        weak = _WEAK_HYPO.search(stretch[len(_agent_token(stretch)) :])
        modal_agent = stretch == after_agent and _MODAL_AGENT.match(_agent_token(after_agent))
        # An assistant acknowledging a constraint speaks of its own next steps ("Got it - I'll
        # avoid shellfish"): its "I'll" does not make the subject's value hypothetical.
        own_step = m.speaker == "assistant" and m.line_has_ack and first >= 0
        if weak and _STAYING.search(stretch):
            weak = None  # "intends to stay at Fairmont": where they are and mean to remain
        if (weak or (agent >= 0 and modal_agent)) and not own_step:
            return "hypothetical", weak.group(0) if weak else _agent_token(after_agent)
        if right and _RIGHT_MODAL.search(right):
            return "hypothetical", m.right.split()[0]
        when = _WHEN_FUTURE.search(m.left)
        if when:
            return "hypothetical", when.group(0)
        if right and _PLANNED.search(after_agent) and _FUTURE_TIME.search(right):
            return "hypothetical", "a change still ahead"
        # The time may sit anywhere in the clause ("The wedding is next June, we're getting
        # married …"); what is already so is said next to the value ("back in Madrid now,
        # work tomorrow").
        clause = m.left + " " + m.right
        # A verb of change before the value with a month ahead ("starting at Airbnb in
        # September"); after the value the verb is the value's own doing ("my daughter Layla
        # starts school in September").
        ahead = _AHEAD.search(clause) or (
            _AHEAD_VERB_MONTH.search(m.left + m.phrase_raw.lower() + m.right)
            if _AHEAD_VERB.search(m.left)
            else None
        )
        if ahead and not _BEEN.search(_comma_part(m.left, m.right)):
            return "hypothetical", f"a change still ahead ({ahead.group(0)})"
        # "going pescatarian after the holidays": a change announced, not yet made.
        going = _GOING.search(m.left)
        if going and not _BEEN.search(clause):
            return "hypothetical", "going (a change ahead)"
    visit = (
        _VISIT.search(window)
        or (right and _VISIT_RIGHT.search(right))
        or (_TRAVEL_WORDS.search(m.sentence_left) and _TRAVELS_TO.search(m.sentence_left))
    )
    if visit:
        return "visit", visit.group(0).strip()
    if not m.negative_value:
        scope = window[len(_agent_token(window)) :] if window else ""
        negation = _NEGATION.search(scope) if scope else None
        if negation and len(_NEGATION.findall(m.left[m.left.rfind(",") + 1 :])) % 2 == 0:
            negation = None  # "it's not like I don't still play the oboe": two cancel out
        if negation:
            return "negated", negation.group(0)
    retraction = _last_match(_RETRACT_WINDOW, window)
    # A retraction verb governs the words right after it, not a value past a comma
    # ("I left in Feb, Halcyon Robotics now").
    if retraction and _governs(window[retraction.end() :]):
        return "retracted", retraction.group(0)
    if right and _FROM_TO.search(window) and _TO_RIGHT.search(right):
        return "retracted", "from … to"
    if (
        (right and _CORRECTED.search(right))
        or _CORRECTED.search(m.tail)
        or (m.next_sentence and _CORRECTED_NEXT.search(m.next_sentence))
    ):
        return "retracted", "corrected"
    if not m.negative_value and _RIGHT_RETRACT.search(m.right):
        return "retracted", m.right.strip()[:20]
    past = _PAST_STATE.search(window)
    # "lived in Nice for 4 yrs now": a state that goes on is current.
    # Only up to the next value: "worked at HSBC before joining Monzo, where he still works".
    if past and right and _STILL_NOW.search(right[: len(m.until_next)]):
        past = None
    if past:
        return "retracted", f"past state ({past.group(0)})"
    # "I had a Civic, then a Model 3 for a year": held for a stretch that is over.
    if right and _FOR_A_WHILE.search(right) and _HAD.search(m.sentence_left):
        return "retracted", "past state (had … for a while)"
    done = _DONE_WITH_IT.search(right) if right and _OBJECT_PRONOUN.search(right) else None
    if done:
        return "retracted", done.group(0).strip()[-24:]
    # "I had a Nokia 3310 until 2015": held up to a time that is named, so over.
    if right and "til" in right and _UNTIL_RIGHT.search(right) and _HAD.search(m.sentence_left):
        return "retracted", "past state (had … until)"
    past_time = _PAST_TIME.search(m.left + " " + m.right)
    if past_time:
        return "retracted", f"a time that is over ({past_time.group(0)})"
    opens = not _FILLER.sub("", m.left[m.left.rfind(",") + 1 :])
    if opens and right and _PAST_RIGHT.search(right) and not _TODAY.search(right):
        return "retracted", "past state (value was)"
    if not m.negative_value and right and _FINE_RIGHT.search(right):
        return "negated", "no problem for them"
    approach = _APPROACH_RIGHT.search(right) if right else None
    if approach:
        return "hypothetical", approach.group(0).strip(" ,")
    if _AT_MINE.search(m.left):
        return "asserted", "the subject's own place"
    partial = _PARTIAL_LEFT.search(m.left) or (right and _PARTIAL_RIGHT.search(right))
    if partial:
        return "vague", f"held in part ({partial.group(0).strip()})"
    if m.speaker == "assistant":
        suggested = _SUGGESTION.search(m.sentence_left)
        if suggested and not _YOUR_OWN.search(m.sentence_left):
            return "not_about_subject", f"the assistant's suggestion ({suggested.group(0)})"
        if (
            (you >= 0 and you >= first and you >= third)
            or (first < 0 and third < 0 and (_YOU.search(m.sentence_left) or m.addressed))
            or (right and _YOU_RIGHT.search(right))
        ):
            return "asserted", "assistant restates the subject's statement"
        if third < 0 and m.line_has_ack:
            return "asserted", "assistant acknowledges it"
        return "not_about_subject", "the assistant's own words"
    if (
        third > first
        or _FOR_OTHER.search(m.right)
        or (right and "'" in right and _BELONGS_RIGHT.match(right))
    ):
        return "third_party", "someone else's fact"
    return "asserted", "stated as current"


_ARTICLE_BEFORE = re.compile(r"\b(?:a|an)\s+$")
# "a Leeds resident" is someone who lives there.
_DWELLERS = _word_set(
    "resident residents local locals native natives girl boy lad lass guy gal man woman person "
    "citizen dweller born based homeowner renter tenant household family"
)
# A name doing what people do: "Jordan came over for pizza".
_PERSON_ACTS = re.compile(
    r"^\s+(?:came|comes|said|says|told|texted|called|rang|asked|visited|stayed|invited|brought|"
    r"laughed|cried|replied|messaged|dropped by|popped round|came round)\b"
)
# Where someone travels to, said a few words before: "travels often, mostly to Hamburg".
_TRAVEL_WORDS = re.compile(r"trav|fl[ei]|trip|commut")
_TRAVELS_TO = re.compile(
    r"\b(?:travels?|travell?ed|travell?ing|flies|flew|trips?|commutes?)\b[^.;]{0,40}"
    r"\b(?:to|in)\s+$"
)
# A place judged, not lived in: "Norwich is lovely", "Lisbon's gorgeous in spring".
_PRAISED = re.compile(
    r"^(?:'s|\s+(?:is|was|looks|seems|sounds))\s+(?:so\s+|really\s+|very\s+|just\s+|"
    r"absolutely\s+|super\s+)?(?:lovely|nice|great|beautiful|gorgeous|stunning|amazing|"
    r"awesome|pretty|charming|fun|cool|awful|terrible|expensive|pricey|overrated|underrated|"
    r"boring|fab|fabulous|magical|wonderful|incredible|dreamy|grim|miserable|"
    r"heaving|packed)\b"
)
# The assistant proposing something, not restating the subject: "You could try the Flexispot".
_SUGGESTION = re.compile(
    r"\b(?:you (?:could|might|may) (?:try|like|enjoy|want|consider|check)|(?:i'd |i would )?"
    r"(?:recommend|suggest)\w*|how about|what about|why not|worth (?:trying|a look|checking)|"
    r"check out|you should (?:try|consider|look)|consider (?:trying|getting))\b"
)
_YOUR_OWN = re.compile(r"\b(?:since|because|as|now that|given that) you(?:'re| are| have|'ve)\b")
_YOU_RIGHT = re.compile(
    r"^[\s,]*(?:(?:is|are|was) )?(?:where |what |which |that |who )?you\b"
    r"|^[^.;?]*\b(?:since|because|as|now that) you\b"
)
# The value named for another role: "Bristol is where I work", "Taro's my brother".
_ANOTHER_ROLE_RIGHT = re.compile(
    r"^(?:'s|\s+is)\s+(?:just\s+)?(?:where|what|who|my|his|her|our|their)\b"
    r"(?![^.;,]*\b(?:now|i am|i'm|i live|home)\b)([^.;,]*)"
)
# Told off as untrue later in the sentence: "… an iguana, then clarified that was a joke".
_UNTRUE_LATER = re.compile(
    r"\b(?:a joke|joking|kidding|jk|not true|made (?:it|that) up|a prank|april fools?'?|"
    r"by mistake|a typo|mistyped|in error|(?:then|later) retracted|retracted (?:it|that)|"
    r"took (?:it|that) back|withdrew (?:it|that)|(?:then|later) corrected (?:himself|herself|"
    r"themselves|myself|that|it))\b"
)
_JOKE_RIGHT = re.compile(r"^[\s,.!]*(?:lol |haha |lmao )?(?:jk|just kidding|kidding|joking)\b")
# A value held only in part: "mostly vegan", "plant-based at home mostly", "vegan-ish".
_PARTIAL_LEFT = re.compile(
    r"\b(?:mostly|mainly|largely|almost|nearly|partly|semi|kind of|sort of|kinda|sorta|"
    r"more or less|trying to be|try to be|flexi\w*)\s+(?:\w+\s+)?$"
)
_PARTIAL_RIGHT = re.compile(
    r"^(?:-ish|ish)\b|^[^.;]{0,25}\b(?:mostly|mainly|most of the time|sometimes|"
    r"on weekdays|on weekends|when i can|ish)\s*(?:[,.;!)]|$)"
    r"|^\W{0,3}(?:except|apart from|other than|but for|bar)\b"
)


def _comma_part(left: str, right: str) -> str:
    """The stretch of a clause around a mention between the commas on either side of it."""
    return left[left.rfind(",") + 1 :] + " " + right.split(",")[0]


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    last = None
    for match in pattern.finditer(text):
        last = match
    return last


def _governs(gap: str) -> bool:
    """Whether a cue ending before ``gap`` still governs the value after it."""
    return not _PAUSE.search(gap) and len(gap.split()) <= 5


def _agent_token(text: str) -> str:
    """The agent word ``text`` starts with (empty when it does not start with one)."""
    match = _TOKEN.match(text)
    if match and (_FIRST.fullmatch(match.group(0)) or _YOU.fullmatch(match.group(0))):
        return match.group(0)
    return ""


def _is_generic(m: MentionContext) -> bool:
    given = m.phrase_given
    if " " in given.strip() or not given or any(c.isdigit() for c in given):
        return False  # an amount or a date is never a common word
    raw = m.phrase_raw
    if given[:1].isupper() and not m.weak and not any(c.isdigit() for c in given):
        return _common_use(m)
    if m.weak and _QUANTIFIER_BEFORE.search(m.left):
        return True  # "a kestrel", "a window": a shortened name turned common noun
    if given[:1].isupper() and raw.islower() and any(c.isupper() for c in m.raw_sentence_left):
        return True  # "Kestrel" the company vs "a kestrel" the bird, in a cased sentence
    follower = _FOLLOWER.match(m.right)
    if follower is None or follower.group(1) in _FUNCTION_WORDS:
        return False
    # "kestrel nesting boxes": a short alias run into a common noun. Capitals in mid-sentence
    # mark a proper noun ("first week at Leeds done"), so only a lower-case mention or one
    # that opens its sentence can be the common word.
    # After a definite determiner a one-word value names a kind of thing ("the Go services",
    # "the Lisbon office"), not the value itself.
    if _DEFINITE_BEFORE.search(m.left):
        return True
    return m.weak and (raw.islower() or m.sentence_start)


def _common_use(m: MentionContext) -> bool:
    """Whether a one-word name ("Reading", "Nice", "Apple") is used as the common word.

    A name stands after a name frame ("moved to reading", "works at apple", "city: Nice") or is
    written capitalised mid-sentence. Otherwise case decides where the text is cased (a
    lower-case "nice" in a cased line is the adjective), and where it is not (chat typed in
    lower case, a sentence's first word) the word counts as a name unless it is also an
    everyday English word (:data:`COMMON_WORD_NAMES`) with no verb of being after it.
    """
    left = m.left.rstrip(" \"'*")
    if _NAME_FRAME.search(left) or _LABEL_BEFORE.search(m.sentence_left):
        return False
    if m.labelled and not m.sentence_left.strip(" \"'*"):
        return False  # the whole value of a label
    raw = m.phrase_raw
    if raw.islower() and len(raw) == len(m.phrase_given) + 1 and raw.endswith("s"):
        return True  # a name in the plural and lower case is a thing: "a pair of jordans"
    capital_inside = raw[:1].isupper() and not m.sentence_start and bool(left)
    if capital_inside and not raw.isupper():
        return False
    if raw.islower() and m.line_cased:
        return True
    common = m.phrase_given.lower() in COMMON_WORD_NAMES
    if _COMMON_FRAME.search(left) and (common or raw.islower()):
        return True
    if not common:
        return False
    return not _BEING_AFTER.match(m.right)


# Names that are also everyday English words: a careful reader knows "reading a lot" is not
# the town and "an apple" is not the company. Kept to words common in ordinary speech.
COMMON_WORD_NAMES = _word_set(
    "reading nice bath apple turkey target orange amazon jersey china chile mobile sandwich "
    "split hull wells sale deal derby buffalo phoenix independence shell gap next boots oracle "
    "square stripe snap zoom slack notion meta visa coach guess sage unity compass ring nest "
    "dove tide bill will mark rose grace hope joy faith jack may june april august frank sue "
    "pat bob rob art dawn summer autumn iris ivy daisy holly lily ruby pearl amber violet sunny "
    "robin wren sky river chase hunter mason cook baker page fisher miller rocket lime bumble "
    "booking discord signal ally chime mercury delta spirit frontier united virgin"
)
