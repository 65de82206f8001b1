"""What a question's words say about its type, in English and Chinese, and the things it names, for any documents."""
from __future__ import annotations

import re
from functools import lru_cache

from lambdarag.lazy_pattern import LazyPattern

from .ties import SHAPES as TIE_SHAPES
from .times import SHAPES as TIME_SHAPES

_KINDS = (r"(?:ways|methods|options|tools|approaches|alternatives|choices|steps|stages|parts|components|places|kinds|types"
          r"|formats|modes|strategies|techniques|levels)")
"""English plural nouns a survey question counts over (the ways to…, which tools exist…)."""
_ZH_KINDS = "(?:方法|方式|办法|做法|途径|手段|工具|选项|方案|步骤|环节|阶段|部分|组成|地方|措施|命令|软件(?!包)|类型|种类|格式|模式|用法|策略)"
"""Chinese nouns a survey question counts over (有哪些方法, 哪几种方式)."""

_STEERS = ("controls?|decides?|determines?|configures?|governs?|overrides?|sets(?! up\\b| aside\\b)|selects|specifies|chooses|picks"
           "|is (?:controlled|decided|determined|configured|set(?! up\\b| aside\\b)|governed)")
"""English verbs with which a question asks what steers something (which variable decides the name of …)."""
_ZH_STEERS = "控制|决定|配置|设置|指定|设定|左右"
"""Chinese verbs with which a question asks what steers something (由哪些配置文件控制)."""
_USES = ("defines|reads|loads|calls|invokes|sources|imports|spawns|triggers|consumes|handles|manages|requires|wraps"
         "|generates|writes|populates|interprets|intercepts|implies|references|extends|inherits|embeds")
"""English verbs (singular) with which a question asks what one thing does to another (which script calls …)."""
_THINGS = ("(?:files?|settings?|options?|variables?|keys?|modules?|librar(?:y|ies)|packages?|programs?|commands?"
           "|hooks?|scripts?|services?|units?|tables?|components?|daemons?|processes|process|tools?|functions?|plugins?|features?"
           "|mechanisms?|interfaces?|protocols?|backends?|drivers?|signals?|users?|groups?|accounts?)")
"""English nouns for the parts of a system a relation question asks which of (which files does X read)."""
_ZH_THINGS = ("(?:配置文件|配置项|配置|设置|文件|变量|模块|库|程序|命令|进程|服务|脚本|组件|工具|函数|单元|守护进程|插件"
              "|选项|参数|指令|键|钩子|表)")
"""Chinese nouns for the parts of a system a relation question asks which of (哪些程序会读取…)."""
_ZH_USES = "调用|读取|加载|(?<!索)引用|依赖|导入|定义|覆盖|隐含|触发|查阅"
"""Chinese verbs with which a question asks what one thing does to another (读取哪些配置文件, 覆盖哪个配置项)."""
_VERSION = r"\d+(?:\.(?:\d+|x))+"
"""A dotted version number (2.4, 1.9.2, 1.x)."""
_ZH_HOW_TO = "(?:怎么|怎样|如何)(?:才能|能|可以)?(?:知道|查看|查出|查到|看到|找出|找到|确定|判断|列出|得知|检查|显示)"
"""How a Chinese how-to question opens when it asks for a way to see a list (如何查看哪些端口是开放的): a fact."""
_HANDS = "contact|consult|pass|hand|send|forward|override|imply|use|start|launch|trigger|spawn|delegate|query|write|notify"
"""English verbs (base form) with which a question asks what a thing hands work or data to (which daemon does the
client contact, which setting does the option override)."""
_ORDER = (r"\b(?:what|which) order\b(?! of magnitude)|先后顺序|(?:什么|哪种|怎样的?)顺序|顺序(?:是|如何)"
          r"|先[^，。？?]{0,12}?哪[^，。？?]{0,12}?[、，,]\s*(?:再|后|然后)")
"""The order in which steps happen, asked in either language (in what order does X run …, 先装哪个、后装哪个): a time
on any corpus, versioned or not."""
_ZH_PICK = r"(?:用|选|装|挑|选用|采用)"
"""Chinese verbs of picking one thing to use (用, 选, 装)."""
_ZH_SET = r"(?:设|改|存|换|设置|保存)(?:成|为)"
"""Chinese verbs of setting a thing to one value (设成, 改为, 存成): picking it, as 用 does."""
_ZH_CHOICE = _ZH_PICK + r"\s*[^，。？?]{1,30}?\s*还是(?![不没])\s*[^，。？?]{1,30}?(?:[？?]$|[，,]\s*(?:哪|两者|二者))"
"""A choice between two things to use or pick (该用 A 还是 B, 选 A 还是 B): a comparison whatever it asks next."""

CUES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("synthesis", 0.85, (r"^(?:please\s+)?(?:summari[sz]e|give (?:me )?an overview|outline|survey)\b",
                         r"^请?(?:概述|总结|梳理|归纳|综述|列举|罗列)",
                         r"\b(?:whole|entire|full|complete) (?:[\w-]+ ){0,2}?(?:process|pipeline|workflow|life ?cycle|flow|picture)\b",
                         r"\b(?:across|throughout) (?:the |all )?(?:whole |entire )?(?:codebase|code|project|system|documentation|docs"
                         r"|manual|guide|book|modules|components|chapters)\b",
                         r"(?:完整|整个|全)的?[\u4e00-\u9fff]{0,4}?(?:流程|过程|生命周期|工作流|流水线)",
                         r"整个(?:项目|代码库|代码|系统|程序|软件|手册|文档|指南)(?:中|里|内)?(?:是)?(?:怎么|如何|怎样)")),
    ("temporal", 0.85, (_ORDER, r"\bbetween (?:versions? |releases? |v)?" + _VERSION + r" and v?" + _VERSION,
                        r"\bfrom (?:versions? |releases? |v)?" + _VERSION + r" to v?" + _VERSION + r"\b",
                        r"\b(?:breaking|incompatible|backwards?[- ]incompatible) changes?\b",
                        _VERSION + r"\s*(?:版本?)?\s*(?:到|至|和|与|升级到)\s*v?" + _VERSION + r"\s*(?:版本?)?(?:之间|期间|的|有|时|中)",
                        "(?:不兼容|破坏性)的?(?:变更|改动|变化|修改)",
                        r"\b(?:compared (?:to|with)|than(?: in)?|versus|vs\.?|unlike|relative to) (?:the |an? )?(?:older|earlier|previous"
                        r"|prior|past|old|former) (?:versions?|releases?|editions?)\b",
                        r"(?:和|与|跟|同)(?:以前|之前|以往|早期|过去|旧|老|上一?个?|前一?个?)的?版本?(?:相比|比|比较|对比)",
                        r"(?:相比|相较|比起)于?(?:以前|之前|以往|早期|旧|老|上一?个?|前一?个?)的?版",
                        r"在[^，,。？?]{1,15}?(?:里|中|内)?(?:待|停留|呆)上?(?:几|多少)(?:天|周|个?星期|个?月|年)[^。？?]{0,6}?才")),
    ("relation", 0.85, (r"(?:" + _ZH_USES + r")了?(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS, *TIE_SHAPES)),
    ("synthesis", 0.85, (r"\b(?:different|various|several|all the|main|possible|available) " + _KINDS + r"\b",
                         r"\b(?:what|which) (?:[\w-]+ ){0,2}?" + _KINDS + r" (?:are there|exist|are available|do i have|can)\b"
                         r"|\b(?:what|which) (?:[\w-]+ ){0,3}?" + _KINDS + r" (?:does|do) [^?]{1,40}? (?:give|offer|provide) "
                         r"(?:me|you|us|one|users?)\b",
                         r"^what can (?:I|you|we|one) (?:customi[sz]e|configure|change|tune|adjust|tweak) about\b",
                         r"\b(?:what|which) (?:kinds|types|sorts) of\b",
                         r"\b(?:what|which) (?:[\w-]+ ){0,2}?" + _KINDS + r" (?:help|let|allow|enable) (?:me|you|us|one|people|users?)\b",
                         r"\b(?:what|which) (?:are|would be) (?:my|our|your|their|the) (?:possible |available |main )?"
                         r"(?:options|choices|alternatives)\s*\?$",
                         r"\b(?:which|what) (?:[\w-]+ ){0,2}?(?:jobs|tasks|checks|actions)\b[^?]{0,60}?\b(?:every|each) (?:hour|day|night"
                         r"|week|month|minute)\b",
                         r"\bwhat are (?:the |some )?(?:different |various |possible |main )?" + _KINDS
                         + r" (?:to|for)\b(?! (?:" + _STEERS + r")\b)",
                         "(?:不同|各种|哪些|哪几种|几种|多种|都有什么)的?(?:[\u4e00-\u9fff]{1,4}(?:或|或者|和|与|及|、))?" + _ZH_KINDS
                         + "(?!(?:会|可以|能)?(?:影响|改变|修改|更改|" + _ZH_STEERS + ")|[与和跟].{1,30}?(?:冲突|互斥|对应))",
                         r"[^、，,。？?]{1,30}、[^、，,。？?]{1,30}(?:、|和|以及|及|与)[^，,。？?]{1,30}?分别是什么",
                         r":\s*[^:?,;]{2,60}, [^:?,;]{2,60},? (?:and|or) [^:?,;]{2,80}\?$",
                         r"：[^：？?。，,]{1,30}、[^：？?。，,]{1,30}(?:、|和|以及|及|与)[^：？?。，,]{1,30}[？?]$",
                         r"\bdifferences? (?:between|among) (?:the )?(?:various|different|several|many|all(?: the)?)\b",
                         r"(?:各个|各种|几种|这几个|这些)[^，,。？?]{0,40}?(?:有什么|有何|有哪些|的)(?:区别|不同|差异)",
                         r"\b(?:and|,)\s+what\b[^?]{0,30}?\beach(?: one| of them)?\b(?! other)")),
    ("compare", 0.9, (r"\bdifferen(?:ce|ces|t from|tly (?:from|than))\b", r"^(?!.*\b(?:when|if|whether|unless) (?:the )?[\w.-]+ differs?\b).*\bdiffers?\b",
                      r"\bhow (?:do|does) (?!I\b|you\b|we\b)(?:[^?,]{1,40}? and [^?,]{1,40}?|(?:the )?(?:two|both) [^?,]{1,40}?) "
                      r"(?:behave|handle|perform|act|work(?! together| with))\b",
                      r"\bcompare\b", r"\bcompared (?:to|with)\b", r"\bcomparison (?:of|between)\b",
                      r"\bversus\b", r"\bcontrast\b", r"\bdistinguish(?:es)?\b", r"\bwhat separates\b", r"\bsets? .{1,40} apart\b",
                      r"\bsimilarit(?:y|ies)\b", r"\bin common\b", r"\balike\b", r"\bvs\.?\s",
                      r"\b(?:better|faster|slower|safer|simpler|easier|cheaper) than\b", r"\bor\b[^?]{1,40}\bwhich\b",
                      r",\s*or (?:do|does|should|must|can|could|would|will|shall) (?:I|we|you|one|they) (?:[\w-]+ ){0,2}?"
                      r"(?:need|have|use|pick|choose|take|go|want|stay|switch|keep|buy|install)\b",
                      r"\b(?:instead of|rather than)\b[^?]{1,80}?\bwhat (?:[\w']+ ){0,3}?(?:different|differently|changes?)\b",
                      r"\bwhat (?:[\w']+ ){0,3}?(?:different|differently)\b[^?]{1,60}?\b(?:instead of|rather than)\b",
                      r"\bwhich is (?:better|faster|safer|simpler|easier|preferable)\b",
                      r"\b(?:should|would|do|can|shall) (?:I|we|you|one) (?:use|pick|choose|prefer|take|go with|recommend) (?!to\b)[^?,]{1,40}? or\b",
                      r"^should\b[^?]{3,80}?\b(?:go|be|stay|live|land|belong|be uploaded|be filed) (?:to|in|into|on|under) [^?,]{1,40}? or "
                      r"(?:to |in |into |on |under )?[^?,]{1,40}\?$",
                      r"\bprefer\b[^?,]{1,40}?\b(?:over|rather than|instead of)\b",
                      r"\b(?:when|why) (?:should|would|do|does|is|are) [^?]{1,60}?\b(?:rather than|instead of)\b", r"\bunlike\b", r"\bdistinct from\b",
                      r"\b(?:is|are) [^?,]{1,40}? the same (?:as|thing)\b", r"\bthe same way\b", r"\binterchangeabl[ey]\b",
                      r"\bdiverge\b", r"\bover the (?:other|\w+ one)\b",
                      "异同", "区别", "差别", "差异", "对比", "相比", "比较一下", "比较(?=[^好快慢多少常]{0,2}[？?]?$)",
                      r"(?:和|与|跟|同).{1,30}(?:不同|不一样|一样吗|相同|优缺点|优劣|哪个更|哪种更|谁更)",
                      "有何不同", "有什么不同", "不同之处", "哪个更", "哪种更", "一回事", "共同点", "互换", "互相替代",
                      r"还是[^，。？?]{1,30}?(?:更|比较)(?:好|快|慢|安全|合适|省|稳定|方便|可靠)",
                      r"(?:(?:行不行|可不可以|能不能|好不好|要不要|对不对|吗|呢)[，,]\s*还是|[，,]\s*还是(?:得|要|需要|必须|应该|该|选|用))"
                      r"[^，。？?吗不没]{1,30}[？?]$", r"而不(?:选|用|是|采用)", _ZH_CHOICE,
                      r"(?:和|与|跟|同)[^，。？?]{1,30}?分别(?:在|适合|适用|用于|用在)",
                      r"(?:和|与|跟|同)[^，。？?]{1,30}?(?:用|选)哪(?:个|一个|种)(?:好|更好|合适)?[？?]?$",
                      r"[A-Za-z][\w.+-]*\s*(?:和|与|跟|还是)\s*[A-Za-z][\w.+-]*\s*(?:之间|两者|二者)?哪(?:个|一个|种)",
                      r"\bthat (?!I\b|you\b|we\b|one\b|it\b|they\b)[\w.+-]+ (?:(?:does|do|did|is|are|has|have)(?: not|n['’]t)"
                      r"|can(?:not| not|['’]t)|will not|won['’]t)\s*\?$",
                      r"^(?:what|which|how) (?:do|does|are|is) [^?,]{1,40}? and [^?,]{1,40}? each\b",
                      r"^[^、，,。？?]*?(?:和|与|跟|同)[^、，,。？?]{1,30}?各(?:自)?(?:管|负责|干|做|处理|是|用来做|用于)(?:些)?什么",
                      r"而\s*[A-Za-z][\w.+-]*\s*[\u4e00-\u9fff]{0,3}?(?:不|没)")),
    ("temporal", 0.85, (r"\b(?:latest|newest|current) (?:version|release|edition)\b",
                        r"\bwhich (?:[\w.-]+ ){0,2}?(?:versions?|releases?)\b",
                        r"\bwhat (?:[\w.-]+ ){0,2}?(?:version|release) (?:did|was|were|first|added|introduced|removed|dropped)\b",
                        r"\bfirst (?:appeared|appear|introduced|added|shipped|supported|available)\b",
                        r"\b(?:(?:release|support|product|version) (?:lifetime|life ?cycle)|(?:lifetime|life ?cycle) of (?:a |the |each )?"
                        r"(?:[\w-]+ )?(?:release|version)s?|end of life|support period|release (?:cycle|schedule)|long[- ]term (?:support|release)|LTS)\b",
                        r"\bhow often (?:do|does|are|is|will) (?:(?:new|stable|major|minor) ){0,2}(?:releases?|versions?)\b",
                        r"\b(?:since|before|until|in|after) (?:version|release|v?\d+\.\d+)", r"\bdeprecated\b",
                        r"\b(?:introduced|added|removed|dropped) in\b", r"\bwhat changed\b",
                        r"\bchanges? in (?:the )?(?:version|release|v?\d|latest|newest|new|next|last|recent|current|each)\b",
                        r"\bolder versions?\b", r"\bsince (?:which|when)\b", r"\bover time\b", r"\bhistory of\b",
                        r"\bthe old(?:er)? (?:[\w.()-]+ ){0,3}?(?:formats?|versions?|releases?|styles?|syntax|schemes?)\b",
                        r"\bcode ?names? of (?:[\w-]+ )?v?\d+(?:\.\d+)*\b", r"\d+(?:\.\d+)*\s*(?:版|版本)?的?代号",
                        r"\bstill (?:supported|used|valid|the default|works?|available|accepted|maintained|receives?|gets?)\b",
                        r"\b(?:next|upcoming|previous|last|major|minor) (?:release|version)\b",
                        r"\bhow (?:many (?:days|weeks|months|years)|long) (?:must|does|do|will|should|can) [^?]{2,60}?"
                        r"\b(?:wait|spend|stay|remain|sit)\b[^?]{0,40}?\b(?:before|until)\b",
                        r"\bwhen (?:was|were|did|will|is)\b", r"\b(?:last|this|next) year\b", r"\b(?:before|after|since) (?:the )?(?:19|20)\d\d\b",
                        "最新版", "哪个版本", "哪一版", "旧版本", "新版本", "老版本", r"从哪.{0,16}版", "版本开始", "版起",
                        "自从", "以来", "哪一年", r"什么时候(?!(?:用|使用|应该|该用|需要|要用|适合))", "何时", r"第\s*\d+\s*版",
                        "第几版", r"目前.{0,6}版", "下个版本", "下一个?版本",
                        "上一个?版本", "大版本", "长期支持",
                        r"(?:什么|哪些)(?:变化|变更|改动|变动)", r"还(?:有|在|会)(?:安全)?(?:更新|维护)", "首次(?:出现|引入|加入|支持)", "最早(?:出现|引入|加入|支持)", "(?:生命|支持|发布|维护)周期",
                        r"多久(?:发布|发)一次",  "去年", "今年", "前年", "近年", "这些年", "历年", "演变", "还支持", "还能用", "还在用", "下线",
                        r"\d{4}\s*年(?:版|以前|之前|以后|起)", r"\d+(?:\.\d+)+\s*版", "废弃", "引入的")),
    ("relation", 0.85, (r"\brelat(?:e|es|ed|ion|ionship) (?:to|between|with)\b", r"\brelationships?\b",
                        r"\b(?:connection|link|interplay|interaction|tie) (?:between|of .{2,40}? (?:to|with))\b", r"\bhow (?:are|is|do|does) .{2,60}\brelated\b",
                        r"^(?:what|which)\b[^?]{2,80}?\b(?:links?|refers?|points?) to\s*\?$",
                        r"\b(?:which|what) (?:[\w.'’-]+ ){0,6}?(?:" + _STEERS + r")\b",
                        r"\b" + _THINGS + r" (?:that|which) (?:" + _STEERS + r")\b",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,3}?(?:is|are) used to (?:control|decide|determine|configure|set"
                        r"|select|choose|pick|specify)\b",
                        r"\b(?:controlled|decided|determined|governed|configured|overridden) by\b",
                        r"\b(?:is|are) (?:\w+ )?part of\b", r"^(?:is|are) [\w .-]{2,40}? part of\b", r"\bpart of (?:which|what)\b", r"\bpart of\s*(?:[?,;]|and\b)",
                        r"\bdepends? on\b", r"\bdependenc(?:y|ies)\b", r"\bbelongs? to\b", r"\bresponsible for\b",
                        r"\bin charge of\b", r"\binteracts? with\b", r"\bconnected to\b", r"\btalks? to\b", r"\b(?:tied|coupled) to\b",
                        r"^(?:after|once|when|whenever|if) [^?]{3,80}?,\s*(?:(?:do|does) (?:i|we|you|one) (?:still |also )?(?:have|need) to"
                        r"|(?:must|should) (?:i|we|you|one) (?:still |also )?) ?(?:redo|re-?run|regenerate|rebuild|recreate|recompute"
                        r"|reinitiali[sz]e|reinstall|reconfigure|re-?sign|re-?index|refresh|update|restart|reload|reboot)\b"
                        r"|^(?:after|once|when|whenever|if) [^?]{3,80}?,\s*(?:do|does) (?:i|we|you|one) (?:still |also )?(?:have|need) to"
                        r" \w+\s+(?!again\b)[^?]{1,40}?\bagain\b",
                        r"\bwho (?:maintains|owns|runs|starts|calls|approves|is allowed|reads|writes|uses|loads|sends|consumes|triggers)\b",
                        r"\bwhich (?:package|module|component|library|service|team|group|process|program|daemon|chapter|section) "
                        r"(?:provides|owns|starts|runs|executes|launches|calls|sends|imports|uses|is responsible|does|contains|ships"
                        r"|includes)\b",
                        r"\bwhat (?:calls|uses|imports|starts|triggers|launches|runs|spawns|loads|reads|executes|invokes|handles|manages"
                        r"|provides|generates|writes|populates)\b(?!\s+first\b)",
                        r"\bwhere (?:does|do) (?!I\b|you\b|we\b|one\b).{2,50}?\b(?:get|take|read|load|obtain)\b(?! (?:installed|stored|saved|written|put)\b)",
                        r"\bwhich (?:[\w.-]+ ){0,3}[\w.-]+ (?:" + _USES + r")\b",
                        r"\bwhich (?:[\w.-]+ ){0,2}[\w.-]+s (?:read|load|call|invoke|source|include|import|require|use|reference|extend|inherit|imply)\b",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,2}?" + _THINGS + r" (?:does|do|will|would) (?!I\b|you\b|we\b|one\b)"
                        r".{2,50}?(?<![\w-])(?:read|load|call|invoke|run|source|include|import|require|need|honou?r|respect|obey|take into account|generate|produce|create|"
                        + _HANDS + r")\b",
                        r"\bwhat (?:does|do) (?!I\b|you\b|we\b|one\b).{2,50}?(?<![\w-])(?:depend|rely|call|invoke|run|load|source|import)\b",
                        r"\bwhat (?:does|do) (?!I\b|you\b|we\b|one\b).{2,60}?\b(?:need|require|expect|get|take) from\b",
                        r"\b(?:which|what) [^?]{0,40}?\b(?:has to|have to|must|needs? to) be (?:run|executed|restarted|reloaded|called)\b"
                        r"[^?]{0,40}?\b(?:take effect|be applied|be picked up)\b",
                        r"\b(?:used|called|invoked|run|read|loaded|started|spawned|triggered|sourced|managed|provided|handled"
                        r"|generated|maintained|owned|launched|wrapped|implied|overridden|superseded|activated|enabled|affected|influenced"
                        r"|consulted|honou?red|respected|ignored|required|needed|limited|restricted) by\b(?!\s+default\b)",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,2}?" + _THINGS + r" (?:is|are|gets?) (?:started|launched|run|invoked|called"
                        r"|triggered|spawned|activated|loaded|read|consulted|used|checked|applied|sourced|executed|honou?red)"
                        r" (?:when|whenever|on|after|before|at)\b",
                        r"\b(?:derived|inherited) from\b", r"^does .{2,50}?\bimply\b",
                        r"^(?:does|do|will|would|can) (?!I\b|you\b|we\b|one\b)[^?]{2,50}?\b(?:override|overrule|supersede|shadow|take precedence over)\b",
                        r"^(?:if|when|once|after) [^?]{3,80}?,\s*(?:does|do|will|must|should) (?!I\b|you\b|we\b|one\b)[^?]{1,40}? (?:also |still )?"
                        r"(?:need to |have to )?(?:change|be changed|be updated|be adjusted|follow)\b(?: too| as well| also)?\s*\?$",
                        r"\bwhat (?:does|do) (?!I\b|you\b|we\b|one\b).{2,50}?(?<![\w-])use (?:to|for)\b",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,2}?" + _THINGS + r" (?:must|needs? to|has to|have to|should) be "
                        r"(?:pre)?(?:loaded|linked|installed|present|running|enabled|mounted|imported|sourced|started"
                        r"|in|listed in|added to|included in)\b",
                        r"\bin (?:which|what) " + _THINGS + r" (?:is|are) (?:[\w.-]+ ){1,4}?(?:configured|set|defined|specified)\b",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,3}?(?:does|do) (?!I\b|you\b|we\b|one\b).{2,50}?\b(?:act|operate) (?:up)?on\b",
                        r"\b(?:acts?|operates?|appl(?:y|ies)) (?:up)?on (?:which|what)\b",
                        r"\b(?:shorthand|shortcut|alias|wrapper|front[- ]?end|back[- ]?end|synonym) (?:for|of|to|around)\b",
                        r"\bon top of\b", r"\b(?:which|what) (?:[\w.'’-]+ ){0,4}?(?:affects?|influences?)\b",
                        r"\b(?:which|what) .{2,60}?\bbased on\b", r"\bbased on (?:which|what)\b",
                        r"\brel(?:y|ies|ied) on\b", r"\bbuil(?:d|ds|t) (?:up)?on\b",
                        r"\b(?:correspond(?:s|ing)?|maps?) to\b", r"\b(?:precedence|priority) over\b|\b(?:takes?|has) (?:precedence|priority)\b",
                        r"\b(?:conflicts? with|mutually exclusive with|incompatible with)\b",
                        r"\b(?:has|have) (?:\w+ )?to do with\b",
                        r"^(?:if|when|once|unless|without) [^?]{3,80}?,\s*(?:(?:is|are|will|would|can) (?:i |we |you )?[^?]{1,40}? still (?:be )?"
                        r"(?:accurate|correct|right|reliable|trustworthy|trusted|up to date|\w+ed)\b"
                        r"|(?:does|do|will|would|can|could) (?!i |we |you |one )[^?,]{1,40}? still \w+)"
                        r"|^(?:如果|要是|假如|假设)[^，,。？?]{2,30}[，,](?![^，。？?]*?[我你您])[^，。？?]{1,20}?还(?:会|能|是|在)"
                        r"[^，。？?]{1,16}(?:吗|么|嘛)[？?]?$"
                        r"|^(?![^？?]*?[我你您])(?![^，,]*?(?:以后|之后|后|时候|时)[，,])[^，,。？?]{2,30}[，,][^，。？?]{0,12}?"
                        r"还(?:能|可以)[^，。？?]{1,20}(?:吗|么|嘛)[？?]?$",
                        r"\bhow (?:does|do|would|will) (?!I\b|you\b|we\b|one\b)[^?]{2,50}?\b(?:change|affect|influence|alter) (?:what|how|which|the)\b",
                        r"\bwhat (?:does|do) (?!I\b|you\b|we\b|one\b)[^?]{2,60}? mean for\b", r"\b(?:effect|impact|influence) (?:does|do) [^?]{2,60}? have on\b",
                        r"\bhow (?:does|do|is|are) (?!I\b|you\b|we\b|one\b)[^?]{2,50}?\b(?:decide|determine|choose|pick|select)s? (?:which|what|whether|where|how)\b",
                        r"^(?:does|do|can|will|would) (?!I\b|you\b|we\b|one\b)[^?]{2,60}?\b(?:control|decide|determine|configure|govern"
                        r"|select|choose|pick|affect|influence) (?:which|what|whether|where|how)\b",
                        r"\b(?:which|what) (?:[\w.-]+ ){0,2}?(?:variables?|settings?|options?|keys?|parameters?|files?) (?:change|alter|modify)s? "
                        r"(?:the |its |their )?(?:[\w-]+ ){0,3}?(?:behaviou?r|defaults?|output|format|location|way)\b",
                        r"\b(?:through|via) (?:which|what) (?:[\w.-]+ ){0,2}?" + _THINGS + r"\b",
                        r"\bhow (?:does|do|is|are) (?!I\b|you\b|we\b|one\b).{2,60}?\b(?:work(?:s)? (?:with|together)|fits? (?:in|into)"
                        r"|interact|connect|tie in|tied to|linked to)\b", r"\bwhat role\b|\brole of\b.{2,60}\bin\b",
                        "由谁", "谁负责", "谁有权", "属于哪", "依赖", "哪个(?:模块|组件|团队|进程|服务|守护进程|程序|脚本|软件包|库|单元|工具|命令)会?(?:负责|调用|启动|触发|投递|提供|处理|管理|生成|监听|派生)",
                        "(?:有|是)什么关系", "有何关系",
                        r"(?:与|和|跟|同)[^，。？?]{1,30}?(?:有关|相关)(?:吗|(?<!什)么|嘛|[？?])",
                        r"(?:以后|之后|后)[，,]\s*[^，,。？?]{0,20}?(?:(?:还|也)?(?:要|得|需要|必须)(?=.*(?:吗|(?<!什)么|嘛)[？?]?$)|要不要|用不用|需不需要)"
                        r"(?:重新|再次?|跟着|重[建装启做签编跑算])", "关系如何", "交互", "配合", "协作", "调用了?哪", "被哪", "归哪",
                        r"(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"[里中]?(?:来|可以|能|会)?(?:" + _ZH_STEERS + ")", r"(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,6}?(?:决定|左右)了?",
                        r"受(?:哪|什么).{0,12}(?:" + _ZH_STEERS + "|影响|约束|限制|制约)", r"(?<![我你您])(?:是否|会不会|能不能)(?:会|能)?(?:控制|决定|左右|影响)(?:着)?",
                        r"(?:的话|以后|之后|时)[，,][^，,。？?]{1,20}?还(?:准|准确|对|正确|有效|可靠|可信|算数|管用|成立)(?:吗|么|嘛)",
                        r"(?:哪个|什么)[\u4e00-\u9fff]{0,4}?(?:命令|程序|脚本|服务)[^，。？?]{0,10}?(?:才能|才会)(?:生效|起作用)", r"(?:" + _ZH_STEERS + ")于哪", "取决于",
                        r"是.{1,16}的(?:一部分|组成部分)", r"属于.{0,12}的一部分",
                        r"(?:与|和|跟|同).{1,30}?(?:之间)?的(?:关系|联系)", r"关系是什么", r"(?:有|是)(?:什么|何)联系",
                        r"(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"(?:会|来|可以|能)?(?:" + _ZH_USES + ")",
                        r"调用了?什么", r"(?:程序|工具|服务|进程|命令|脚本|模块|组件|插件|内核|守护进程)(?:会|是)?(?:使用|用|借助|通过)"
                        r".{0,6}?(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?(?:" + _ZH_THINGS + r"|特性|机制|接口|协议)来?[\u4e00-\u9fff]{2}", r"用的是(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS,
                        r"(?:交给|传给|传递给|转交给?|发送给|发给|委托给?|靠|依靠|借助|凭借)(?:哪个|哪些|什么)",
                        r"把(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"(?:传|交|发|转|递)(?:递|交)?给",
                        r"(?:会|能|是否)(?:覆盖|取代|覆写|顶替|盖过)[^，。？?]{1,30}?(?:吗|(?<!什)么|嘛)",
                        r"(?:如何|怎样|怎么)(?:关联|联系|衔接)", r"的底层(?:实现|命令|程序)",
                        r"(?:使用|用到|用)了?(?:哪个|哪些|什么)(?:库|模块|组件|服务|后端|协议|守护进程|插件|驱动)",
                        r"(?:必须|需要|得)先?(?:预加载|加载|链接|安装|启用|启动|运行)(?:哪个|哪些|什么)",
                        r"在(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"[里中]?(?:" + _ZH_STEERS + ")",
                        r"在(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"[里中](?:把|将)[^，。？?]{1,12}?(?:改|修改|更改|换)", r"(?:作用于|适用于)(?:哪|什么)",
                        r"影响到?(?:哪些|哪个)", r"需要(?:哪些|哪个)(?:软件包|库|模块|组件)", r"需要(?:哪些|哪个)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS,
                        r"从(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"[中里]?(?:获取|读取|加载|得到)", r"来自(?:哪个|哪些)(?:软件包|包|模块|组件|项目|库)",
                        r"(?<![我你您])从哪(?:里|儿)(?:获取|读取|加载|得到|拿到)",
                        r"(?:之前|之后|前|后|时)(?:会)?(?:运行|执行|调用|触发|启动)(?:哪些|哪个)[\u4e00-\u9fff]{0,4}?(?:钩子|脚本|程序|服务|进程)",
                        r"在哪个(?:软件包|包|模块|组件)(?:里|中)", r"(?:控制|决定|左右)了?(?:哪些|哪个|什么)", r"(?:包含|收录|打包)在哪",
                        r"(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,4}?" + _ZH_THINGS + r"(?:会)?影响", r"是.{1,20}的(?:前端|后端|封装|别名|简写)",
                        r"(?:与|和|跟|同).{1,20}(?:通信|通讯)",
                        r"(?:起|扮演|担任|发挥)(?:了)?(?:什么|怎样的?|何种)(?:作用|角色)", r"基于哪",
                        r"(?:根据|依据|依照|参照)(?:哪个|哪些|什么)", r"建立在.{1,12}之上",
                        r"对应(?:的是)?(?:哪个|哪些|什么)|(?:与|和|跟).{1,30}?对应的(?:是)?(?:哪|什么)",
                        r"(?:哪个|哪一个|谁)更?优先|优先级?更?高于|以哪个为准",
                        r"(?:与|和|跟)(?:哪些|哪个|什么)[\u4e00-\u9fff]{0,4}?(?:冲突|互斥)|(?:哪些|哪个)[\u4e00-\u9fff]{0,6}?(?:与|和|跟).{1,30}?(?:冲突|互斥)",
                        r"(?<![我你您])(?:是)?(?:怎么|怎样|如何)(?:决定|确定|选择|挑选)(?:哪些|哪个|是否|什么)",
                        r"对(?!象|话|齐|应|比|照)[^，。？?]{1,40}?有(?:什么|何|哪些)(?:影响|作用)",
                        r"通过(?:哪个|哪些|什么)(?:配置文件|配置项|环境变量|变量|模块|库|接口|协议|机制|服务|守护进程|套接字|后端|插件|驱动|端口)",
                        r"(?:哪个|哪些|什么)[\u4e00-\u9fff]{0,2}?(?:环境变量|变量|配置项|选项|参数|设置|配置文件)(?:会|可以|能|来)?(?:临时|暂时|单独|永久)?"
                        r"(?:改变|修改|更改|改掉|覆盖|替换)")),
    ("synthesis", 0.85, (r"\boverview\b", r"\bsummar(?:y|ise|ize)\b", r"\boutline\b", r"\bsurvey\b",
                         r"\boverall\b", r"\bwalk me through\b", r"\bend to end\b", r"\bfrom start to (?:end|finish)\b",
                         r"\ball (?:the )?(?:ways|options|tools|methods)\b", r"\bevery (?:place|way|option|tool)\b",
                         r"\bmain (?:topics|components|parts|features|points)\b",
                         r"\ball (?:the )?(?:\w+ )?\w+s\b", r"\b(?:the )?(?:different|various|individual) (?:[\w-]+ )?\w+s\b",
                         r"\b(?:which|what) (?:[\w.-]+ ){0,2}?\w+s (?:does|do) (?:the|this) (?:book|manual|guide|documentation|docs"
                         r"|handbook|reference|chapter|tutorial) (?:describe|cover|present|list|mention|discuss|introduce|explain)\b",
                         "哪几种", "哪几类", "各自", r"分别(?:放|是|包含|有|怎么|如何)", "梳理", "汇总", "概述", "总结", "归纳", "整体",
                         "全面", "总体",
                         r"都(?:讲|说|介绍|涵盖|包括|包含|提到)了?(?:什么|哪些)", r"(?:所有|全部)的?(?:位置|地方|途径|场景|情况)",
                         "主要(?:内容|部分|组成|功能)", "有哪些方面", "哪些方面", "哪些环节", "哪些地方", "各个", "各(?:种|类|项|级)",
                         r"\b(?:such as|for example|e\.g\.|including) [^?,;]{1,40}, [^?,;]{1,40},? (?:and|or) ",
                         r"(?:比如|例如|包括|像是)[^？?。]{1,30}、[^？?。]{1,30}(?:、|和|以及|及|与|或)",
                         r"^(?!.*" + _ZH_HOW_TO + r").*?哪些[\u4e00-\u9fff]{1,6}[？?]?$",
                         r"^(?:how|which|what)\b[^?]{5,}?,\s*and (?:what|which|how)\b",
                         r"^(?!how (?:do|can|could|should|would) (?:i|you|we|one)\b)[^?]*?,\s*from (?:the )?[^?,]{2,40}? (?:to|through) (?:the )?[^?,]{2,40}\?$",
                         r"^(?![^，,]*?(?:我|你|您)[^，,]*?(?:怎么|如何|怎样))[^？?]*?[，,]\s*从[^，,。？?]{1,20}?到[^，,。？?]{1,20}[？?]$",
                         r"^what (?:does|do) (?:the|this) (?:book|guide|manual|documentation|docs|handbook|faq|reference|tutorial"
                         r"|chapter)s? (?:say|tell (?:me |us )?|cover|explain) about\b",
                         r"^(?:please\s+)?(?:(?:list|enumerate) (?:all|every|the)|name (?:all|every))\b")),
    ("temporal", 0.85, TIME_SHAPES),
    ("fact", 0.7, (r"\bhow (?:many|much|long|often)\b", r"\bwhat is the default\b", "多少", "多久", "几次",
                   r"(?<!哪)几(?:级|层|位|档)", r"是几[？?]?$",
                   r"^(?:how (?:can|do|could|would) (?:i|you|we|one) (?:tell|see|find out|check|know|list))\b", "^" + _ZH_HOW_TO)),
)
"""(type, confidence, cues): the first group whose cue fires decides; English cues on word boundaries. A question
that opens by asking for a summary or an overview is a survey whatever it goes on to ask (… and what decides which
files the upload contains), and so is one about a whole process or a whole codebase; a span between two versions
or the changes that break (哪些选项 between 4.2 and 4.4) is a time before any survey over kinds. What one
thing does to which others (隐含了哪些选项, 读取哪些配置文件) is a relation before anything, a survey over kinds of
things (the different ways, 有哪些方法) is recognised before a comparison, whose 不同 it shares,
and a relation (被哪些模块引用) before a survey's open 哪些 (有哪些配置文件); what follows an event or which of
two comes first (`times.SHAPES`) is a time once no other cue but a fact's has fired;
a cue is one that settles the type in any field, and a question no cue settles goes to the exemplars."""


def rules_of(groups: tuple[tuple[str, float, tuple[str, ...]], ...]) -> tuple[tuple[str, float, LazyPattern], ...]:
    """Returns the classifier rules of cue groups in order, each group's cues as one pattern (a group with no cue
    gives no rule: an empty pattern would match every question)."""
    return tuple((kind, confidence, LazyPattern("|".join(cues), re.I)) for kind, confidence, cues in groups if cues)


RULES = rules_of(CUES)

PAIRED = re.compile(r"\b(?:and|or|than|between|both|either|each|two|pros)\b|[和与跟同或两俩各]|还是|、", re.I)
"""Words with which a question sets two or more things side by side."""

_QUOTED = re.compile(r"`([^`]{2,60})`|[\"“「『]([^\"”」』]{2,60})[\"”」』]")
_CODE_LIKE = re.compile(r"(?<![\w./-])(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Za-z][\w]*[-./_][\w./-]*\w|[a-z]+[A-Z]\w*)(?![\w-])")
_CAMEL = re.compile(r"(?<![\w-])[A-Z][a-z]+[A-Z]\w*(?![\w-])")
"""A CamelCase name (NotAutomatic, NetworkManager)."""
_PAIR = re.compile(r"\bbetween\s+((?:.{2,40}?,\s+)*.{2,40}?),?\s+and\s+(.{2,40}?)(?=[?.,;!]|\s+(?:in|for|when|on|regarding)\b|$)"
                   r"|(?:^|\s)([\w./+-]{2,40})\s+(?:vs\.?|versus|or)\s+([\w./+-]{2,40})(?=[?.,;!\s]|$)"
                   r"|\bcompare\s+(.{2,40}?)\s+(?:and|with|to)\s+(.{2,40}?)(?=[?.,;!]|$)"
                   r"|\b(?:are|is)(?:n't|\s+not)?\s+(.{2,40}?)\s+and\s+(.{2,40}?)\s+(?:the\s+same|alike|equivalent"
                   r"|interchangeable)\b"
                   r"|\b(?:are|is)(?:n't|\s+not)?\s+(.{2,40}?)\s+the\s+same(?:\s+thing)?\s+as\s+(.{2,40}?)"
                   r"(?=[?.,;!]|\s+(?:here|there|in|for|when|on)\b|$)", re.I)
_ZH_PAIR = re.compile(r"([\u4e00-\u9fffA-Za-z0-9_.+-]{2,20}?)(?:和|与|跟|同|及)([\u4e00-\u9fffA-Za-z0-9_.+-]{2,20}?)"
                      r"(?:之间)?(?:到底|究竟|分别|各自)?(?:的|有|在|是|相比|比较|哪个|谁)")
"""Two sides a Chinese comparison joins, before what it asks of them; an adverb right before that (盲孔和埋孔到底有什么
区别) is no part of the second side."""
_ZH_EITHER = re.compile(r"((?:[A-Za-z0-9_.+-]+\s)?[\u4e00-\u9fffA-Za-z0-9_.+-]{2,30}?)"
                        r"(?:还是|或者)(?![不没能会可要得很是在有也都])\s*"
                        r"((?:[A-Za-z0-9_.+-]+\s)?[\u4e00-\u9fffA-Za-z0-9_.+-]{2,20}?)"
                        r"(?=[，,。？?！!；;\s]|$|好|呢|的|有|在|哪个|相比|比较)")
"""Two sides a Chinese choice joins with 还是 or 或者 (该装 A 还是 B，…; 设成 A 或者 B), a Latin name with its kind
whole (OLE 对象); the first holds the words before it, up to the verb of the choice (`picked`). Not 还是 as "still"
before a verb (为什么别人还是能改)."""
_REPEATED = re.compile(r"\b(with|using|via|through|in|at|on)\s+(.{2,40}?)\s+or\s+\1\s+(.{2,40}?)(?=[?.,;!]|$)", re.I)
"""Two means or places a preposition said again after "or" governs (sign it with dnssec-policy or with manual key
management): the sides, each whole up to the end of its clause. Not "to A or to B" (a destination: round 25 measured
it and kept the plain list) nor "for a holiday or for good" (a purpose, an idiom)."""
_LEAD = re.compile(r"^(?:the|a|an|using|use)\s+", re.I)


_COMBINING = frozenset("one two non self well multi semi re co pre post sub".split())
"""English combining forms that make an everyday compound of a hyphenated word (non-free, self-signed)."""


def everyday(word: str) -> bool:
    """Returns whether a hyphenated word is an everyday English compound, not a name: lower-case letters only,
    with a part that is a stopword or a combining form (one-off, up-to-date, built-in, non-interactive); a
    command's parts are names (apt-get, dpkg-reconfigure)."""
    parts = word.split("-")
    return len(parts) >= 2 and all(p.isalpha() and p.islower() for p in parts) \
        and any(p in _COMBINING or p in _english_stopwords() for p in parts)


@lru_cache(maxsize=1)
def _english_stopwords() -> frozenset[str]:
    from lambdarag.skills.store.tokenize import ENGLISH_STOPWORDS, load_words

    return frozenset(load_words(ENGLISH_STOPWORDS))


def named_things(query: str) -> tuple[str, ...]:
    """Returns what a question names as such, in order: quoted or `code` names, acronyms and code-like words
    (APT, apt-get, --human-readable, sources.list); never an everyday word (易读, 查看, view, current, one-off)."""
    found = [(m.start(), m.group(1) or m.group(2)) for m in _QUOTED.finditer(query)]
    found += [(m.start(), m.group(0)) for m in _CODE_LIKE.finditer(query) if not everyday(m.group(0))]
    found += [(m.start(), m.group(0)) for m in _CAMEL.finditer(query)]
    return tuple(dict.fromkeys(n.strip(" ,.?") for _, n in sorted(found) if len(n.strip(" ,.?")) >= 2))


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def joins(query: str, at: int) -> bool:
    """Returns whether the connective at `at` of a Chinese question joins two things: not when jieba reads it as part
    of a word with the character before it (参与, 求和, 相同), nor 跟 or 同 with the one after it (跟着, 同时: a verb,
    an adverb)."""
    from lambdarag.skills.store.tokenize import import_jieba

    start = 0
    for word in import_jieba().lcut(query):
        if start <= at < start + len(word):
            return len(word) == 1 or (at == start and word[0] not in "跟同")
        start += len(word)
    return True


def parallel(first: str, second: str) -> str:
    """Returns a Chinese comparison's second side cut after the head it shares with the first (文本安装程序 of
    图形安装程序和文本安装程序用起来有什么不同: two kinds of 安装程序): the words after the head are the question's
    verb, not the name."""
    for size in range(len(first), 1, -1):
        at = second.rfind(first[-size:])
        if at > 0 and at + size < len(second) and _CJK_RUN.fullmatch(first[-size:]):
            return second[:at + size]
    return second


def repicked(first: str, second: str) -> tuple[str, str]:
    """Returns a Chinese pair's sides without the verb of picking said before each (误差线选标准偏差和选标准误差: 标准偏差,
    标准误差): when the second opens with one (a jieba word of its own), the first is what follows its last saying of
    that verb, which jieba may glue to the word before it (线选, 时选); else the pair as it is."""
    from lambdarag.skills.store.tokenize import import_jieba

    verb = import_jieba().lcut(second)[0]
    at = first.rfind(verb)
    if not re.fullmatch(_ZH_PICK, verb) or at < 0 or len(first) - at - len(verb) < 2 or len(second) - len(verb) < 2:
        return first, second
    return first[at + len(verb):], second[len(verb):]


def picked(words: str) -> str:
    """Returns what a Chinese choice's words before 还是 pick: the words after its last verb of picking, a jieba word of
    its own with a modal before it if any (该装 of 办公电脑该装桌面版: 桌面版; never the 用 of 用户组), or of setting
    (`_ZH_SET`, jieba may cut 设成 in two: 曲线接点设成对称: 对称); none without
    such a verb (先查本地文件还是先查 DNS sets two steps side by side, not two things to pick)."""
    from lambdarag.skills.store.tokenize import import_jieba

    cut = import_jieba().lcut(words)
    verbs = [i for i, w in enumerate(cut) if re.fullmatch(r"(?:应该|该|要)?" + _ZH_PICK, w)
             or re.fullmatch(_ZH_SET, "".join(cut[max(i - 1, 0):i + 1])) or re.fullmatch(_ZH_SET, w)]
    rest = "".join(cut[verbs[-1] + 1:]) if verbs else ""
    return rest if len(rest) >= 2 else ""


_SHARED = re.compile(r"([a-z]+ing)\s+(.+)")
"""An operand opening on a verb's -ing form (declaring Breaks): the action when both operands open on it. Only that
form: a shared command word is part of each side's name (apt remove, apt purge), as the text writes it."""


_OBJECT = re.compile(r"^(?:the|a|an)\s+|s$")
"""An object's article and plural ending: "a message" and "messages" are one object."""


def operands(m: re.Match) -> list[tuple[int, str]]:
    """Returns the sides of a `_PAIR` match with where each starts, without an article (`_LEAD`) and without an
    -ing word both open on (`_SHARED`; between declaring Breaks and declaring Conflicts: the sides are Breaks and
    Conflicts; the verb they share is what is done with each, and a text says "declares Breaks", never the phrase);
    two -ing words done to one object are the sides themselves (between marking a message and tagging messages:
    marking, tagging; no text says either phrase).
    "Between A, B and C" has three sides: the commas list them, the connective joins the last two."""
    listed = [(m.start(1) + p.start(), p.group(0)) for p in re.finditer(r"[^,]+", m.group(1))] if m.group(1) else []
    sides = [(at, _LEAD.sub("", side.strip()).strip()) for at, side in
             listed + [(m.start(i), m.group(i)) for i in range(2, len(m.groups()) + 1) if m.group(i)]]
    heads = [_SHARED.fullmatch(side) for _, side in sides]
    if len(sides) == 2 and all(heads) and heads[0].group(1) == heads[1].group(1):
        return [(at, h.group(2)) for (at, _), h in zip(sides, heads)]
    if len(sides) == 2 and all(heads) and len({_OBJECT.sub("", h.group(2).lower()) for h in heads}) == 1:
        return [(at, h.group(1)) for (at, _), h in zip(sides, heads)]
    return sides


def query_entities(query: str) -> tuple[str, ...]:
    """Returns the named things of a question in order: quoted or `code` names, the two sides of a comparison
    (between X and Y, X vs Y, X和Y的区别), acronyms and code-like words (APT, apt-get, sources.list)."""
    found: list[tuple[int, str]] = []
    for m in _QUOTED.finditer(query):
        found.append((m.start(), m.group(1) or m.group(2)))
    for m in _PAIR.finditer(query):
        found += operands(m)
    for m in _REPEATED.finditer(query):
        found += [(m.start(i), _LEAD.sub("", m.group(i)).strip()) for i in (2, 3)]
    for m in (m for m in _ZH_PAIR.finditer(query) if joins(query, m.end(1))):
        first, second = repicked(m.group(1), m.group(2))
        found += [(m.end(1) - len(first), first), (m.end(2) - len(second), parallel(first, second))]
    for m in _ZH_EITHER.finditer(query):
        first = picked(m.group(1))
        found += [(m.end(1) - len(first), first), (m.start(2), parallel(first, m.group(2)))] if first else []
    for m in _CODE_LIKE.finditer(query):
        found.append((m.start(), m.group(0)))
    names = [name.strip(" ,.?") for _, name in sorted(found, key=lambda p: p[0])]
    return tuple(dict.fromkeys(n for n in names if len(n) >= 2))


RELATION_CUES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\b(?:part of|belongs? to|under which|which (?:section|chapter))\b|属于|在哪一?[章节部分]", re.I),
     ("contains",)),
    (re.compile(r"\b(?:links? to|see also)\b|链接|参见", re.I), ("links_to",)),
    (re.compile(r"\b(?:defin(?:e|es|ed|ition)|meaning of)\b|定义|是指|什么是", re.I), ("defines",)),
    (re.compile(r"\b(?:" + _STEERS + r")\b|\b(?:controlled|decided|determined|configured|set) by\b|(?:"
                + _ZH_STEERS + ")", re.I), ("configures",)),
)
"""(question cue, relation types of the generic graph it asks about)."""
ASKING = frozenset("which what who where section chapter part link links refer refers define defines definition "
                   "meaning control controls decide decides determine determines configure configures setting option "
                   "variable file 哪 哪个 哪些 属于 章节 定义 是指 什么 链接 控制 决定 配置 设置 选项 变量 文件".split())
"""Words of a relation question that name the relation rather than what it is about."""


def missing_things(query: str, context: str) -> list[str]:
    """Returns the named things of a question (`named_things`, and capitalised words inside an English sentence)
    the lower-cased context never mentions: its everyday words are no evidence of a gap."""
    from lambdarag.skills.sentences import proper_nouns

    asked = dict.fromkeys([*named_things(query), *proper_nouns(query)])
    return [name for name in asked if name.lower() not in context]


def admits_type(kind: str, query: str) -> bool:
    """Returns False for a comparison whose question pairs nothing (no and/or/than, 和/与/还是, both, two): a
    question no compare cue fired on is a comparison only if it sets two things side by side."""
    return kind != "compare" or bool(PAIRED.search(query))


RISK_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pricing", re.compile(
        r"费用|收费|价格|多少钱|报价|费率|规费|税费|缴费|付费|支付|退费|退款|发票|"
        r"赔偿|赔付|赔款|金额|保证金|押金|结算|报销|预算")),
    ("compliance", re.compile(
        r"合规|违规|能否|可否|是否(?:可以|允许|需要|应当|必须|合法)|允许|禁止|不得|"
        r"承担.{0,4}责任|免责|许可|审批|资质|隐私|个人信息|保密|合同|申报|强制性")),
    ("troubleshooting", re.compile(
        r"故障|报错|失败|无法|异常|告警|报警|排查|维修|事故|遇险|应急|险情|怎么处理|如何处置")),
    ("summary", re.compile(
        r"总结|概括|归纳|整理|梳理|综述|汇总|对比|区别|有哪些|都包括|主要内容|大纲|概述")),
)
"""The plan's risk categories and their Chinese cues, most cautious first: money, then judgement, then failures, then
overviews (a pack widens them with its own words, `widened`)."""

TABLE_CUE = re.compile(
    r"表中|表格|一览表|对照表|清单|明细|台账|第几档|哪一档|哪档|档次|哪一栏|哪栏|哪一列|哪一行|栏目|"
    r"多少钱|收费标准|费率|单价|标准是多少|限额是多少|对应的?(?:数额|金额|等级)")
"""The words with which a question asks for a row or field of a table."""


def widened(cues: tuple[tuple[str, re.Pattern[str]], ...],
            more: dict[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Returns `cues` with each category's pattern also matching the alternatives `more` gives it (a pack's words)."""
    return tuple((kind, re.compile(f"{cue.pattern}|{more[kind]}") if kind in more else cue) for kind, cue in cues)
