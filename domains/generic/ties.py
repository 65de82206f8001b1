"""The shape of a relation question in any field, English and Chinese: two ends tied by a verb, one of them asked for.

A relation question asks how two things are tied: one controls, decides, configures, overrides, depends on, is part
of or is handed to the other. Its shape shows that without the book's wording: an interrogative stands for one end
(which file … reads X; what does X depend on; 由哪个…控制), or a yes-or-no asks whether the tie holds (does X change
Y; can X stop Y from …; will f() overwrite Y; does using X put Y on Z; X 和 Y 有关系吗; 勾选 X，Y 会不会变; 会不会改动 Y;
会把 Y 算进去吗), or whether a conversion leaves a thing possible (转换成曲线以后，还能再改吗), or why a thing still
acts after a change (why does X still match Y; 为什么…还是能改), and the other end is a thing, never the asker (how do
I configure X is a how-to). `SHAPES` are those shapes over one lexicon of tying verbs (`TIES`), the generic
classifier's relation rule before any survey or comparison word.
"""
from __future__ import annotations

TIES: dict[str, str] = {
    "control": "controls|controlled", "decide": "decides|decided", "determine": "determines|determined",
    "configure": "configures|configured", "govern": "governs|governed", "override": "overrides|overridden|overrode",
    "supersede": "supersedes|superseded", "depend on": "depends on|depended on", "rely on": "relies on|relied on",
    "build on": "builds on|built on", "act on": "acts on|acted on", "operate on": "operates on|operated on",
    "belong to": "belongs to|belonged to", "pass to": "passes to|passed to", "hand to": "hands to|handed to",
    "hook into": "hooks into|hooked into", "plug into": "plugs into|plugged into", "feed into": "feeds into|fed into",
    "need from": "needs from|needed from", "get from": "gets from|got from", "inherit from": "inherits from|inherited from",
    "derive from": "derives from|derived from", "call": "calls|called", "invoke": "invokes|invoked", "load": "loads|loaded",
    "import": "imports|imported", "read": "reads",
    "require": "requires|required", "trigger": "triggers|triggered", "spawn": "spawns|spawned", "wrap": "wraps|wrapped",
    "affect": "affects|affected", "influence": "influences|influenced",
}
"""English verbs that tie one thing to another (base form: its third person and past forms)."""
CHANGES = "change|alter|break|invalidate|affect|influence|override|control|decide|determine|depend on|rely on|require"
"""English verbs a yes-or-no asks whether one thing does to another (does X change Y): the tie, not an action."""
STOPS = "stops?|prevents?|keeps?|blocks?"
"""English verbs with which a yes-or-no asks whether one thing keeps another from acting (can X stop Y from noticing)."""
_ZH_TIES = "控制|决定|左右|依赖|属于|覆盖|影响|调用|读取|加载|引用|触发|取决于|管理|负责|维护|生成|提供|指定"
"""Chinese verbs that tie one thing to another (由哪个文件控制, 哪些模块会调用…)."""
_ZH_EFFECTS = "改变|破坏|改动|修改|更改|打乱|删除|删掉|清除|清空|重置"
"""Chinese verbs of what a thing does to another's content (会不会改动…): the effect a yes-or-no asks about."""
_ZH_SETS = "配置|设置|设定|启动"
"""Chinese verbs a thing does to another only when the question says by whom (由哪个文件配置; 配置 alone is a how-to)."""
_ZH_THINGS = "(?:环境变量|变量|配置项|配置文件|选项|参数|设置|键|文件)"
"""Chinese nouns for the setting a question asks which of, when it overrides another (用哪个环境变量临时改掉)."""
_WORD = r"[\w.'’/+²-]+"
"""An English word of a named thing: letters, digits and the punctuation of file, package and option names."""
_AUX = r"(?:is|are|was|were|do|does|did|can|could|will|would|should|must|may|might|has|have|had|to|i|you|we|one)"
"""Words no name of a thing is made of before its verb: an auxiliary belongs to another shape, a pronoun is the asker."""
_ASKER = r"(?:I|you|we|one|they|me|us|there|it)"
"""The subject that makes a question a how-to: the asker acts, no two things are tied."""
_PERSON = (r"(?:(?:a|an|the|any|another|every|each|normal|ordinary|regular|other)\s+)?(?:users?|someone|somebody|anyone"
           r"|anybody|people|persons?|admins?|administrators?|members?)(?![\w'’-])")
"""A person as the subject of a yes-or-no (can a user in X change …, can someone …): a person acts, as the asker does."""
_NAMED = r"(?:[\w.:]*\w\(\)|\w+(?:::|[._])\w[\w.:]*|--?[a-z][\w-]*)"
"""A thing's name by its code punctuation (save_image(), pkg::fun, utils.io, --strict): a subject no asker or tool is."""
_NOT_A_TIME = r"(?!\s+(?:[\w.-]+\s+)?(?:versions?|releases?|editions?|years?|dates?|times?|days?)\b)"
"""What an interrogative end may not be: which version, what year ask for a time, not for a thing."""


def _alternatives(forms: str) -> str:
    return "|".join(f.replace(" ", r"\s+") for f in forms.split("|"))


_BASE = _alternatives("|".join(TIES))
_INFLECTED = _alternatives("|".join(TIES.values()))

SHAPES: tuple[str, ...] = (
    # which X reads Y, what decides Y: the interrogative is the subject end
    rf"\b(?:which|what){_NOT_A_TIME}\s+(?:(?!{_AUX}\b){_WORD}\s+){{1,5}}?(?:(?:also|still|then)\s+)?"
    rf"(?:(?:{_INFLECTED})|(?:can|will|would|may|might|must|should)\s+(?:{_BASE}))\b(?!\s+(?:{_ASKER})\b)",
    # which Y does X read, what does X compare to decide: the interrogative is the object end
    rf"\b(?:which|what|whom?)\b{_NOT_A_TIME}(?:\s+{_WORD}){{0,5}}?\s+(?:does|do|did|will|would|can|could|must|should)\s+"
    rf"(?!{_ASKER}\b)(?:{_WORD}\s+){{1,8}}?(?:{_BASE})\b",
    # does X change Y: a yes-or-no whether the tie holds, asked of a thing
    rf"^(?:[^?]{{0,80}}?,\s*)?(?:does|do|did|will|would|can|could)\s+(?!{_ASKER}\b|{_PERSON})(?:{_WORD}\s+){{1,10}}?"
    rf"(?:(?:{_alternatives(CHANGES)})\s+(?!{_ASKER}\b|my\b|our\b)\w"
    rf"|(?:{STOPS})\s+(?!{_ASKER}\b|my\b|our\b)(?:{_WORD}\s+){{1,6}}?from\s+\w+ing\b)",
    # does applying X delete Y, does enabling X let Y …, does using X put Y on Z, will f() overwrite Y: whether doing
    # one thing, or a named thing, removes, permits or places another (a tool's own work, does the backup tool overwrite
    # old archives, and a tool's own leave, does the editor let me undo, are no tie)
    rf"^(?:[^?]{{0,80}}?,\s*)?(?:does|do|did|will|would|can|could)\s+(?:\w+ing|{_NAMED})\s+(?:(?:{_NAMED}|{_WORD})\s+){{0,8}}?"
    r"(?:(?:delete|remove|erase|wipe|discard|overwrite|clear|reset)s?\s+(?!(?:it|them|my|our)\b)\w"
    r"|(?:let|allow|enable|permit)s?\s+\w"
    r"|(?:put|place|add|attach|append|move|copy)s?\s+(?!(?:it|them|my|our)\b)[^?]{1,40}?\b(?:on|in|into|to|onto)\b)",
    # why does X still act after a change, 为什么…还是…: a tie the change or the setting did not cut (the asker's why,
    # why do I still see …, is none)
    rf"^why\s+(?:does|do|did|is|are|was|were|will|would|can|could)\s+(?!{_ASKER}\b)[^?]{{1,60}}?\bstill\b"
    r"|为什么(?![^，。？?]*?[我你您])[^？?]{1,40}?还(?:是|能|会|在)",
    # after converting X to Y, can I still edit it; 转换成曲线以后，还能再改吗: what a conversion leaves possible
    r"^(?:after|once|when|if)\s+(?:(?:i|you|we)\s+)?(?:convert|turn|merge|flatten|export|render)\w*\s+[^?,]{1,50}?\b(?:in)?to\b"
    r"[^?,]{1,50}?,\s*(?:can|could|will|is it possible to)\b[^?]{0,30}?\b(?:still|again|back)\b"
    r"|(?:转换|转|变|合并|导出|另存)(?:成|为)[^，。？?]{1,20}?(?:以后|之后|后)[，,]?[^，。？?]{0,12}?还(?:能|可以|能不能|可不可以|能否)",
    # what is X part of, how is X tied to Y
    rf"\b(?:which|what)\b[^?]{{0,60}}?\b(?:is|are)\s+(?:{_WORD}\s+){{1,4}}?part\s+of\s*(?:[?,;]|and\b|$)",
    rf"\bhow\s+(?:is|are|does|do)\s+(?!{_ASKER}\b)[^?]{{2,60}}?\b(?:tied|linked|connected|related|bound|wired|coupled)\s+"
    rf"(?:to|with)\b",
    # 哪些目录是由软件包系统控制的, 由哪个文件决定
    rf"(?:哪|什么|谁)[^，。？?]{{0,16}}?由(?![我你您])[^，。？?]{{1,16}}?(?:{_ZH_TIES}|{_ZH_SETS})"
    rf"|由(?:哪|什么|谁)[^，。？?]{{0,12}}?(?:{_ZH_TIES}|{_ZH_SETS})",
    # X 和 Y 有关系吗, X 会影响 Y 吗, Y 会跟着更新吗
    r"(?:和|与|跟|同)[^，。？?]{1,30}?(?:有没有|是否有|有)(?:关系|联系|关联)(?!的)",
    rf"(?<![我你您])(?:会|会不会|是否|能否|能不能)(?:{_ZH_TIES}|{_ZH_EFFECTS})[^，。？?]{{1,20}}?(?:吗|么|嘛)?[？?]?$"
    # 会把 Y 也算进去吗: whether a thing acts on another, asked with 把
    r"|(?<![我你您])会(?:不会)?把(?![我你您])[^，。？?]{1,20}?(?:吗|么|嘛)[？?]?$"
    # 勾选 X，Y 会不会变; if I tick X, does Y move: whether a setting switched on or off changes a thing
    rf"|(?:勾选|取消勾选|选中|启用|禁用|开启|关闭)[^，。？?]{{1,30}}[，,](?![^，。？?]*?[我你您])[^，。？?]{{1,30}}?"
    r"(?:会不会|是否会|会)(?:变|改变|变化|移动|挪动?|跑)"
    rf"|^(?:if|when)\s+(?:(?:i|you|we)\s+)?(?:tick|check|untick|uncheck|enable|disable|turn on|turn off|switch on|switch off)\b"
    rf"[^?]{{1,60}},\s*(?:does|do|will|would)\s+(?!{_ASKER}\b)[^?,]{{1,40}}?\s(?:change|move|shift)\s*\?$",
    r"^(?!.*(?:什么时候|何时|多久)).*?(?:(?:跟着|随着|随之|跟随)(?:一起)?(?:更新|变化|改变|变|修改|更改|同步)"
    r"|会(?:跟着|随之|跟随)(?:一起)?[\u4e00-\u9fff]{1,4}?(?:吗|么|嘛))",
    # 用哪个环境变量临时改掉, 可以在对话框里覆盖吗, can X be overridden in Y: which setting overrides another, or where
    rf"(?:用|通过|靠)(?:哪个|哪些|什么){_ZH_THINGS}[^，。？?]{{0,8}}?(?:改掉|覆盖|改变|修改|更改|替换|换掉)"
    r"|(?:可以|能|能否|会)在[^，。？?]{1,20}?(?:里|中|上|内)(?:覆盖|取代|覆写|改掉|盖过)掉?(?:吗|么|嘛)"
    r"|\b(?:can|could|will|would|is|are)\b[^?]{1,60}?\bbe overridden (?:in|on|from|by)\b",
)
"""The shapes of a relation question (see the module's docstring): each fires on the question's shape and one verb of
the tying lexicon, not on a book's phrase."""
