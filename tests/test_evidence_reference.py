"""How a reference manual is written, and what the offline answer quotes because of it (skills.sentences,
skills.evidence): a command named `.` inside a sentence, a builtin's name line, its synopsis and its definition.
Small synthetic text shaped like a converted GNU manual."""
from __future__ import annotations

from lambdarag.domains import profile_named
from lambdarag.skills.evidence import candidates
from lambdarag.skills.sentences import split_sentences
from lambdarag.skills.store.records import Hit

GENERIC = profile_named("generic")


def units(text: str) -> list[str]:
    return [c.text for c in candidates((Hit(chunk_id="d.md#0", text=text, source="d.md"),), GENERIC)]


def test_a_command_named_by_a_full_stop_ends_no_sentence():
    """A full stop standing as a word before a lower-case one (the `.` command: the call to . keeps…) is a name,
    never a sentence's end: a sentence's own full stop follows its last word, or, left apart by a converter, opens
    no lower-case word."""
    text = ("If the option is set, the call to . keeps the trap; if it is not, . unsets the trap while it runs. "
            "A script read with . or source returns its last status.")
    assert split_sentences(text) == [
        "If the option is set, the call to . keeps the trap; if it is not, . unsets the trap while it runs.",
        "A script read with . or source returns its last status."]
    assert split_sentences(". filename [arguments] Read and execute commands from filename.") == [
        ". filename [arguments] Read and execute commands from filename."]
    # a converter may leave a space before a sentence's own full stop: before a capital it still ends one
    assert split_sentences("Look for the getty calls . For more information, read the manual.") == [
        "Look for the getty calls .", "For more information, read the manual."]


MANUAL = """# Job Control Builtins
bg[ ¶](jobs.md)
```
bg [jobspec …]
```
Resume each suspended job jobspec in the background. If jobspec is not supplied, the current job is used.
fg[ ¶](jobs.md)
```
fg [jobspec]
```
Resume the job jobspec in the foreground and make it the current job. The return status is that of the command.
"""


def test_a_builtins_synopsis_names_the_first_sentence_of_its_definition():
    """A converted definition list writes a builtin's name, its synopsis in a code block, then its definition: the
    definition's first sentence has lost what it defines (Resume the job jobspec in the foreground…), so it is one
    unit with the synopsis above it, which opens with the name; the other sentences stand apart."""
    assert units(MANUAL) == [
        "bg [jobspec …] Resume each suspended job jobspec in the background.",
        "If jobspec is not supplied, the current job is used.",
        "fg [jobspec] Resume the job jobspec in the foreground and make it the current job.",
        "The return status is that of the command."]


def test_a_code_block_under_a_line_it_does_not_name_is_an_example_not_a_synopsis():
    """A code block that does not open with the name above it is an example: the paragraph after it is its own."""
    text = "umask[ ¶](b.md)\n```\nls -l /etc\n```\nThis shows the mode of every file in the directory.\n"
    assert units(text) == ["This shows the mode of every file in the directory."]


def test_a_sentence_a_one_line_code_block_ends_is_quoted_with_it():
    """A converted manual ends a sentence inside a code block (`…close the device by issuing the command` above
    `> dev.off()`): alone the sentence says nothing and was quoted with a full stop after "command"; with its one
    line of code (the prompt aside) it is whole. A longer block is an example, and a sentence ending on its own
    full stop or colon is no part of it. A command line stays a unit of its own (an answer to how to do it)."""
    text = ("When you have finished with a plot, close the device by issuing the command\n```\n> dev.off()\n```\n"
            "This makes sure the file is complete.\nTo list the packages loaded, use\n```\n$ Rscript -e 'search()'\n"
            "```\nThe output changes after each call. The following lines draw two plots\n```\nplot(x)\nplot(y)\n```\n"
            "Save the workspace with:\n```\nsave.image()\n```\n")
    assert units(text) == [
        "When you have finished with a plot, close the device by issuing the command dev.off()",
        "This makes sure the file is complete.",
        "To list the packages loaded, use Rscript -e 'search()'", "$ Rscript -e 'search()'",
        "The output changes after each call.", "The following lines draw two plots",
        "Save the workspace with:"]
