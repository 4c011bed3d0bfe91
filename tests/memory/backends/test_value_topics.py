from __future__ import annotations

from drift_pipeline.memory.backends._value_topics import value_topics


def test_a_value_names_the_kind_of_preference_it_belongs_to() -> None:
    assert "layout" in value_topics("I enjoy bullet points far more.").split()
    assert "contact" in value_topics("Honestly, just text me instead.").split()
    assert "units" in value_topics("Give distances in kilometres, please.").split()
    # Several kinds in one sentence are all named, in the table's order.
    both = value_topics("Email me a table of it.").split()
    assert "layout" in both and "contact" in both


def test_values_are_whole_words_and_ambiguous_words_alone_name_no_kind() -> None:
    assert value_topics("") == ""
    assert value_topics("The kilometrestone was unveiled.") == ""  # no whole word
    # "text" and "call" alone mean too many things to name a way of being reached.
    assert "contact" not in value_topics("Read the text and call it done.").split()
