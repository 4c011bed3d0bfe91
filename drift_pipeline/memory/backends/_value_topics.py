"""What everyday preference a value belongs to, from general knowledge of English.

People name a preference by its value ("bullet points suit me better", "text me instead") and
ask about it by its kind ("how do they like information laid out?", "which contact channel?").
No word is shared, so lexical matching alone cannot connect the two. This table says which
kind of preference an ordinary value belongs to: that bullet points and prose are ways to lay
information out, that email and texts are ways to be reached, that miles are a unit. A memory
adds the kind's words to the index of a sentence naming such a value.

The table is written from ordinary usage, wider than any one conversation needs: each row names
a kind of preference people commonly state to an assistant, with the words a question about it
would use and the values an answer could name. Nothing here comes from any scenario.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["value_topics"]

# (words a question about the kind uses, values that belong to it). Values are matched as whole
# words, case ignored; a value too ambiguous alone ("call", "text", "post") is listed only in
# the forms that carry the meaning ("phone calls", "text messages").
_KINDS: tuple[tuple[str, str], ...] = (
    (
        "format formatting layout laid structure structured presentation presented",
        r"bullet points?|bullets|bulleted|bullet lists?|numbered lists?|numbered steps|lists|"
        r"checklists?|prose|flowing text|paragraphs?|full sentences|tables?|headings?|headers|"
        r"subheadings?|outlines?|step[- ]by[- ]step|diagrams?|charts?|graphs|slides|markdown|"
        r"plain text|walls? of text|tl;?dr|one[- ]liners?|q&a|summaries up top|summary up top",
    ),
    (
        "length long short detail detailed depth verbosity brevity answers replies responses",
        r"brief|briefly|brevity|short answers|short replies|short responses|concise|succinct|"
        r"terse|to the point|detailed|in detail|in[- ]depth|thorough|comprehensive|exhaustive|"
        r"long answers|long replies|long responses|lengthy|elaborate|extensive|deep dives?|"
        r"bite[- ]sized|high[- ]level|nitty[- ]gritty|short and sweet|long[- ]form|short[- ]form",
    ),
    (
        "contact channel channels reach reached communication communicate touch messaging",
        r"e-?mails?|emailing|phone|phones|phone calls?|calls|calling|ring me|give me a ring|"
        r"text messages?|texts|texting|text me|sms|messaging|whatsapp|telegram|"
        r"imessage|slack|microsoft teams|zoom|video calls?|video chats?|facetime|voice notes?|"
        r"voicemails?|dms?|direct messages?|letters|in person|face[- ]to[- ]face|by post|by mail",
    ),
    (
        "units unit measurement measurements measure measures system",
        r"metric|imperial|kilometres?|kilometers?|km|miles|mph|kilograms?|kilos?|kg|pounds|lbs|"
        r"grams?|ounces?|oz|celsius|centigrade|fahrenheit|metres?|meters?|feet|"
        r"inches|inch|centimetres?|centimeters?|cm|millimetres?|litres?|liters?|gallons?|pints?|"
        r"cups|us customary",
    ),
    (
        "time times timing schedule scheduling slot slots hour hours",
        r"mornings?|afternoons?|evenings?|nights?|early|late|lunchtime|midday|noon|after work|"
        r"before work|first thing|end of the day|weekends?|weekdays?|overnight|a\.m\.|p\.m\.|"
        r"daytime|night[- ]time",
    ),
    (
        "tone register formality style voice manner",
        r"formal|informal|casual|casually|friendly|professional|warm|blunt|direct|"
        r"straightforward|playful|humou?rous|serious|polite|relaxed|gentle|upbeat|chatty|"
        r"businesslike|diplomatic|no-nonsense",
    ),
    (
        "language languages tongue spoken",
        r"english|british english|american english|spanish|french|german|italian|portuguese|"
        r"dutch|japanese|chinese|mandarin|cantonese|korean|arabic|hindi|urdu|bengali|russian|"
        r"polish|ukrainian|swedish|norwegian|danish|finnish|icelandic|greek|turkish|hebrew|"
        r"swahili|yoruba|tagalog|vietnamese|thai|indonesian|malay|czech|hungarian|romanian|"
        r"welsh|irish|catalan|basque",
    ),
    (
        "diet dietary food foods eat eating meals cuisine",
        r"vegetarian|vegan|pescatarian|gluten[- ]free|dairy[- ]free|lactose[- ]free|nut[- ]free|"
        r"halal|kosher|keto|paleo|low[- ]carb|low[- ]fat|low[- ]sugar|plant[- ]based|meat|"
        r"seafood|spicy|mild|raw food|whole foods?|organic",
    ),
    (
        "drink drinks beverage beverages",
        r"coffee|tea|espresso|latte|cappuccino|decaf|herbal tea|green tea|black tea|juice|"
        r"sparkling water|still water|soda|wine|beer|cider|smoothies?|hot chocolate",
    ),
    (
        "transport travel travelling traveling commute commuting getting around",
        r"trains?|rail|planes?|flying|flights?|cars?|driving|buses|bus|coach|bikes?|cycling|"
        r"bicycles?|walking|on foot|ferry|ferries|trams?|metro|subway|underground|taxis?|"
        r"rideshare|uber|scooters?|motorbikes?|carpool\w*",
    ),
    (
        "seat seats seating",
        r"window seats?|aisle seats?|aisle|front row|back row|exit row|middle seat",
    ),
    (
        "music genre genres listen listening",
        r"jazz|rock|classical|pop|hip[- ]hop|rap|folk|country music|electronic|techno|house music|"
        r"blues|metal|indie|opera|soul|reggae|punk|r&b|ambient|lo-fi|k-pop",
    ),
    (
        "exercise exercising workout workouts fitness sport sports training",
        r"running|jogging|yoga|pilates|swimming|gym|weights|weightlifting|lifting|cycling|"
        r"climbing|bouldering|hiking|rowing|boxing|dancing|tennis|football|soccer|basketball|"
        r"crossfit|spinning|martial arts|walking",
    ),
    (
        "payment pay paying",
        r"cash|credit cards?|debit cards?|contactless|bank transfers?|paypal|apple pay|"
        r"google pay|invoices?|direct debit|cheques?|checks",
    ),
    (
        "accommodation stay staying lodging",
        r"hotels?|airbnb|hostels?|camping|b&b|bed and breakfast|guesthouses?|"
        r"holiday rentals?|vacation rentals?|self-catering",
    ),
    (
        "file files document documents attachment attachments",
        r"pdfs?|word documents?|docx|google docs|spreadsheets?|excel|csv|powerpoint|"
        r"plain text files?",
    ),
    (
        "programming code coding language languages",
        r"python|javascript|typescript|rust|golang|java|kotlin|swift|c\+\+|c#|ruby|php|"
        r"scala|haskell|julia|sql|bash",
    ),
    (
        "reminder reminders notification notifications alert alerts",
        r"push notifications?|calendar invites?|alarms?|reminders? by email|sticky notes?|"
        r"daily digests?|weekly digests?",
    ),
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"(?<![\w&+#-])(?:{values})(?![\w&+#-])", re.IGNORECASE), words)
    for words, values in _KINDS
)


@lru_cache(maxsize=4096)  # the same messages come back across sessions
def value_topics(text: str) -> str:
    """The words of every kind of preference a value named in ``text`` belongs to.

    ``"I enjoy bullet points far more"`` → ``"format formatting layout …"``; ``""`` when the
    text names no value of a known kind.
    """
    return " ".join(words for pattern, words in _PATTERNS if pattern.search(text))
