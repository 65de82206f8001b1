"""Rule-based and LLM-based extraction of entities and relations from statutes.

Rules read what Chinese statutes state in fixed forms: the title, header lines
(``2021年4月29日 第十三届全国人民代表大会常务委员会第二十八次会议修订``,
``国务院令第561号公布``), the legal basis (``根据《…》，制定本条例`` → 依据),
competent authorities (``国务院交通运输主管部门主管全国…工作`` → 主管), agency → agency
relations (上级, 隶属, 设立, 监督指导; see `hierarchy`),
《…》 citations (→ 引用) and chapter titles (→ 涉及). The LLM path returns the
same records, validated, with relative dates made absolute from the
document's own date. `fact_extract` reuses `extract_relations`/`extract_entities`.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Optional, Union

from pydantic import Field

from lambdarag.errors import InvalidOutput
from lambdarag.lam import Reply

from lambdarag.skills.store.corpus import Document
from lambdarag.skills.store.graph import EntityRecord, Event, Label, RelationRecord, Version
from lambdarag.skills.store.records import Relation
from lambdarag.skills.store.graph import DocFacts
from lambdarag.skills.profile import LLMReading

from .hierarchy import agency_relations
from .names import short_name

SUPPORT_CUES = {"主管": ("主管", "负责", "管理", "监督"), "依据": ("根据", "依据", "依照"),
                "发布机构": ("通过", "公布", "发布", "批准", "制定", "修订", "修正"), "引用": ("《",),
                "涉及": ("",), "规定": ("规定", "应当", "不得", "可以")}
"""Words one of which a cited sentence must contain to state a relation of that type (skills.support)."""
NAME_RULE = "法律名称去掉“中华人民共和国”和书名号，只列问题里出现或明确指代的，不要补充。"
"""How the LLM's entity prompt asks it to write the names of laws."""
RULES_VERSION = 2   # bump when the rules change so that incremental compiles redo every document

# relation types
ISSUER, BASIS, AUTHORITY, CITES, TOPIC = "发布机构", "依据", "主管", "引用", "涉及"
EXPAND_ORDER = {TOPIC: 0, AUTHORITY: 1, BASIS: 2, CITES: 3}
"""The relations whose ends graph expansion adds to a question first: topics, then agencies, bases, citations."""

DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
ARTICLE = re.compile(r"^\s*(第[一二三四五六七八九十百千零〇\d]+条)")
CHAPTER = re.compile(r"^#{1,6}\s*(第[一二三四五六七八九十百零〇\d]+[章编节])\s*(.*)$")
QUOTED = re.compile(r"《([^《》]{2,60})》")
SELF_WORDS = ("法", "条例", "实施条例", "实施细则", "细则", "规定", "办法", "规则", "解释", "决定", "条约", "规程")
BASIS_RE = re.compile(r"根据([^。；]{1,200}?)[，,]?\s*(?:结合[^，。；]{1,30}[，,]\s*)?制定本(?:" + "|".join(
    sorted(SELF_WORDS, key=len, reverse=True)) + r")(?=[。，；、\s]|$)")
AGENCY_TAIL = (r"(?:主管部门|主管机关|管理部门|管理机构|行政部门|行政机关|人民政府|海事管理机构|渔政渔港监督管理机构"
               r"|部门|机关|机构|总署|总局|委员会|局|部|署|院)")
AUTHORITY_RE = re.compile(
    r"(?:^|(?<=[。；，：\s])|(?<=条))\s*(?P<agency>[\u4e00-\u9fa5、]{2,30}?" + AGENCY_TAIL + r")"
    r"(?P<manner>统一|依法|(?:依照|按照|根据)[^，。；]{0,16}?)?(?:具体)?"
    r"(?P<verb>主管|负责)(?!人)(?P<obj>[^。；]{2,120})")
GENERIC_AGENCIES = {"有关部门", "其他有关部门", "相关部门", "有关主管部门", "主管部门", "主管机关", "有关机关",
                    "其他部门", "各有关部门", "有关行政部门", "有关机构", "其他有关机关", "部门", "机关", "机构"}
GENERIC_TOPICS = {"总则", "附则", "法律责任", "罚则", "监督管理", "监督检查", "一般规定", "其他规定", "奖励与处罚",
                  "附录", "其他", "补充规定", "奖励和惩罚", "奖惩", "附 则", "总 则"}
FOLDER_TYPES = {"行政法规": "regulation", "司法解释": "judicial_interpretation", "部门规章": "departmental_rule",
                "宪法": "constitution"}
BODIES = ("全国人民代表大会常务委员会", "全国人民代表大会", "国务院", "最高人民法院", "最高人民检察院",
          "中央军事委员会")
TYPE_NAMES = {"law": "法律", "regulation": "行政法规/规章", "judicial_interpretation": "司法解释",
              "departmental_rule": "部门规章", "constitution": "宪法", "agency": "机关/部门", "topic": "主题",
              "treaty": "条约/公约", "unknown": "未分类"}
"""How a wiki page spells the entity types this extraction gives."""
PAGE_SECTIONS = (("主管与职责", "主管", "head"), ("发布机构", "发布机构", "tail"), ("立法依据", "依据", "tail"),
                 ("据此制定的法规", "依据", "head"), ("涉及主题", "涉及", "tail"), ("引用", "引用", "tail"),
                 ("被引用", "引用", "head"))
"""The sections of a statute's wiki page: who is in charge of it, who issued it, what it rests on and what rests on
it, its topics, what it cites and what cites it."""


def iso(m: re.Match) -> str:
    return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"


def entity_type(name: str) -> str:
    """Returns the entity type a name implies by its form (法 → law, 条例/办法 → regulation, …)."""
    name = short_name(name)
    if name.startswith(("最高人民法院", "最高人民检察院")) and not name.endswith(("法院", "检察院")):
        return "judicial_interpretation"
    if name.endswith(("公约", "协定", "议定书", "条约")):
        return "treaty"
    if name.endswith("法") or re.search(r"法修正案", name):
        return "law"
    if name.endswith(("条例", "规定", "办法", "细则", "规则", "决定", "规程", "解释")):
        return "regulation"
    if re.search(AGENCY_TAIL + "$", name) or name in BODIES:
        return "agency"
    return "topic"


def body_of(text: str) -> str:
    """Returns the issuing body named in a header line, or ''."""
    if "国务院令" in text:
        return "国务院"
    for body in BODIES:
        if body in text:
            return body
    m = re.search(r"([\u4e00-\u9fa5]{2,16}?(?:部|局|委员会|总署|院|政府))(?:发布|公布|批准)", text)
    return m.group(1) if m else ""


def header_events(headers: tuple[str, ...]) -> list[Event]:
    """Returns one event per dated header line (adopted, promulgated, revised, amended, in force)."""
    events = []
    for line in headers:
        line = line.strip()
        m = DATE.match(line)
        if not m:
            continue
        rest = line[m.end():].strip()
        action = next((a for a in ("修订", "修正", "通过", "公布", "发布", "批准", "施行") if a in rest[-12:]), "")
        action = action or next((a for a in ("修订", "修正", "通过", "公布", "发布", "批准", "施行") if a in rest), "")
        events.append(Event(date=iso(m), action=action, body=body_of(rest), note=rest.rstrip("　 ")))
    return events


def parse_text(text: str, source: str = "") -> Document:
    """Returns a `Document` from raw statute markdown (title line, header lines up to ``<!-- INFO END -->``)."""
    lines = text.splitlines()
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), "")
    head, _, body = text.partition("<!-- INFO END -->")
    if not body:
        head, body = "", text
    headers = tuple(ln.strip() for ln in head.splitlines() if ln.strip() and not ln.startswith("#"))
    m = re.search(r"\((\d{4}-\d{2}-\d{2})\)", source)
    return Document(id=source or title, source=source or title, title=title, text=body, headers=headers,
                    date=m.group(1) if m else None, family=short_name(title), kind="statute")


def doc_type(doc: Document) -> str:
    """Returns the entity type of the document's own entity (its folder first, then its title)."""
    folder = doc.source.split("/", 1)[0]
    return FOLDER_TYPES.get(folder) or ("law" if entity_type(doc.title) == "topic" else entity_type(doc.title))


def basis_names(clause: str) -> list[str]:
    """Returns the laws a ``根据…制定本…`` clause names: 《quoted》 ones, else bare names such as 宪法, 海关法."""
    quoted = [short_name(q) for q in QUOTED.findall(clause)]
    if quoted:
        return quoted
    clause = re.sub(r"[(（][^)）]*[)）]", "", clause)
    names = []
    for part in re.split(r"[、和及与]|以及|其他|等", clause):
        part = re.sub(r"(的)?(有关)?(规定|法律|法规)*$", "", part.strip()).strip("的")
        if part.endswith("法") and 2 <= len(part) <= 20:
            names.append(short_name(part))
    return names


def articles(text: str, skip: frozenset[str] = frozenset()):
    """Yields (chapter label, chapter title, article label, paragraph) for each body line not in `skip`."""
    chapter = title = article = ""
    for line in text.splitlines():
        line = line.strip().strip("\u200b\u3000")
        if not line or line in skip:
            continue
        m = CHAPTER.match(line)
        if m:
            chapter, title, article = m.group(1), re.sub(r"\s+", "", m.group(2)), ""
            continue
        if line.startswith("#"):
            continue
        a = ARTICLE.match(line)
        if a:
            article = a.group(1)
        yield chapter, title, article, line


def extract_document(doc: Document) -> DocFacts:
    """Returns the entities and relations the rules find in one document."""
    name = short_name(doc.title or doc.family)
    label = Label(department=doc.department, security_level=doc.security_level)
    src = {doc.source: label}
    events = header_events(doc.headers)
    date = doc.date or (events[-1].date if events else None)
    me = EntityRecord(name=name, type=doc_type(doc), sources=src,
                      aliases=tuple(a for a in {doc.title, doc.family} if a and a != name),
                      versions=(Version(date=date, source=doc.source, title=doc.title, events=tuple(events)),))
    facts = DocFacts(source=doc.source, entity=name, entities=[me])
    seen: set[tuple[str, str]] = set()

    def rel(relation: str, tail: str, section: str, description: str, head: str = name, tail_type: str = "") -> None:
        head, tail = short_name(head), short_name(tail)
        if not tail or tail == head or (head, relation, tail) in seen:
            return
        seen.add((head, relation, tail))
        for end in (head, tail):
            if end != name:
                kind = tail_type if end == tail and tail_type else entity_type(end)
                facts.entities.append(EntityRecord(name=end, type=kind, sources=src))
        facts.relations.append(RelationRecord(head=head, relation=relation, tail=tail, source=doc.source,
                                              section=section, description=description[:160], origin="rule",
                                              department=doc.department, security_level=doc.security_level))

    if events:
        first = next((e for e in events if e.body), None)
        if first:
            rel(ISSUER, first.body, "", f"{first.date} {first.note}", tail_type="agency")
    family_names = {name, short_name(doc.family or name)}
    basis_done: set[str] = set()
    for chapter, chapter_title, article, line in articles(doc.text, frozenset(h.strip("\u3000 ") for h in doc.headers if DATE.match(h))):
        where = article or chapter
        if chapter_title and chapter_title not in GENERIC_TOPICS and len(chapter_title) <= 24:
            rel(TOPIC, chapter_title, chapter, f"{chapter} {chapter_title}", tail_type="topic")
        for m in BASIS_RE.finditer(line):
            for target in basis_names(m.group(1)):
                if target not in family_names:
                    basis_done.add(target)
                    rel(BASIS, target, where, m.group(0))
        for m in AUTHORITY_RE.finditer(line):
            agency = re.sub(r"^(?:.*设立|.*规定|.*由|向|并|经|应当|可以|和|及|或者)", "", m.group("agency"))
            obj = m.group("obj")
            if agency in GENERIC_AGENCIES or not re.search(r"工作|监督管理|管理|事务|事项", obj) \
                    or re.match(r"[^，。；]{0,24}的(?:部门|机构)", obj) \
                    or re.search(r"负责人|人员$", agency):
                continue
            rel(AUTHORITY, name, where, (agency + m.group("verb") + obj)[:160], head=agency)
            facts.entities.append(EntityRecord(name=agency, type="agency", sources=src))
        for head, relation, tail, text in agency_relations(line):
            rel(relation, tail, where, text, head=head, tail_type="agency")
        for q in QUOTED.findall(line):
            target = short_name(q)
            if target not in family_names and target not in basis_done and entity_type(target) != "topic":
                rel(CITES, target, where, line[:120])
    return facts


def extract_relations(document_or_text: Union[Document, str], *, source: str = "") -> list[Relation]:
    """Returns the relations the rules find in a document (or raw statute markdown)."""
    doc = document_or_text if isinstance(document_or_text, Document) else parse_text(document_or_text, source)
    return [r.to_relation() for r in extract_document(doc).relations]


def extract_entities(text: str) -> list[tuple[str, str]]:
    """Returns (name, type) for the laws, regulations and agencies a piece of text names explicitly."""
    found: dict[str, str] = {}
    for q in QUOTED.findall(text):
        name = short_name(q)
        if entity_type(name) != "topic":
            found.setdefault(name, entity_type(name))
    for m in AUTHORITY_RE.finditer(text):
        if m.group("agency") not in GENERIC_AGENCIES:
            found.setdefault(m.group("agency"), "agency")
    return list(found.items())


# -- time normalisation ------------------------------------------------------------
def normalise_time(text: str, date: Optional[str]) -> str:
    """Returns `text` with relative time expressions made absolute from the document's date (YYYY-MM-DD)."""
    if not date:
        return text
    d = dt.date.fromisoformat(date)
    y, full = d.year, f"{d.year}年{d.month}月{d.day}日"
    rules = [
        (r"自(?:公布|发布|印发)之日起(?:施行|生效)", f"自{full}起施行"),
        (r"近年来", f"{y - 3}年至{y}年"),
        (r"前年", f"{y - 2}年"),
        (r"去年", f"{y - 1}年"),
        (r"今年", f"{y}年"),
        (r"明年", f"{y + 1}年"),
        (r"现行有效", f"截至{full}现行有效"),
        (r"本月", f"{y}年{d.month}月"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text)
    return text


# -- LLM extraction ------------------------------------------------------------
class LLMEntity(Reply):
    name: str = Field(min_length=1, max_length=60)
    type: str = "topic"


class LLMRelation(Reply):
    head: str = Field(min_length=1, max_length=60)
    relation: str = Field(min_length=1, max_length=12)
    tail: str = Field(min_length=1, max_length=60)
    description: str = Field("", max_length=300)
    section: str = ""


class LLMExtraction(Reply):
    """What the LLM must return for one document."""

    entities: list[LLMEntity] = Field(default_factory=list, max_length=60)
    relations: list[LLMRelation] = Field(default_factory=list, max_length=80)


PROMPT = """你是法规知识图谱的构建助手。请从下面的法规文本中抽取实体和关系。
实体类型：law（法律）、regulation（行政法规/规章）、judicial_interpretation（司法解释）、agency（机关/部门）、topic（主题）。
关系类型示例：发布机构、依据、主管、引用、涉及、规定、修订。关系的 description 用一句话说明依据的条文内容。

## 时间规范化要求
文件发布日期：{date}
所有相对时间表述必须根据文件发布日期换算为绝对时间，例如：
- "自发布之日起施行" → "自{full}起施行"
- "去年" → "{last}年"；"近年来" → "{recent}年至{year}年"
- "现行有效" → "截至{full}现行有效"；"经最新修订" → 写出具体修订年份

## 文件
标题：{title}
{headers}

{text}"""


def publication_date(doc: Document) -> Optional[str]:
    """Returns the date `doc` was published: its own, else the last dated event of its header lines."""
    return doc.date or next((e.date for e in reversed(header_events(doc.headers)) if e.date), None)


def llm_prompt(doc: Document, max_chars: int = 6000) -> str:
    """Returns the prompt asking for `doc`'s entities and relations, with the publication date relative times are
    made absolute by, and the JSON schema of `LLMExtraction`."""
    date = publication_date(doc)
    d = dt.date.fromisoformat(date) if date else None
    prompt = PROMPT.format(
        date=date or "未知", title=doc.title, headers="\n".join(doc.headers), text=doc.text[:max_chars],
        full=f"{d.year}年{d.month}月{d.day}日" if d else "发布日期", last=d.year - 1 if d else "发布年份-1",
        recent=d.year - 3 if d else "发布年份-3", year=d.year if d else "发布年份")
    schema = LLMExtraction.model_json_schema()
    return prompt + f"\n\n只输出一个符合以下 JSON Schema 的 JSON 对象（填入内容，不要照抄 Schema）：\n" \
                    f"{json.dumps(schema, ensure_ascii=False)}"


def llm_facts(doc: Document, out: LLMExtraction) -> DocFacts:
    """Returns the LLM's entities and relations for `doc` as facts, names shortened and times made absolute;
    raises `InvalidOutput` when the reply names nothing."""
    if not (out.entities or out.relations):
        raise InvalidOutput("LLM reply names no entities and no relations")
    date = publication_date(doc)
    name = short_name(doc.title or doc.family)
    src = {doc.source: Label(department=doc.department, security_level=doc.security_level)}
    facts = DocFacts(source=doc.source, entity=name)
    for e in out.entities:
        facts.entities.append(EntityRecord(name=short_name(e.name), type=e.type, sources=src, origin="llm"))
    for r in out.relations:
        head, tail = short_name(r.head), short_name(r.tail)
        if head == tail:
            continue
        facts.relations.append(RelationRecord(
            head=head, relation=r.relation, tail=tail, source=doc.source, section=r.section,
            description=normalise_time(r.description, date)[:300], origin="llm", confidence=0.7,
            department=doc.department, security_level=doc.security_level))
    return facts


LLM_READING = LLMReading(prompt=llm_prompt, reply=LLMExtraction, facts=llm_facts)
"""How an LLM reads a statute's facts when the wiki is compiled with one."""


__all__ = ["DocFacts", "extract_document", "extract_relations", "extract_entities", "llm_prompt", "llm_facts",
           "LLM_READING", "normalise_time", "parse_text", "entity_type", "header_events"]


def answer_facts(hit: Any, text: str) -> tuple[list[Relation], list[tuple[str, str]]]:
    """Returns the relations and (entity, type) pairs the rules read in a cited passage (`hit`: its chunk)."""
    doc = Document(id=hit.chunk_id, source=hit.source, title=hit.title, text=text, date=hit.date, kind="statute")
    return extract_relations(doc), extract_entities(text)
