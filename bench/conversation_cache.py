"""A conversation's prompt reuse: the questions of one conversation asked in turn with a real chat server,
and for each answer the prompt tokens the server read against those it reused from its cache (llama.cpp's
`timings.cache_n` / `prompt_n`, or OpenAI-style `usage.prompt_tokens_details.cached_tokens`), the time to the
first token, and the estimate codeqa gave before it started (`AnswerStream.estimate`).

    OPENAI_BASE_URL=http://127.0.0.1:18080/v1 OPENAI_API_KEY=none CODEQA_MODEL=qwen2.5-coder-1.5b \
    python bench/conversation_cache.py --project streamlink-8.6.3 \
        --question "How does the HLS stream worker fetch segments?" --question "Where is it created?" ...

Projects are unpacked sdists under $CODEQA_BENCH_DATA, indexed as bench/qa_harness.py does. Prints a JSON
line per answer, then the sums.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_answers import open_project  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", required=True)
    parser.add_argument("--question", action="append", required=True, help="one turn; repeat in order")
    args = parser.parse_args(argv)
    if not os.environ.get("OPENAI_BASE_URL"):
        parser.error("set OPENAI_BASE_URL (and CODEQA_MODEL) to a chat server")
    from codeqa.answer import Answerer
    from codeqa.answer.conversation import Conversation
    from codeqa.query.retrieve import Retriever

    repo, name, _, settings = open_project(args.project)
    rows = []
    with Retriever.open(repo, settings) as retriever:
        answerer = Answerer(retriever, settings)
        conversation = Conversation()
        for turn, question in enumerate(args.question, 1):
            stream = answerer.stream(question, conversation)
            estimate = stream.estimate_seconds
            answer = stream.result()
            served = answer.served
            row = {"turn": turn, "question": question, "prompt_tokens": answer.prompt.tokens if answer.prompt else None,
                   "read_tokens": served.read_tokens if served else None,
                   "cached_tokens": served.cached_tokens if served else None,
                   "estimate_s": None if estimate is None else round(estimate, 1),
                   "first_token_s": None if answer.first_token_seconds is None else round(answer.first_token_seconds, 1),
                   "seconds": None if answer.seconds is None else round(answer.seconds, 1),
                   "verified": sum(1 for c in answer.citations if c.verified and not c.attributed), "error": answer.error}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({"turns": len(rows), "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in rows),
                      "read_tokens": sum(r["read_tokens"] or 0 for r in rows),
                      "cached_tokens": sum(r["cached_tokens"] or 0 for r in rows)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
