"""How many calls a served local model writes under BFCL's own prompt-mode system prompt.

The README's BFCL comparison uses this to tell the harness from the model: the same cases, the
same server, but BFCL's instructions (calls as a Python list) instead of xpeval's template's
tools section. It counts the calls a reply names (`name(` for each offered tool); it does not
score arguments. Needs `bfcl-eval` (for the prompt text) and a running `xpeval local-model serve`.

Usage: python bfcl/prompt_probe.py CATEGORY [--port 18181]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import httpx2

CASES = Path(__file__).parent / "cases"


def main() -> int:
    from bfcl_eval.constants.default_prompts import _DEFAULT_SYSTEM_PROMPT  # the prompt BFCL uses

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("category", help="parallel, irrelevance, ... (bfcl/cases/bfcl_<category>.jsonl)")
    parser.add_argument("--port", type=int, default=18181)
    args = parser.parse_args()
    cases = [json.loads(line) for line in (CASES / f"bfcl_{args.category}.jsonl").read_text().splitlines()]
    expected_count = several = 0
    for case in cases:
        system = _DEFAULT_SYSTEM_PROMPT.format(functions=json.dumps(case["tools"]))
        body = {
            "messages": [{"role": "system", "content": system}, *case["messages"]],
            "max_tokens": 200,
            "temperature": 0,
        }
        url = f"http://127.0.0.1:{args.port}/v1/chat/completions"
        reply = httpx2.post(url, json=body, timeout=300, trust_env=False).json()
        text = reply["choices"][0]["message"]["content"] or ""
        calls = sum(len(re.findall(re.escape(tool["name"]) + r"\s*\(", text)) for tool in case["tools"])
        expected_count += calls == len(case["expected"]["calls"])
        several += calls >= 2
    print(
        f"{args.category}: {expected_count}/{len(cases)} replies with the expected number of calls, "
        f"{several}/{len(cases)} with two or more"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
