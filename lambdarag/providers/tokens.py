"""Token estimates per model family, so contexts are sized in the model's tokens, not in characters.

No tokenizer is loaded: a table of measured tokens per CJK character and per
other character by family is close enough to keep a prompt inside the
context window; `llm.tokensPerChar` overrides it for a model the table misses.
"""
from __future__ import annotations

from typing import Optional

from lambdarag.lazy_pattern import LazyPattern

FAMILIES: dict[str, tuple[float, float]] = {
    "smollm": (1.7, 0.3),
    "llama": (1.3, 0.27),
    "mistral": (1.4, 0.27),
    "phi": (1.4, 0.27),
    "gemma": (0.9, 0.25),
    "qwen": (0.7, 0.25),
    "deepseek": (0.7, 0.25),
    "glm": (0.7, 0.25),
    "gpt": (1.0, 0.25),
}
"""Model family (a substring of the model name) → (tokens per CJK character, tokens per other character).

SmolLM2's English-centred BPE splits most Chinese characters into two byte tokens; Chinese-trained
vocabularies (Qwen, DeepSeek, GLM) hold common two-character words as one token."""
UNKNOWN = (1.7, 0.3)
"""An unknown model is assumed to tokenize like the worst family in the table: a prompt sized for it fits."""
_CJK = LazyPattern(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def token_rates(model: Optional[str], per_cjk_char: Optional[float] = None) -> tuple[float, float]:
    """Returns (tokens per CJK character, tokens per other character) for `model`; `per_cjk_char` overrides the first."""
    name = (model or "").lower()
    rates = next((r for family, r in FAMILIES.items() if family in name), UNKNOWN)
    return (per_cjk_char, rates[1]) if per_cjk_char else rates


def estimate_tokens(text: str, model: Optional[str] = None, per_cjk_char: Optional[float] = None) -> int:
    """Returns an estimate of how many tokens `model` needs for `text`."""
    cjk_rate, other_rate = token_rates(model, per_cjk_char)
    cjk = len(_CJK.findall(text))
    return round(cjk * cjk_rate + (len(text) - cjk) * other_rate)


def chars_within(tokens: int, model: Optional[str] = None, per_cjk_char: Optional[float] = None) -> int:
    """Returns how many characters of Chinese text fit in `tokens` of `model` (0 when `tokens` ≤ 0)."""
    return max(0, int(tokens / token_rates(model, per_cjk_char)[0]))
