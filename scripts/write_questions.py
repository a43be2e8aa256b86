"""Write questions about a project's functions with a local LLM: training data for the question map.

    scripts/local_llm.sh serve 0.5b 18090 4096
    python scripts/write_questions.py SRC/P IDX/P OUT.jsonl [--per-project 35] [--seed 0] [--port 18090]

For functions and methods of the project's code (not tests, not constructors or reprs) with at least four
lines of logic, in an order the seed shuffles, the model (any OpenAI-compatible chat server; the recipe
used Qwen2.5-Coder-0.5B-Instruct through llama-server) is shown the code and three examples and writes one
question a developer new to the code might ask whose answer it is. A question is kept ("ok") when it ends
with a question mark, has 5-35 words, names no identifier of the code and is not an example's words
(`acceptable`). Each line appended to OUT: {"project", "question", "ok", "gold": [{"path", "start", "end"}],
"symbol", "seconds"}, what scripts/train_question_map.py reads (it skips lines that are not ok).
The index (IDX/P, `codeqa index SRC/P --index-dir IDX/P`) supplies the functions.

The bundled map was trained on questions about TRAINING_PROJECTS (sdists from PyPI that no benchmark here
uses); codeqa/adapters/README.md has the whole recipe.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from codeqa.config import Settings  # noqa: E402
from codeqa.query.lead import SETUP_METHODS, logic_lines  # noqa: E402
from codeqa.roles import path_role  # noqa: E402
from codeqa.store import open_store  # noqa: E402

TRAINING_PROJECTS = ("diskcache==5.6.3", "humanize==4.11.0", "itsdangerous==2.2.0", "markdown==3.7",
                     "more-itertools==10.5.0", "pyparsing==3.2.0", "schedule==1.2.2", "sortedcontainers==2.4.0",
                     "sqlparse==0.5.1", "tabulate==0.9.0", "toolz==1.0.0", "urllib3==2.2.3")
SYSTEM = ("You write the questions developers new to a codebase ask about it. A question asks how something "
          "behaves or what happens, in plain words, without naming any function, class or variable of the code.")
SHOTS = [
    ("tenacity", "tenacity/wait.py", '''    def __call__(self, retry_state: "RetryCallState") -> float:
        try:
            exp = self.exp_base ** (retry_state.attempt_number - 1)
            result = self.multiplier * exp
        except OverflowError:
            return self.max
        return max(max(0, self.min), min(result, self.max))''',
     "How does exponential backoff compute how long to wait before the next attempt?"),
    ("cachetools", "src/cachetools/__init__.py", '''    def popitem(self):
        """Remove and return the `(key, value)` pair least recently used."""
        try:
            key = next(iter(self.__order))
        except StopIteration:
            raise KeyError("%s is empty" % type(self).__name__) from None
        else:
            return (key, self.pop(key))''',
     "How does the least-recently-used cache choose which entry to evict?"),
    ("bottle", "bottle.py", '''def cookie_decode(data, key, digestmod=None):
    """ Verify and decode an encoded string. Return an object or None."""
    depr(0, 13, "cookie_decode() will be removed soon.", "Do not use this API directly.")
    data = tob(data)
    if cookie_is_encoded(data):
        sig, msg = data.split(tob('?'), 1)
        digestmod = digestmod or hashlib.sha256
        hashed = hmac.new(tob(key), msg, digestmod=digestmod).digest()
        if _lscmp(sig[1:], base64.b64encode(hashed)):
            return pickle.loads(base64.b64decode(msg))
    return None''',
     "How is a signed cookie verified and decoded when reading it from the request?"),
]
ASK = "Project: {project}. File: {path}.\n```python\n{code}\n```\nWrite one question whose answer is this code. One line."


def acceptable(question: str, name: str, qualified_name: str, code: str) -> bool:
    """A question worth training on: a question of 5-35 words that names no identifier of the code (a plain
    word such as "cache" may be asked about, `Cache.pop` or `_row_insert` not) and does not borrow two
    words in a row from an example that the code does not have ("signed cookie" for a cache's insert)."""
    names = {n for n in (name, *qualified_name.split(".")) if "_" in n.strip("_") or re.search(r"[a-z][A-Z]", n)
             or n.startswith("__")}
    if not question.endswith("?") or not 5 <= len(question.split()) <= 35 or "`" in question or "(" in question \
            or any(n in question for n in names):
        return False
    words = re.findall(r"[a-z]+", question.lower())
    code_words = set(re.findall(r"[a-z]+", code.lower()))
    for *_, shot in SHOTS:
        shot_words = re.findall(r"[a-z]+", shot.lower())
        shared = set(zip(words, words[1:])) & set(zip(shot_words, shot_words[1:]))
        if any(not {w1, w2} <= code_words and len(w1) > 3 and len(w2) > 3 for w1, w2 in shared):
            return False
    return True


def chat(port, messages):
    body = json.dumps({"model": "m", "messages": messages, "temperature": 0.2, "max_tokens": 48, "seed": 0,
                       "cache_prompt": True}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.load(r)["choices"][0]["message"]["content"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="the project's source folder")
    ap.add_argument("index", type=Path, help="its index (codeqa index REPO --index-dir INDEX)")
    ap.add_argument("out", type=Path, help="JSON lines, appended to")
    ap.add_argument("--per-project", type=int, default=40, help="stop after this many acceptable questions")
    ap.add_argument("--seed", type=int, default=0, help="shuffles the order the functions are asked about")
    ap.add_argument("--port", type=int, default=18090, help="the chat server on 127.0.0.1")
    a = ap.parse_args()
    settings = Settings.load(index_dir=a.index)
    store = open_store(a.repo.resolve(), settings)
    project = a.repo.name.rsplit("-", 1)[0]
    cands, files = [], {}
    for s in store.all_symbols():
        if s.kind not in ("function", "method") or path_role(s.path) != "code" or s.name in SETUP_METHODS:
            continue
        if s.path not in files:  # each file read once, not once a function
            files[s.path] = (a.repo / s.path).read_text(errors="replace").splitlines()
        lines = files[s.path][s.start_line - 1:s.end_line]
        text = "\n".join(lines)
        if logic_lines(text) >= 4 and len(lines) <= 150:
            cands.append((s, "\n".join(lines[:40])))
    store.close()
    random.Random(a.seed).shuffle(cands)
    shots = [{"role": "system", "content": SYSTEM}]
    for p, path, code, q in SHOTS:
        shots += [{"role": "user", "content": ASK.format(project=p, path=path, code=code)}, {"role": "assistant", "content": q}]
    done = 0
    with a.out.open("a") as out:
        for s, code in cands:
            if done >= a.per_project:
                break
            t = time.time()
            text = chat(a.port, shots + [{"role": "user", "content": ASK.format(project=project, path=s.path, code=code)}])
            q = text.strip().splitlines()[0].strip().strip('"') if text.strip() else ""
            ok = acceptable(q, s.name, s.qualified_name, code)
            out.write(json.dumps({"project": a.repo.name, "question": q, "ok": ok, "symbol": s.qualified_name,
                                  "gold": [{"path": s.path, "start": s.start_line, "end": s.end_line}],
                                  "seconds": round(time.time() - t, 1)}) + "\n")
            out.flush()
            done += ok
            print(f"{time.time() - t:5.1f}s {'ok ' if ok else 'BAD'} {s.qualified_name}: {q}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
