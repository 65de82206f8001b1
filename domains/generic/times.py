"""The shape of a time question on a book with no versions, English and Chinese: events in their order.

A time question need not name a release or a date. It asks what follows an event (what happens to X when I restart;
按 Esc 会怎样; at the end of a session), which of two steps or things comes first (A first or B first; what runs
first, A or B; 先 A 还是先 B; 满了以后先删哪个; 哪个先), or when an event occurs, whether a thing changes later, what
holds before it happens (when exactly does X fire; does the row update later; 还没读入…的时候). Each of `SHAPES` is one of these three in both languages; they are the
generic classifier's last time rule, after the relation, survey and comparison cues (which file decides whether A
or B comes first is a relation), and the asker's own when (when do I need …) is none of them.
"""
from __future__ import annotations

_ASKER = r"(?:I|you|we|one|it)"
"""The subject that makes a when-question the asker's (when do I need …): a how-to's condition, not an event's time."""

SHAPES: tuple[str, ...] = (
    # what follows an event: what happens to X when I restart, 断网了会怎样, 会发生什么
    r"\bwhat (?:happens|will happen|would happen)\b[^?]{0,60}?\b(?:when|whenever|if|after|once|while|before|during"
    r"|at the end of)\b"
    r"|(?:会|将)(?:怎样|怎么样|如何)(?:[？?]|呢)|会发生什么|会出现什么",
    # which comes first: A first or B first, before or after, what runs first, A or B, which message is dropped first,
    # 先 A 还是先 B, 先删哪个, 哪个先
    # (not what must be done first: 需要先启动哪些服务 is a relation)
    r"\bfirst\s+or\s+[^?]{1,50}?\bfirst\b|\b(?:before|after)\s+or\s+(?:before|after)\b"
    r"|^(?:which|what)\b[^?,]{0,40}?\bfirst\b[^?]{0,60}?,\s*[^?,]{1,50}?\bor\b[^?,]{1,50}\?$|哪(?:个|一个|样)先"
    rf"|^(?:[^?]{{0,80}}?,\s*)?(?:which|what)\b(?![^?]*\b{_ASKER}\b)[^?,]{{1,60}}?\b(?:first|last|next)\s*\?$"
    r"|先[^，。？?]{1,20}?还是先|(?<!要)(?<!得)(?<!须)先[\u4e00-\u9fff]{1,3}?哪(?:个|一|些|种)",
    # when an event occurs, whether a thing changes later, what holds before it: when exactly does X fire (also after
    # the clause that sets the scene: I postponed it — when does X …), does the row update later, 还没读入…的时候,
    # 以后还会再变吗
    rf"(?:^|[—–:;]\s*|\s-\s+)when\s+(?:exactly\s+)?(?:does|do|are)\s+(?!{_ASKER}\b)"
    r"|\b(?:does|do|will|would|is|are)\b[^?]{1,60}?\b(?:later|afterwards|eventually|later on)\s*\?$"
    r"|还(?:没|未)有?[^，。？?]{1,20}?(?:的时候|之前|以前)|(?:以后|之后)[^。？?]{0,20}?还会再?[\u4e00-\u9fff]{1,4}?(?:吗|么)",
)
"""The shapes of a time question about events (see the module's docstring), one per kind of question, both languages."""
