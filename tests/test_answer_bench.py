"""bench/answers.py scores what its docstring says: normalised containment, compare sides, false refusals, length."""
from bench.answers import holds, length, normalise, reasons, score, summarise

EN_REFUSAL = "The documents do not answer this question. They do not mention: readable."


def test_normalise_folds_width_case_markers_markdown_and_whitespace():
    assert normalise("ＡＰＴ keeps **state** in [extended_states](a.md) [source: 02.05.md#x] [3]") == \
        "aptkeepsstateinextended_states"
    assert normalise("| -h | show sizes\nin a *readable* form |") == "-hshowsizesinareadableform"
    assert normalise("- 每名旅客不超过4万元 [来源: 规定.md#第三条]") == "每名旅客不超过4万元"


def test_an_evidence_sentence_counts_without_its_trailing_punctuation_and_only_whole():
    evidence = ["旅客人身伤亡的，每名旅客不超过4万元人民币；"]
    assert holds("根据现有资料：\n- 旅客人身伤亡的，每名旅客不超过4万元人民币[来源: a.md#第三条]", evidence)
    assert not holds("- 每名旅客不超过4万元人民币[来源: a.md#第三条]", evidence)
    assert holds("| ls -A | list almost all |", ['| ls -A | list almost all |'])
    split = "- 中国船级社是船舶检验机构[来源: a.md#第四条]\n- 经船检局授权，可以代行法定检验。[来源: a.md#第四条]"
    assert holds(split, ["中国船级社是船舶检验机构；经船检局授权，可以代行法定检验。"])


COMPARE = {"qid": "c", "type": "compare", "evidence": ["Wayland is same-host.", "X is network-capable."],
           "sides": [{"name": "Wayland", "evidence": ["Wayland is same-host."], "relevant": ["gui/07.02.md"]},
                     {"name": "X", "evidence": ["X is network-capable."], "relevant": ["x/07.09.md"]}]}


def test_compare_needs_every_sides_evidence_and_a_citation_of_each_sides_file():
    answer = "- Wayland is same-host.[source: 07.02.md#GUI]\n- X is network-capable.[source: 07.02.md#GUI]"
    one_file = score(COMPARE, answer, [{"source": "07.02.md"}], [])
    assert one_file["evidence"] and one_file["sides"] == {"Wayland": True, "X": False}
    assert not one_file["compare_all_sides"]
    both = score(COMPARE, answer, [{"source": "gui/07.02.md"}, {"source": "07.09.md"}], [])
    assert both["compare_all_sides"] and not both["refused"]


def test_a_refusal_is_false_only_when_a_top_five_hit_holds_the_evidence():
    q = {"qid": "f", "type": "fact", "evidence": ["-h, --human-readable print sizes in powers of 1024"]}
    hit = {"text": "Options:\n-h, --human-readable print sizes in powers of 1024 (e.g., 1023M)"}
    other = [{"text": "df reports file system disk space usage."}] * 5
    first = score(q, EN_REFUSAL, [], [hit, *other])
    assert first["refused"] and first["false_refusal"] and first["evidence_in_top5"]
    sixth = score(q, EN_REFUSAL, [], [*other, hit])
    assert sixth["refused"] and not sixth["false_refusal"] and sixth["evidence_in_top8"]
    uncited = score(q, "Not found in the documents: readable.", [], [hit])
    assert uncited["refused"] and uncited["false_refusal"]
    cited = score(q, "- -h, --human-readable print sizes in powers of 1024[source: df.md#Options]",
                  [{"source": "df.md"}], [hit])
    assert cited["evidence"] and not cited["refused"] and not cited["false_refusal"]


def test_length_counts_cited_claims_and_their_sentences_not_the_scaffolding():
    answer = ("From the documents:\nOn “apt”:\n- APT is a front end. It uses dpkg.[source: a.md#x]\n"
              "- dpkg installs .deb files[source: b.md#y]\nNot found in the documents: rpm.")
    assert length(answer) == {"points": 2, "sentences": 3}
    assert length(EN_REFUSAL) == {"points": 0, "sentences": 0}


def test_summaries_are_shares_means_and_maxima_with_exit_codes():
    rows = [{"exit_code": 0, "scores": score(COMPARE, "- Wayland is same-host.[source: 07.02.md#a]",
                                             [{"source": "07.02.md"}], [])},
            {"exit_code": 3, "scores": score(COMPARE, EN_REFUSAL, [], [{"text": "X is network-capable."}])}]
    got = summarise(rows)
    assert got["n"] == 2 and got["evidence"] == 0.5 and got["compare_all_sides"] == 0.0
    assert got["refused"] == 0.5 and got["false_refusal"] == 0.5 and got["exit_0"] == 0.5
    assert got["sentences"] == {"mean": 0.5, "max": 1}


def test_a_side_only_named_counts_when_its_own_block_or_a_claim_naming_it_cites_a_relevant_file():
    q = {"qid": "c", "type": "compare", "evidence": ["Depends must be installed."], "relevant": ["02.01.md"],
         "named": ["Depends", "Pre-Depends"]}
    answer = ("From the documents:\nOn “Depends”:\n- Depends must be installed.[source: 09.md#other]\n"
              "On “Pre-Depends”:\n- Pre-Depends installs first.[source: 02.01.md#deps]")
    got = score(q, answer, [{"source": "02.01.md"}, {"source": "09.md"}], [])
    assert got["sides"] == {"Depends": False, "Pre-Depends": True} and not got["compare_all_sides"]
    both = answer.replace("09.md#other", "02.01.md#deps")
    assert score(q, both, [{"source": "02.01.md"}], [])["compare_all_sides"]


def test_a_routing_record_becomes_an_answer_question_of_its_passages_sentences():
    from bench.domain_answers import as_answer_question

    r = {"qid": "c03", "type": "compare", "query": "q", "relevant": ["a.md"], "named": ["x", "y"],
         "evidence": {"a.md": "If set to summary, it says how many leaks occurred. If set to full, each is shown. Yes."}}
    q = as_answer_question(r)
    assert q["evidence"] == ["If set to summary, it says how many leaks occurred.", "If set to full, each is shown."]
    assert q["named"] == ["x", "y"] and q["relevant"] == ["a.md"]


def test_each_fallback_is_kept_with_its_reason():
    fallbacks = [{"term": "extractive_answer", "path": "extractive_answer",
                  "reason": "evidence ranked without sentence vectors: the deadline left no time to embed the 9 "
                            "sentences scored"}, {"term": "router", "path": "fact", "reason": "no rule matched"}]
    assert reasons(fallbacks) == [
        "extractive_answer: evidence ranked without sentence vectors: the deadline left no time to embed the 9 "
        "sentences scored", "router: no rule matched"]
