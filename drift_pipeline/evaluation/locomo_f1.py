"""LoCoMo's own answer scorer: normalised, Porter-stemmed token F1 with its per-category rules.

Written from the published definition of LoCoMo's evaluation (Maharana et al., ACL 2024), so
that a replay's figures under an LLM reader can be set beside published LoCoMo numbers:

- **Normalisation**: commas removed, lower case, punctuation removed, the articles *a*, *an*,
  *the* removed, whitespace collapsed; then every token is Porter-stemmed (NLTK's
  ``PorterStemmer``, the stemmer LoCoMo's scoring uses).
- **Token F1**: the harmonic mean of precision and recall of the shared stemmed tokens (a
  multiset intersection); 0 when nothing is shared.
- **Multi-hop** (category 1): the gold answer and the prediction are split on commas; the score
  is the mean over gold parts of the best F1 against any predicted part.
- **Open-domain** (category 3): only the gold text before ``;`` counts (the rest is rationale).
- **Temporal and single-hop** (categories 2 and 4): token F1 against the whole gold answer.
- **Adversarial** (category 5): 1 when the prediction says the information is not mentioned or
  not available, else 0.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nltk.stem.porter import PorterStemmer

__all__ = [
    "CATEGORY_OF_SUBTYPE",
    "locomo_f1",
    "multi_answer_f1",
    "normalise_answer",
    "token_f1",
]

CATEGORY_OF_SUBTYPE: Final = {
    "multi_hop": 1,
    "temporal": 2,
    "open_domain": 3,
    "single_hop": 4,
    "adversarial": 5,
}
"""LoCoMo's category id of each probe subtype the LoCoMo importer gives."""

_REFUSALS: Final = ("no information available", "not mentioned")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


@cache
def _stemmer() -> PorterStemmer:
    # Imported on first use: NLTK takes about a second to import, and only this scorer needs it.
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def normalise_answer(text: str) -> str:
    """Commas out, lower case, punctuation and articles out, whitespace collapsed."""
    text = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    stem = _stemmer().stem
    return [stem(word) for word in normalise_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of the stemmed, normalised prediction against the gold answer."""
    predicted, expected = _tokens(prediction), _tokens(gold)
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Mean over the gold's comma-separated parts of the best F1 against a predicted part."""
    predicted = [part.strip() for part in prediction.split(",")]
    expected = [part.strip() for part in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in expected) / len(expected)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's score of one answer to a question of ``category`` (1-5), in [0, 1].

    Raises:
        ValueError: ``category`` is not 1-5.
    """
    if category == 1:
        return multi_answer_f1(prediction, gold)
    if category in (2, 4):
        return token_f1(prediction, gold)
    if category == 3:
        return token_f1(prediction, gold.split(";")[0].strip())
    if category == 5:
        said = prediction.lower()
        return float(any(refusal in said for refusal in _REFUSALS))
    raise ValueError(f"LoCoMo category {category!r} is not one of 1-5")
